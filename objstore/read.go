package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/cairnstore/cairn/objstore/blockcache"
	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Head returns the description of the current version of bucket/key, or of
// opt.VersionID. ErrNoSuchKey when the key has no current version,
// ErrNoSuchVersion for an unknown version id; a delete marker addressed by
// version id is returned with DeleteMarker set and ErrDeleteMarker, and
// so is a current one, the error then ErrNoSuchKey as well.
func (s *Store) Head(ctx context.Context, bucket, key string, opt GetOptions) (ObjectInfo, error) {
	if err := s.awaitRead(ctx, bucket, key, opt); err != nil {
		return ObjectInfo{}, err
	}
	var info ObjectInfo
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		v, latest, err := lookupVersion(tx, bucket, key, opt.VersionID)
		if v != nil {
			info = toInfo(bucket, key, v, latest)
		}
		if err != nil {
			return err
		}
		if v.DeleteMarker {
			return fmt.Errorf("%w: %s %s", ErrDeleteMarker, key, v.VersionID)
		}
		return nil
	})
	return info, err
}

// awaitRead waits, before a read of bucket/key, for the key's pending
// puts (the current version may be one of them), unless opt.Committed.
func (s *Store) awaitRead(ctx context.Context, bucket, key string, opt GetOptions) error {
	if opt.Committed {
		return nil
	}
	return s.pending.waitKey(ctx, bucket, key)
}

// lookupVersion finds the version a read addresses and says whether it is
// the newest one. A key whose newest version is a delete marker returns
// the marker with its error (see currentMarker).
func lookupVersion(tx meta.Tx, bucket, key, vid string) (*meta.Version, bool, error) {
	if err := requireBucket(tx, bucket); err != nil {
		return nil, false, err
	}
	if err := ValidateKey(key); err != nil {
		return nil, false, err
	}
	if vid == "" {
		v, err := currentVersion(tx, bucket, key)
		if err != nil {
			return nil, false, err
		}
		if v == nil {
			return currentMarker(tx, bucket, key)
		}
		return v, true, nil
	}
	v, err := findVersion(tx, bucket, key, vid)
	if err != nil {
		return nil, false, err
	}
	newest := tx.Cursor(meta.Versions)
	k, _ := newest.Seek(meta.VersionPrefix(bucket, key))
	_, _, seq, _ := meta.SplitVersionKey(k)
	return v, seq == v.Seq, newest.Err()
}

// currentMarker is lookupVersion's answer for a key without a current
// version: ErrNoSuchKey, and when the newest version is a delete marker,
// the marker with an error that is ErrDeleteMarker too (S3 answers the
// read 404 with the marker's headers).
func currentMarker(tx meta.Tx, bucket, key string) (*meta.Version, bool, error) {
	prefix := meta.VersionPrefix(bucket, key)
	c := tx.Cursor(meta.Versions)
	k, raw := c.Seek(prefix)
	if err := c.Err(); err != nil {
		return nil, false, err
	}
	if !meta.HasPrefix(k, prefix) || len(k) != len(prefix)+8 {
		return nil, false, fmt.Errorf("%w: %s/%s", ErrNoSuchKey, bucket, key)
	}
	var v meta.Version
	if err := meta.Decode(raw, &v); err != nil {
		return nil, false, err
	}
	if !v.DeleteMarker {
		return nil, false, fmt.Errorf("%w: %s/%s", ErrNoSuchKey, bucket, key)
	}
	return &v, true, fmt.Errorf("%w: %s/%s: %w %s", ErrNoSuchKey, bucket, key, ErrDeleteMarker, v.VersionID)
}

// ObjectReader reads one version of an object. It pins the version's data
// until Close, so overwrites and deletes do not free it meanwhile. It is an
// io.ReaderAt (safe for concurrent use) and an io.ReadSeeker (not).
type ObjectReader struct {
	s    *Store
	ctx  context.Context
	info ObjectInfo
	// The version's segments in runs: its chunks, or one run holding a
	// flat version's list. Runs are immutable, so a reader rebased on a
	// patched version (Rebase) shares the untouched ones.
	runs  []*segRun
	rends []int64                // rends[i] is the object offset where run i ends
	datas map[string]*dataReader // by data id, one for each pinned id
	uses  map[string]int         // by data id, the segments naming it; made by the first Rebase

	off    int64      // for Read and Seek
	cacheF []*os.File // the block cache's files, each opened by the first CopyRange hit in it

	closeOnce sync.Once
}

