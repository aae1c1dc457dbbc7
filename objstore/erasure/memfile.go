package erasure

import (
	"errors"
	"io"
	"sync"
)

// MemFile is an in-memory file for tests: an io.ReaderAt and io.WriterAt
// that grows on write. The zero value is an empty file. It is safe for
// concurrent use.
type MemFile struct {
	mu sync.RWMutex // protects b
	b  []byte
}

var (
	_ io.ReaderAt = (*MemFile)(nil)
	_ io.WriterAt = (*MemFile)(nil)
)

// NewMemFile returns a MemFile holding a copy of b.
func NewMemFile(b []byte) *MemFile {
	return &MemFile{b: append([]byte(nil), b...)}
}

// ReadAt implements io.ReaderAt.
func (f *MemFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("erasure: MemFile: negative offset")
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if off >= int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt implements io.WriterAt, zero-filling any gap past the end.
func (f *MemFile) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("erasure: MemFile: negative offset")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(f.b)) {
		if end > int64(cap(f.b)) {
			nb := make([]byte, end, max(end, 2*int64(cap(f.b))))
			copy(nb, f.b)
			f.b = nb
		} else {
			old := len(f.b)
			f.b = f.b[:end]
			clear(f.b[old:])
		}
	}
	return copy(f.b[off:], p), nil
}

// Truncate sets the file's size, zero-filling when it grows.
func (f *MemFile) Truncate(size int64) error {
	if size < 0 {
		return errors.New("erasure: MemFile: negative size")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if size <= int64(len(f.b)) {
		f.b = f.b[:size]
		return nil
	}
	f.b = append(f.b, make([]byte, size-int64(len(f.b)))...)
	return nil
}

// Size returns the file's size.
func (f *MemFile) Size() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return int64(len(f.b))
}

// Bytes returns a copy of the file's contents.
func (f *MemFile) Bytes() []byte {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return append([]byte(nil), f.b...)
}
