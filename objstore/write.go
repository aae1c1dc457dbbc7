package objstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// newData is erasure-coded data written to the drives but not yet
// committed to the index.
type newData struct {
	id     erasure.DataID
	rec    meta.Data
	shards []int // drives holding a shard
	quorum int
}

// encodeBody streams body (size bytes, or until EOF when size < 0)
// through the ETag hash into w, always closes w (which stops its
// goroutines), and checks the Content-MD5 the caller declared. A large
// body is hashed block by block on the Writer's hash goroutine, in
// parallel with reading it; a small one as it is read. A nil h (the
// caller gives the ETag and declared no Content-MD5) hashes nothing.
func encodeBody(w *erasure.Writer, body io.Reader, size int64, h hash.Hash, wantMD5 []byte) (int64, error) {
	src := body
	if size > 0 {
		src = io.LimitReader(body, size)
	}
	switch {
	case h == nil:
	case size >= 0 && size < asyncHashSize:
		src = io.TeeReader(src, h)
	default:
		w.HashWith(h)
	}
	n, err := io.Copy(w, src)
	if err == nil && size > 0 && n < size {
		err = fmt.Errorf("%w: got %d of %d bytes", ErrIncompleteBody, n, size)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, wrapWriteErr(err)
	}
	return n, checkDigest(h, wantMD5)
}

// asyncHashSize is the body size from which the ETag is hashed on a
// goroutine of its own.
const asyncHashSize = 1 << 20

func (d *newData) packed() bool { return d.rec.Pack != 0 }

// segment is the whole of the data as one segment.
func (d *newData) segment() meta.Segment {
	return meta.Segment{Data: d.id.String(), Length: d.rec.Size}
}

// writeData streams body (size bytes, or until EOF when size < 0) into a
// new data object on every drive and returns the body's MD5. It returns
// nil data for an empty body. When etagGiven (the caller names the ETag,
// PutOptions.ETag) and no wantMD5 is declared, the body is not hashed
// and the MD5 returned is nil: the S3 face, which sends ciphertext and
// hashes the plaintext itself, would otherwise pay for a second MD5 that
// nothing reads. On error no shard file is left behind (best effort; the
// start-up sweep catches the rest).
func (s *Store) writeData(ctx context.Context, bucket, key string, body io.Reader, size int64, wantMD5 []byte, etagGiven bool) (*newData, []byte, error) {
	return s.writeDataPacking(ctx, bucket, key, body, size, wantMD5, etagGiven, s.opt.PackMaxSize)
}

// writeDataPacking is writeData where data of at most packMax bytes
// goes to the pack segments (Options.PackMaxSize for writeData; packing
// off stays off).
func (s *Store) writeDataPacking(ctx context.Context, bucket, key string, body io.Reader, size int64, wantMD5 []byte, etagGiven bool, packMax int64) (*newData, []byte, error) {
	var h hash.Hash
	if !etagGiven || wantMD5 != nil {
		var release func()
		h, release = s.newMD5(size)
		defer release()
	}
	if size == 0 {
		return nil, sumOf(h), checkDigest(h, wantMD5)
	}
	if size > 0 && size <= packMax && s.opt.PackMaxSize > 0 {
		return s.writePacked(ctx, bucket, key, body, size, h, wantMD5)
	}
	k, m, bs := s.geometry()
	codec, err := s.codec(k, m, bs)
	if err != nil {
		return nil, nil, err
	}
	id := s.newDataID()
	name := id.String()
	files := make([]drive.ShardWriter, len(s.drives))
	sinks := make([]io.WriterAt, len(s.drives))
	quorum := erasure.WriteQuorum(k, m)
	cleanup := func() {
		for i, f := range files {
			if f != nil {
				f.Abort()
			}
			_ = s.drives[i].Remove(context.Background(), name)
		}
	}
	opened := 0
	var openErrs error
	for i, d := range s.drives {
		f, err := createShard(ctx, d, name)
		if err != nil {
			s.log.Warn().Err(err).Int("drive", i).Msg("cannot create shard file")
			s.noteDriveErr(i, err)
			openErrs = errors.Join(openErrs, fmt.Errorf("drive %d: %w", i, err))
			continue
		}
		files[i], sinks[i] = f, s.countWrites(f)
		opened++
	}
	if opened < quorum {
		cleanup()
		return nil, nil, fmt.Errorf("%w: %d of %d drives writable, %d needed: %w", ErrQuorumLost, opened, len(s.drives), quorum, openErrs)
	}
	hdr := erasure.Header{Size: max(size, 0), DataID: id, Bucket: bucket, Key: key}
	w, err := codec.NewWriter(ctx, hdr, sinks)
	if err != nil {
		cleanup()
		return nil, nil, wrapWriteErr(err)
	}
	s.limitBuffers(w)
	if tee := s.teeToCache(name, size); tee != nil {
		w.TeeBlocks(tee)
	}
	n, err := encodeBody(w, body, size, h, wantMD5)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if n == 0 {
		cleanup()
		return nil, sumOf(h), nil
	}
	failed := make([]bool, len(s.drives))
	for _, i := range w.Failed() {
		failed[i] = true
	}
	// Closing writes out each file's staged tail: all at once.
	closeErrs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		if f != nil {
			wg.Go(func() { closeErrs[i] = f.Close() })
		}
	}
	wg.Wait()
	var shards []int
	for i, f := range files {
		if f == nil {
			continue
		}
		files[i] = nil
		if !failed[i] && closeErrs[i] == nil {
			shards = append(shards, i)
		} else {
			s.noteDriveErr(i, errors.Join(closeErrs[i], errShardWrite))
			_ = s.drives[i].Remove(ctx, name)
		}
	}
	if len(shards) < quorum {
		cleanup()
		return nil, nil, fmt.Errorf("%w: %d of %d shards written, %d needed", ErrQuorumLost, len(shards), len(s.drives), quorum)
	}
	return &newData{
		id: id,
		rec: meta.Data{K: k, M: m, BlockSize: bs, Size: n, Bucket: bucket, Key: key,
			Created: time.Now().UTC()},
		shards: shards,
		quorum: quorum,
	}, sumOf(h), nil
}