// segRun is a run of a version's segments: one of its chunks (ref), or
// a flat version's whole list (ref.ID zero).
type segRun struct {
	ref  meta.ChunkRef
	segs []meta.Segment
	ends []int64 // ends[i] is the offset within the run where segment i ends
}

func newSegRun(ref meta.ChunkRef, segs []meta.Segment) *segRun {
	r := &segRun{ref: ref, segs: segs, ends: make([]int64, len(segs))}
	var end int64
	for i, sg := range segs {
		end += sg.Length
		r.ends[i] = end
	}
	r.ref.Length, r.ref.Segs = end, len(segs)
	return r
}

// length is the bytes the run covers.
func (r *segRun) length() int64 {
	if len(r.ends) == 0 {
		return 0
	}
	return r.ends[len(r.ends)-1]
}

// Open returns a reader of the current version of bucket/key, or of
// opt.VersionID; errors as Head. The caller must Close it. ctx bounds the
// reads made through it.
func (s *Store) Open(ctx context.Context, bucket, key string, opt GetOptions) (*ObjectReader, error) {
	if err := s.awaitRead(ctx, bucket, key, opt); err != nil {
		return nil, err
	}
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var v *meta.Version
	var latest bool
	var runs []*segRun
	datas := map[string]meta.Data{}
	s.pinGate.RLock()
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		var err error
		v, latest, err = lookupVersion(tx, bucket, key, opt.VersionID)
		if err != nil {
			return err
		}
		if v.DeleteMarker {
			return fmt.Errorf("%w: %s %s", ErrDeleteMarker, key, v.VersionID)
		}
		if runs, err = loadRuns(tx, v); err != nil {
			return err
		}
		return loadRunData(tx, runs, datas)
	})
	if err == nil {
		s.pin(maps.All(datas))
	}
	s.pinGate.RUnlock()
	if err != nil {
		return nil, err
	}
	return s.newObjectReader(ctx, toInfo(bucket, key, v, latest), runs, datas)
}

// loadRuns reads the runs of v's segments: its chunks, or its flat list.
func loadRuns(tx meta.Tx, v *meta.Version) ([]*segRun, error) {
	if len(v.Chunks) == 0 {
		return []*segRun{newSegRun(meta.ChunkRef{}, v.Segments)}, nil
	}
	runs := make([]*segRun, len(v.Chunks))
	for i, c := range v.Chunks {
		segs, err := loadChunk(tx, c.ID)
		if err != nil {
			return nil, err
		}
		runs[i] = newSegRun(c, segs)
		if runs[i].ref != c {
			return nil, fmt.Errorf("%w: chunk %d holds %d segments of %d bytes, its version names %d of %d", meta.ErrCorruptRecord, c.ID, runs[i].ref.Segs, runs[i].ref.Length, c.Segs, c.Length)
		}
	}
	return runs, nil
}

// loadRunData reads into datas the data records of the runs' segments
// that it does not hold yet.
func loadRunData(tx meta.Tx, runs []*segRun, datas map[string]meta.Data) error {
	for _, run := range runs {
		for _, sg := range run.segs {
			if _, ok := datas[sg.Data]; ok {
				continue
			}
			d, err := loadData(tx, sg.Data)
			if err != nil {
				return err
			}
			datas[sg.Data] = d
		}
	}
	return nil
}

// newObjectReader is the reader of a version whose data (datas) is
// pinned: the reader unpins it at Close, and at once when it cannot be
// made.
func (s *Store) newObjectReader(ctx context.Context, info ObjectInfo, runs []*segRun, datas map[string]meta.Data) (*ObjectReader, error) {
	r := &ObjectReader{s: s, ctx: ctx, info: info, datas: make(map[string]*dataReader, len(datas))}
	r.setRuns(runs)
	for id, d := range datas {
		dr, err := s.newDataReader(ctx, id, d)
		if err != nil {
			for _, dr := range r.datas {
				dr.close()
			}
			s.unpin(maps.All(datas))
			return nil, err
		}
		r.datas[id] = dr
	}
	return r, nil
}

// setRuns makes runs the reader's segment list.
func (r *ObjectReader) setRuns(runs []*segRun) {
	r.runs, r.rends = runs, make([]int64, len(runs))
	var end int64
	for i, run := range runs {
		end += run.length()
		r.rends[i] = end
	}
}

// pinned yields the reader's pinned data, id and record (no copy: Close
// runs on every GET).
func (r *ObjectReader) pinned() iter.Seq2[string, meta.Data] {
	return func(yield func(string, meta.Data) bool) {
		for id, d := range r.datas {
			if !yield(id, d.rec) {
				return
			}
		}
	}
}

