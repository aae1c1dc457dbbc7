package drive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// directAlign is the alignment of O_DIRECT offsets, lengths and buffers:
// the page size, which covers every logical block size in use.
const directAlign = 4096

// stageSize is the size of a ShardFile's staging buffer, so the largest
// direct write.
const stageSize = 1 << 20

// keptStages is how many stages from the pool may be out before shard
// files stop keeping theirs between appends (ShardFile.park).
const keptStages = 32

// stagePool hands out stageSize buffers aligned to directAlign, and counts
// those out.
type stagePool struct {
	p   sync.Pool
	out atomic.Int64
}

func newStagePool() *stagePool {
	sp := &stagePool{}
	sp.p.New = func() any {
		b := alignedBuf(stageSize)
		return &b
	}
	return sp
}

func (sp *stagePool) get() *[]byte {
	sp.out.Add(1)
	return sp.p.Get().(*[]byte)
}

func (sp *stagePool) put(b *[]byte) {
	sp.out.Add(-1)
	sp.p.Put(b)
}

// crowded says whether so many stages are out that a file should not keep
// its own between appends.
func (sp *stagePool) crowded() bool { return sp.out.Load() > keptStages }

// alignedBuf returns n bytes starting at a directAlign boundary.
func alignedBuf(n int) []byte {
	b := make([]byte, n+directAlign)
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) % directAlign); r != 0 {
		off = directAlign - r
	}
	return b[off : off+n : off+n]
}

// ShardFile is a shard file being written. Appends (each write starting
// where the previous one ended) are staged in an aligned buffer and reach
// the disk as large O_DIRECT writes, bypassing the page cache: a large
// object's bytes are copied once into the buffer instead of into the page
// cache, and the later flush has no dirty pages to write. While few files
// are being written, each keeps its staging buffer and writes it out when
// full; once more than keptStages are out, a file holds one only during a
// WriteAt: each append writes out the whole pages it completes, and the
// unaligned rest (under a page) waits for the next one in a page of the
// file's own, so that many files open for writing share a few staging
// buffers instead of holding one each. The first page
// (the shard header) is held back and written by Close, last, so rewrites
// of the header land in memory and a file whose write did not finish
// starts with zeros. Any other write pattern, and a filesystem that
// refuses O_DIRECT (tmpfs), goes through the page cache as usual.
//
// Close writes what is staged and must be called; its error means the
// shard is incomplete. ShardFile is not safe for concurrent use; like any
// file it does not fsync (Drive.SyncFiles or Drive.Sync do).
type ShardFile struct {
	f     *os.File // buffered; always open
	df    *os.File // O_DIRECT on the same file, nil when unavailable
	pool  *stagePool
	stage *[]byte // nil until the first staged write; small or from pool
	small *[]byte // the file's own one-page stage, between appends
	base  int64   // file offset of the stage's first byte, aligned
	n     int     // bytes staged
	page0 []byte  // the file's first page, once the stage moved past it
	err   error   // sticky write error
}

// CreateShard makes (or truncates) the shard file for name, ready for
// WriteAt, writing large appends with O_DIRECT when the filesystem allows
// (Local).
func (d *Dir) CreateShard(ctx context.Context, name string) (*ShardFile, error) {
	f, err := d.create(ctx, name)
	if err != nil {
		return nil, err
	}
	sf := &ShardFile{f: f, pool: d.stages}
	df, err := os.OpenFile(f.Name(), os.O_WRONLY|syscall.O_DIRECT, 0)
	if err == nil {
		sf.df = df
	}
	return sf, nil
}

// Name returns the file's path.
func (s *ShardFile) Name() string { return s.f.Name() }

// WriteAt implements io.WriterAt.
func (s *ShardFile) WriteAt(p []byte, off int64) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.df == nil {
		return s.f.WriteAt(p, off)
	}
	if s.stage == nil && off == 0 && s.base == 0 && s.page0 == nil {
		b := alignedBuf(directAlign) // the first write: start staging
		s.small, s.stage = &b, &b
	}
	switch end := off + int64(len(p)); {
	case s.stage != nil && off == s.base+int64(s.n):
		n, err := s.append(p)
		if err == nil {
			err = s.park()
		}
		return n, err
	case s.stage != nil && off >= s.base && end <= s.base+int64(s.n):
		return copy((*s.stage)[off-s.base:], p), nil // a rewrite of staged bytes
	case s.page0 != nil && end <= directAlign:
		return copy(s.page0[off:], p), nil // a rewrite of the held header page
	}
	// Anything else: write out what is staged, then go through the page
	// cache from now on.
	if err := s.drain(); err != nil {
		return 0, err
	}
	n, err := s.f.WriteAt(p, off)
	if err != nil {
		s.err = err
	}
	return n, err
}