// limitBuffers makes w take its block buffers from the store's budget
// (Options.WriteBuffers), if it has one.
func (s *Store) limitBuffers(w *erasure.Writer) {
	if s.writeBufs != nil {
		w.UseBudget(s.writeBufs)
	}
}

// simdMinSize is the body size from which ETags are hashed on md5-simd's
// server when other large writes are in flight.
const simdMinSize = 1 << 20

// newMD5 returns the hash for a body's ETag and its release function. A
// large body written while another is in flight shares md5-simd's server,
// which hashes up to 16 streams per core in SIMD lanes; a small or lone
// body uses crypto/md5, which is faster for a single stream.
func (s *Store) newMD5(size int64) (hash.Hash, func()) {
	if size >= 0 && size < simdMinSize {
		return md5.New(), func() {}
	}
	if s.largeWrites.Add(1) < 2 {
		return md5.New(), func() { s.largeWrites.Add(-1) }
	}
	h := s.md5srv.NewHash()
	return h, func() {
		h.Close()
		s.largeWrites.Add(-1)
	}
}

func wrapWriteErr(err error) error {
	switch {
	case errors.Is(err, erasure.ErrWriteQuorum):
		return fmt.Errorf("%w: %w", ErrQuorumLost, err)
	default:
		return err
	}
}

// sumOf is h's sum, nil for no hash.
func sumOf(h hash.Hash) []byte {
	if h == nil {
		return nil
	}
	return h.Sum(nil)
}

// givenETag is the ETag a write whose caller names it (etag, called once
// the body has been read) gets: etag's result, or, when that is empty,
// the body's MD5 if it was hashed, else an opaque ETag unique to the
// write (the MD5 of the new data's id; the MD5 of nothing for an empty
// body, as an empty body's MD5 is).
func givenETag(etag func() string, sum []byte, d *newData) string {
	if e := etag(); e != "" {
		return e
	}
	if sum == nil {
		var id []byte
		if d != nil {
			id = []byte(d.id.String())
		}
		sum2 := md5.Sum(id)
		sum = sum2[:]
	}
	return hex.EncodeToString(sum)
}

func checkDigest(h hash.Hash, want []byte) error {
	if want != nil && !bytes.Equal(h.Sum(nil), want) {
		return fmt.Errorf("%w: body MD5 %s, Content-MD5 %s", ErrBadDigest, hex.EncodeToString(h.Sum(nil)), hex.EncodeToString(want))
	}
	return nil
}