// locate finds the segment holding object offset off (below the size):
// the segment, off's place in it and the segment's data.
func (r *ObjectReader) locate(off int64) (meta.Segment, int64, *dataReader) {
	i := sort.Search(len(r.rends), func(i int) bool { return r.rends[i] > off })
	run := r.runs[i]
	in := off - (r.rends[i] - run.length())
	j := sort.Search(len(run.ends), func(j int) bool { return run.ends[j] > in })
	sg := run.segs[j]
	return sg, in - (run.ends[j] - sg.Length), r.datas[sg.Data]
}

func loadData(tx meta.Tx, id string) (meta.Data, error) {
	did, err := erasure.ParseDataID(id)
	if err != nil {
		return meta.Data{}, fmt.Errorf("%w: data id %q", meta.ErrCorruptRecord, id)
	}
	raw, err := tx.Get(meta.DataTable, meta.DataKey(did))
	if err != nil {
		return meta.Data{}, err
	}
	if raw == nil {
		return meta.Data{}, fmt.Errorf("%w: data %s is not in the index", ErrDataCorrupt, id)
	}
	var d meta.Data
	return d, meta.Decode(raw, &d)
}

// Info describes the version being read.
func (r *ObjectReader) Info() ObjectInfo { return r.info }

// Size is the object size.
func (r *ObjectReader) Size() int64 { return r.info.Size }

// ReadAt implements io.ReaderAt.
func (r *ObjectReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%w: negative offset", ErrInvalidArgument)
	}
	if r.runs == nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidArgument, errRebasedReader)
	}
	n := 0
	for len(p) > 0 {
		if off >= r.info.Size {
			return n, io.EOF
		}
		sg, within, data := r.locate(off)
		chunk := p
		if rem := sg.Length - within; int64(len(chunk)) > rem {
			chunk = chunk[:rem]
		}
		m, err := data.ReadAt(chunk, sg.Offset+within)
		n += m
		off += int64(m)
		p = p[m:]
		if err != nil && (!errors.Is(err, io.EOF) || m != len(chunk)) {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: data %s shorter than its segment", ErrDataCorrupt, sg.Data)
			}
			return n, err
		}
	}
	return n, nil
}

// Read implements io.Reader.
func (r *ObjectReader) Read(p []byte) (int, error) {
	if r.off >= r.info.Size {
		return 0, io.EOF
	}
	if rem := r.info.Size - r.off; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	return n, err
}

// Seek implements io.Seeker.
func (r *ObjectReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.info.Size
	default:
		return 0, fmt.Errorf("%w: whence %d", ErrInvalidArgument, whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("%w: negative position", ErrInvalidArgument)
	}
	r.off = offset
	return offset, nil
}

// segments is the version's segment list.
func (r *ObjectReader) segments() []meta.Segment {
	if len(r.runs) == 1 {
		return r.runs[0].segs
	}
	var n int
	for _, run := range r.runs {
		n += len(run.segs)
	}
	segs := make([]meta.Segment, 0, n)
	for _, run := range r.runs {
		segs = append(segs, run.segs...)
	}
	return segs
}

// Close releases the pinned version and the open shard files.
func (r *ObjectReader) Close() error {
	r.closeOnce.Do(func() {
		for _, d := range r.datas {
			d.close()
		}
		r.s.unpin(r.pinned())
		for _, f := range r.cacheF {
			if f != nil {
				_ = f.Close()
			}
		}
	})
	return nil
}

// dataReader decodes one data object from its shard files, opening them
// lazily (parity shards only when a data shard fails).
type dataReader struct {
	s      *Store
	id     string
	rec    meta.Data
	shards []*lazyShard
	er     *erasure.Reader

	cache     *blockcache.Cache // nil when its blocks are not cached
	blockSize int64
	size      int64
	// driveFailed is set once a shard failed for its drive (an I/O error,
	// a peer out of reach), not for its content or absence: too few
	// shards is then a lost quorum, which may pass, not corrupt data.
	driveFailed atomic.Bool
}

