package objstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/objstore/blockcache"
)

// openCache makes the block cache Options.ReadCacheSize asks for. A cache
// that cannot be made (no memfd) is logged and left out: reads work
// without it.
func (s *Store) openCache() {
	if s.opt.ReadCacheSize <= 0 {
		return
	}
	c, err := blockcache.New(s.opt.ReadCacheSize, s.layout.BlockSize)
	if err != nil {
		s.log.Warn().Err(err).Int64("size", s.opt.ReadCacheSize).Msg("read cache off")
		return
	}
	s.cache = c
	// A cache short of memory fails every insert: say so once a minute.
	s.cacheLog = s.log.Sample(&zerolog.BurstSampler{Burst: 1, Period: time.Minute})
}

// teeToCache returns what a Writer of data id (size bytes, -1 when not
// known) passes its blocks to, so that an object just written is read
// from memory; nil without a cache, or for data smaller than a block
// (it would take a whole slot, and small GETs read it directly).
func (s *Store) teeToCache(id string, size int64) func(int64, [][]byte) {
	if !s.cacheable(size) {
		return nil
	}
	return func(b int64, parts [][]byte) {
		if _, err := s.cache.Insert(blockcache.Key{Data: id, Block: b}, parts...); err != nil {
			s.cacheLog.Warn().Err(err).Msg("read cache: written block not kept")
		}
	}
}

// cacheable says whether data of size bytes (-1: not known) goes in the
// block cache: at least one whole block, of the cache's block size.
func (s *Store) cacheable(size int64) bool {
	return s.cache != nil && (size < 0 || size >= int64(s.cache.SlotSize()))
}

// CacheStats returns the block cache's counters; ok is false when the
// store has no cache.
func (s *Store) CacheStats() (st blockcache.Stats, ok bool) {
	if s.cache == nil {
		return blockcache.Stats{}, false
	}
	return s.cache.Stats(), true
}

// CopyRange writes length bytes of the object from off to w, using buf
// (which should hold a block, 1 MiB by default) for the bytes it reads.
// Blocks found in the store's block cache are sent from it: when w is an
// io.ReaderFrom (net/http's response is) they are handed over as a file
// range, which a TCP connection sends with sendfile(2), making no copy in
// this process; blocks read from the shards are put in the cache.
// It returns the bytes written. Unlike ReadAt, it is not safe for
// concurrent use.
func (r *ObjectReader) CopyRange(w io.Writer, off, length int64, buf []byte) (int64, error) {
	if off < 0 || length < 0 || off+length > r.info.Size {
		return 0, fmt.Errorf("%w: range [%d, %d) of %d bytes", ErrInvalidArgument, off, off+length, r.info.Size)
	}
	if len(buf) == 0 {
		return 0, fmt.Errorf("%w: empty copy buffer", ErrInvalidArgument)
	}
	if r.runs == nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidArgument, errRebasedReader)
	}
	var written int64
	for length > 0 {
		sg, within, data := r.locate(off)
		take := min(length, sg.Length-within)
		n, err := r.copyData(w, data, sg.Offset+within, take, buf)
		written += n
		if err != nil {
			return written, err
		}
		off += take
		length -= take
	}
	return written, nil
}

// copyData writes n bytes of data object d from off to w. Blocks missing
// from the cache are read from the shards into buf and put in the cache
// when buf holds a whole block, and copied through buf otherwise.
func (r *ObjectReader) copyData(w io.Writer, d *dataReader, off, n int64, buf []byte) (int64, error) {
	if d.cache == nil {
		return copyPlain(w, d, off, n, buf)
	}
	var written int64
	for n > 0 {
		b, within := off/d.blockSize, off%d.blockSize
		bl := min(d.blockSize, d.size-b*d.blockSize)
		take := min(n, bl-within)
		if take <= 0 { // the segment runs past its data: a bad index entry
			return written, fmt.Errorf("%w: data %s: segment ends past its %d bytes", ErrDataCorrupt, d.id, d.size)
		}
		k := blockcache.Key{Data: d.id, Block: b}
		var m int64
		var err error
		if h, ok := d.cache.Lookup(k); ok {
			m, err = r.sendCached(w, d.cache, h, within, take)
		} else if int64(len(buf)) >= bl {
			m, err = r.sendDecoded(w, d, k, bl, within, take, buf)
		} else {
			m, err = copyPlain(w, d, off, take, buf)
		}
		written += m
		if err != nil {
			return written, err
		}
		off += take
		n -= take
	}
	return written, nil
}