// append stages p at the end of the stage, writing full stages out. It
// moves the staged bytes to a buffer of the pool first if they would not
// fit the small stage.
func (s *ShardFile) append(p []byte) (int, error) {
	if s.stage == s.small && s.n+len(p) > len(*s.small) {
		big := s.pool.get()
		copy(*big, (*s.small)[:s.n])
		s.stage = big
	}
	done := 0
	for done < len(p) {
		c := copy((*s.stage)[s.n:], p[done:])
		s.n += c
		done += c
		if s.n == stageSize {
			if err := s.writeStage(stageSize); err != nil {
				return done, err
			}
		}
	}
	return done, nil
}

// park writes out the whole pages staged in a buffer of the pool and moves
// the rest, under a page, to the small stage, giving the buffer back, when
// the pool is crowded; otherwise the file keeps the buffer, to write it
// out whole once full.
func (s *ShardFile) park() error {
	if s.stage == s.small || !s.pool.crowded() {
		return nil
	}
	if aligned := s.n &^ (directAlign - 1); aligned > 0 {
		if err := s.writeStage(aligned); err != nil {
			return err
		}
	}
	copy(*s.small, (*s.stage)[:s.n])
	s.pool.put(s.stage)
	s.stage = s.small
	return nil
}

// putStage gives a stage from the pool back.
func (s *ShardFile) putStage() {
	if s.stage != nil && s.stage != s.small {
		s.pool.put(s.stage)
	}
	s.stage = nil
}

// writeStage writes the first n (aligned) staged bytes with O_DIRECT and
// moves the rest to the start of the stage. The first page of the file is
// copied aside instead of written.
func (s *ShardFile) writeStage(n int) error {
	buf := (*s.stage)[:n]
	off := s.base
	if off == 0 && n >= directAlign {
		s.page0 = alignedBuf(directAlign)
		copy(s.page0, buf)
		buf, off = buf[directAlign:], directAlign
	}
	if len(buf) > 0 {
		if err := s.direct(buf, off); err != nil {
			return err
		}
	}
	rest := copy(*s.stage, (*s.stage)[n:s.n])
	s.base += int64(n)
	s.n = rest
	return nil
}

// direct writes an aligned buffer at an aligned offset with O_DIRECT,
// through the page cache if the filesystem refuses it after all.
func (s *ShardFile) direct(p []byte, off int64) error {
	_, err := s.df.WriteAt(p, off)
	if errors.Is(err, unix.EINVAL) {
		_, err = s.f.WriteAt(p, off)
	}
	if err != nil {
		s.err = fmt.Errorf("write %s: %w", s.f.Name(), err)
	}
	return s.err
}

// drain writes out everything staged and held: the aligned part of the
// stage with O_DIRECT, its unaligned tail through the page cache, then the
// held first page. Later writes go through the page cache.
func (s *ShardFile) drain() error {
	if s.stage != nil {
		aligned := s.n &^ (directAlign - 1)
		if s.base == 0 && s.page0 == nil && aligned < directAlign {
			aligned = 0 // a file under one page: one buffered write
		}
		if s.err == nil && aligned > 0 {
			_ = s.writeStage(aligned)
		}
		if s.err == nil && s.n > 0 {
			if _, err := s.f.WriteAt((*s.stage)[:s.n], s.base); err != nil {
				s.err = err
			}
		}
		s.base += int64(s.n)
		s.n = 0
		s.putStage()
	}
	if s.page0 != nil {
		if s.err == nil {
			_ = s.direct(s.page0, 0)
		}
		s.page0 = nil
	}
	if s.df != nil {
		_ = s.df.Close()
		s.df = nil
	}
	return s.err
}

// Close writes out what is staged and closes the file. An error means the
// shard file is incomplete.
func (s *ShardFile) Close() error {
	err := s.drain()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Abort closes the file without writing what is staged, for a shard that
// is about to be removed.
func (s *ShardFile) Abort() {
	s.putStage()
	s.page0 = nil
	if s.df != nil {
		_ = s.df.Close()
		s.df = nil
	}
	_ = s.f.Close()
}

var _ ShardWriter = (*ShardFile)(nil)