func (s *Store) newDataReader(ctx context.Context, id string, d meta.Data) (*dataReader, error) {
	codec, err := s.codec(d.K, d.M, d.BlockSize)
	if err != nil {
		return nil, err
	}
	did, err := erasure.ParseDataID(id)
	if err != nil {
		return nil, fmt.Errorf("%w: data id %q", meta.ErrCorruptRecord, id)
	}
	dr := &dataReader{s: s, id: id, rec: d, blockSize: int64(d.BlockSize), size: d.Size}
	if d.Pack == 0 && d.BlockSize == s.layout.BlockSize && s.cacheable(d.Size) {
		dr.cache = s.cache
	}
	srcs := make([]io.ReaderAt, d.K+d.M)
	for i := range srcs {
		if i >= len(s.drives) {
			continue
		}
		ls := &lazyShard{open: s.shardOpener(ctx, i, id, d)}
		dr.shards = append(dr.shards, ls)
		srcs[i] = ls
	}
	hdr := erasure.Header{K: d.K, M: d.M, BlockSize: d.BlockSize, Size: d.Size, DataID: did}
	dr.er = codec.NewReader(ctx, hdr, srcs, func([]int) { s.queueHeal(id) })
	dr.er.OnShardError(func(i int, err error) {
		s.noteDriveErr(i, err)
		if shardFault(err) == faultIO {
			dr.driveFailed.Store(true)
		}
	})
	return dr, nil
}

func (d *dataReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := d.er.ReadAt(p, off)
	if errors.Is(err, erasure.ErrReadQuorum) {
		if d.driveFailed.Load() {
			err = fmt.Errorf("%w: data %s: too few drives answered (a node down or cut off?): %v", ErrQuorumLost, d.id, err)
		} else {
			err = fmt.Errorf("%w: data %s: %v", ErrDataCorrupt, d.id, err)
		}
	}
	return n, err
}

func (d *dataReader) close() {
	for _, ls := range d.shards {
		ls.close()
	}
}

// shardOpener returns how to open data id's shard on drive i: its own
// shard file, or its record in a pack segment (whose file stays open in
// the store's cache).
func (s *Store) shardOpener(ctx context.Context, i int, id string, d meta.Data) func() (io.ReaderAt, func(), error) {
	if d.Pack == 0 {
		return func() (io.ReaderAt, func(), error) {
			f, err := s.drives[i].Open(ctx, id)
			if err != nil {
				return nil, nil, err
			}
			return f, func() { _ = f.Close() }, nil
		}
	}
	return func() (io.ReaderAt, func(), error) {
		f, err := s.packFile(ctx, i, d.Pack, false)
		if err != nil {
			return nil, nil, err
		}
		// A packed record is small: one read brings header and blocks,
		// where reading through the file would cost one per part.
		rec := make([]byte, d.Len)
		n, err := f.ReadAt(rec, d.Off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, err
		}
		return bytes.NewReader(rec[:n]), func() {}, nil
	}
}

// lazyShard opens its shard on first read.
type lazyShard struct {
	open func() (io.ReaderAt, func(), error)

	once    sync.Once
	r       io.ReaderAt
	release func()
	err     error
}

func (l *lazyShard) ReadAt(p []byte, off int64) (int, error) {
	l.once.Do(func() { l.r, l.release, l.err = l.open() })
	if l.err != nil {
		return 0, l.err
	}
	return l.r.ReadAt(p, off)
}

// ReadVAt reads into several buffers with one preadv(2) when the shard is
// a file (erasure.VectorReaderAt), and buffer by buffer otherwise.
func (l *lazyShard) ReadVAt(bufs [][]byte, off int64) (int, error) {
	l.once.Do(func() { l.r, l.release, l.err = l.open() })
	if l.err != nil {
		return 0, l.err
	}
	if f, ok := l.r.(*os.File); ok {
		return preadvFull(f, bufs, off)
	}
	total := 0
	for _, b := range bufs {
		n, err := l.r.ReadAt(b, off+int64(total))
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// preadvFull fills bufs from f at off, looping over short reads; io.EOF
// when the file ends first.
func preadvFull(f *os.File, bufs [][]byte, off int64) (int, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	want := 0
	for _, b := range bufs {
		want += len(b)
	}
	total := 0
	for total < want {
		var n int
		var rerr error
		if err := sc.Control(func(fd uintptr) {
			n, rerr = unix.Preadv(int(fd), skipBytes(bufs, total), off+int64(total))
		}); err != nil {
			return total, err
		}
		if rerr != nil {
			return total, fmt.Errorf("preadv %s: %w", f.Name(), rerr)
		}
		if n == 0 {
			return total, io.EOF
		}
		total += n
	}
	return total, nil
}

// skipBytes is bufs without their first n bytes.
func skipBytes(bufs [][]byte, n int) [][]byte {
	for len(bufs) > 0 && n >= len(bufs[0]) {
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	if len(bufs) == 0 {
		return nil
	}
	out := append([][]byte{bufs[0][n:]}, bufs[1:]...)
	return out
}

func (l *lazyShard) close() {
	l.once.Do(func() { l.err = os.ErrClosed })
	if l.release != nil {
		l.release()
	}
}