// sendCached writes n bytes of a cached block from within to w, and
// releases it. An io.ReaderFrom gets a range of a cache file (sendfile on
// a TCP connection); otherwise, or when the file cannot be opened (out of
// file descriptors, no /proc), it gets the cached bytes themselves.
func (r *ObjectReader) sendCached(w io.Writer, c *blockcache.Cache, h blockcache.Handle, within, n int64) (int64, error) {
	defer c.Release(h)
	if rf, ok := w.(io.ReaderFrom); ok {
		if f := r.cacheFile(c, h.File); f != nil {
			if _, err := f.Seek(h.Off+within, io.SeekStart); err == nil {
				m, err := rf.ReadFrom(&io.LimitedReader{R: f, N: n})
				if err == nil && m < n {
					err = fmt.Errorf("read cache: %w", io.ErrUnexpectedEOF)
				}
				return m, err
			}
		}
	}
	// Straight from the cache's mapping (pinned until the deferred
	// Release): a writer that decrypts (an encrypted object's GET) or
	// writes to a socket reads the bytes once, where a copy through buf
	// first would read and write them once more.
	m, err := w.Write(c.Bytes(h)[within : within+n])
	if err == nil && int64(m) < n {
		err = io.ErrShortWrite
	}
	return int64(m), err
}

// cacheFile is this reader's own open file of cache file i, or nil when
// it cannot be opened (logged).
func (r *ObjectReader) cacheFile(c *blockcache.Cache, i int) *os.File {
	if r.cacheF == nil {
		r.cacheF = make([]*os.File, c.Files())
	}
	if r.cacheF[i] == nil {
		f, err := c.OpenFile(i)
		if err != nil {
			r.s.cacheLog.Warn().Err(err).Msg("read cache: sending by copy")
			return nil
		}
		r.cacheF[i] = f
	}
	return r.cacheF[i]
}

// sendDecoded reads block k (bl bytes) from the shards, puts it in the
// cache and writes n bytes of it from within to w.
func (r *ObjectReader) sendDecoded(w io.Writer, d *dataReader, k blockcache.Key, bl, within, n int64, buf []byte) (int64, error) {
	p := buf[:bl]
	if m, err := d.ReadAt(p, k.Block*d.blockSize); err != nil && (!errors.Is(err, io.EOF) || int64(m) != bl) {
		return 0, shortData(d, err)
	}
	if _, err := d.cache.Insert(k, p); err != nil {
		r.s.cacheLog.Warn().Err(err).Msg("read cache: block not kept")
	}
	m, err := w.Write(p[within : within+n])
	return int64(m), err
}

// copyPlain writes n bytes of d from off to w through buf.
func copyPlain(w io.Writer, d *dataReader, off, n int64, buf []byte) (int64, error) {
	return copyThrough(w, n, buf, func(p []byte, done int64) error {
		if m, err := d.ReadAt(p, off+done); err != nil && (!errors.Is(err, io.EOF) || m != len(p)) {
			return shortData(d, err)
		}
		return nil
	})
}

// copyThrough writes n bytes to w a buffer at a time, read(p, done)
// filling each chunk p with the bytes that follow the first done.
func copyThrough(w io.Writer, n int64, buf []byte, read func(p []byte, done int64) error) (int64, error) {
	var written int64
	for written < n {
		p := buf[:min(n-written, int64(len(buf)))]
		if err := read(p, written); err != nil {
			return written, err
		}
		m, err := w.Write(p)
		written += int64(m)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// shortData names an early end of a data object as corruption.
func shortData(d *dataReader, err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: data %s shorter than its segment", ErrDataCorrupt, d.id)
	}
	return err
}