// writePacked encodes a small body in memory and appends its shard
// records to the active pack segment.
func (s *Store) writePacked(ctx context.Context, bucket, key string, body io.Reader, size int64, h hash.Hash, wantMD5 []byte) (*newData, []byte, error) {
	k, m, bs := s.geometry()
	codec, err := s.codec(k, m, bs)
	if err != nil {
		return nil, nil, err
	}
	id := s.newDataID()
	mems := make([]*erasure.MemFile, len(s.drives))
	sinks := make([]io.WriterAt, len(s.drives))
	for i := range mems {
		mems[i] = erasure.NewMemFile(nil)
		sinks[i] = mems[i]
	}
	w, err := codec.NewInlineWriter(ctx, erasure.Header{Size: size, DataID: id, Bucket: bucket, Key: key}, sinks)
	if err != nil {
		return nil, nil, wrapWriteErr(err)
	}
	s.limitBuffers(w)
	n, err := encodeBody(w, body, size, h, wantMD5)
	if err != nil {
		return nil, nil, err
	}
	recs := make([][]byte, len(s.drives))
	for i, mf := range mems {
		recs[i] = mf.Bytes()
	}
	for _, i := range w.Failed() {
		recs[i] = nil
	}
	recLen := int64(len(recs[0]))
	for _, r := range recs {
		if r != nil {
			recLen = int64(len(r))
		}
	}
	seg, off, shards, failed := s.packAppend(ctx, recs, recLen)
	quorum := erasure.WriteQuorum(k, m)
	if len(shards) < quorum {
		return nil, nil, fmt.Errorf("%w: %d of %d shards written, %d needed: %w", ErrQuorumLost, len(shards), len(s.drives), quorum, failed)
	}
	return &newData{
		id: id,
		rec: meta.Data{K: k, M: m, BlockSize: bs, Size: n, Bucket: bucket, Key: key,
			Created: time.Now().UTC(), Pack: seg, Off: off, Len: recLen},
		shards: shards,
		quorum: quorum,
	}, sumOf(h), nil
}

// discard removes the shard files of data that will not be committed
// (packed records just stay dead space in their segment).
func (s *Store) discard(d *newData) {
	if d == nil || d.packed() {
		return
	}
	name := d.id.String()
	for _, dr := range s.drives {
		_ = dr.Remove(context.Background(), name)
	}
}

// commitData commits fn together with the data it references. A nil d is
// a mutation without new data. On failure the data is discarded.
func (s *Store) commitData(ctx context.Context, d *newData, fn func(tx meta.Tx) error) error {
	wait, err := s.queueData(ctx, d, fn)
	if err != nil {
		return err
	}
	return wait()
}

// queueData is commitData that does not wait: it queues the commit and
// returns the function that waits for it (and discards the data when it
// failed). The function must be called.
func (s *Store) queueData(ctx context.Context, d *newData, fn func(tx meta.Tx) error) (wait func() error, err error) {
	r := &commitReq{fn: fn}
	if d != nil {
		r = s.dataReq(d, fn)
	}
	if err := s.send(ctx, r); err != nil {
		s.discard(d)
		return nil, err
	}
	return func() error {
		err := <-r.done
		s.closeMu.RUnlock()
		if err != nil {
			s.discardUnlessApplied(d, err)
			return err
		}
		if d != nil && len(d.shards) < len(s.drives) {
			s.queueHeal(d.id.String())
		}
		return nil
	}, nil
}

// dataReq is the commit request of fn together with the data it references.
func (s *Store) dataReq(d *newData, fn func(tx meta.Tx) error) *commitReq {
	r := &commitReq{shards: d.shards, quorum: d.quorum, packSeg: d.rec.Pack}
	if !d.packed() {
		r.data = d.id.String()
	}
	r.fn = func(tx meta.Tx) error {
		if err := tx.Put(meta.DataTable, meta.DataKey(d.id), meta.Encode(d.rec)); err != nil {
			return err
		}
		if d.packed() {
			if err := tx.Put(meta.PackData, meta.PackDataKey(d.rec.Pack, d.id), nil); err != nil {
				return err
			}
			if err := adjustPackLive(tx, d.rec.Pack, d.rec.Len, d.rec.Off+d.rec.Len); err != nil {
				return err
			}
		}
		return fn(tx)
	}
	return r
}

// discardUnlessApplied discards d after its commit failed, unless the
// index cannot tell whether the commit applied (meta.ErrOutcomeUnknown):
// then the version may reference d, and d is left for the sweep of
// unreferenced data, which frees it if the commit did not apply.
func (s *Store) discardUnlessApplied(d *newData, err error) {
	if errors.Is(err, meta.ErrOutcomeUnknown) {
		s.log.Warn().Err(err).Msg("index commit outcome unknown: the new data is kept for the sweep of unreferenced data")
		return
	}
	s.discard(d)
}
