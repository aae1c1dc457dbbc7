package maintain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

// fileIO is iceberg-go's FileIO over one warehouse's bucket of the store:
// what the maintenance jobs read (metadata, manifests, data files), write
// (compacted files, manifests) and delete. Paths are locations
// (s3://<wh>/<key>); a path outside the warehouse's bucket is refused.
// Writes go straight to the store, as the catalog's metadata files do.
type fileIO struct {
	ctx   context.Context
	store *objstore.Store
	wh    string
}

var (
	_ iceio.WriteFileIO     = (*fileIO)(nil)
	_ iceio.ListableIO      = (*fileIO)(nil)
	_ iceio.BulkRemovableIO = (*fileIO)(nil)
)

func (f *fileIO) key(op, name string) (string, error) {
	k, err := catalog.ObjectKey(f.wh, name)
	if err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %w", fs.ErrInvalid, err)}
	}
	return k, nil
}

func pathErr(op, name string, err error) error {
	if errors.Is(err, objstore.ErrNoSuchKey) {
		err = fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// Open implements iceio.IO.
func (f *fileIO) Open(name string) (iceio.File, error) {
	k, err := f.key("open", name)
	if err != nil {
		return nil, err
	}
	r, err := f.store.Open(f.ctx, f.wh, k, objstore.GetOptions{})
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	if objstore.Encrypted(r.Info()) {
		_ = r.Close()
		return nil, pathErr("open", name, errors.New("encrypted with S3 server-side encryption, which table maintenance does not decrypt"))
	}
	return &file{ObjectReader: r, name: name}, nil
}

// Remove implements iceio.IO; a missing file is no error.
func (f *fileIO) Remove(name string) error {
	k, err := f.key("remove", name)
	if err != nil {
		return err
	}
	if _, err := f.store.Delete(f.ctx, f.wh, k, objstore.DeleteOptions{}); err != nil && !errors.Is(err, objstore.ErrNoSuchKey) {
		return pathErr("remove", name, err)
	}
	return nil
}

// DeleteFiles implements iceio.BulkRemovableIO.
func (f *fileIO) DeleteFiles(ctx context.Context, paths []string) ([]string, error) {
	var deleted []string
	var errs []error
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return deleted, errors.Join(append(errs, err)...)
		}
		if err := f.Remove(p); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, p)
	}
	return deleted, errors.Join(errs...)
}

// Create implements iceio.WriteFileIO: the file is streamed into a put,
// visible once Close returns nil.
func (f *fileIO) Create(name string) (iceio.FileWriter, error) {
	k, err := f.key("create", name)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	w := &writer{pw: pw, done: make(chan error, 1), name: name}
	go func() {
		_, err := f.store.Put(f.ctx, f.wh, k, pr, -1, objstore.PutOptions{})
		_ = pr.CloseWithError(err) // unblocks a writer when the put failed early
		w.done <- err
	}()
	return w, nil
}

// WriteFile implements iceio.WriteFileIO.
func (f *fileIO) WriteFile(name string, p []byte) error {
	w, err := f.Create(name)
	if err != nil {
		return err
	}
	if _, err := w.Write(p); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

// WalkDir implements iceio.ListableIO: every object under root (a
// location) as a file entry, in key order; root itself is not reported.
func (f *fileIO) WalkDir(root string, fn fs.WalkDirFunc) error {
	k, err := f.key("walk", root)
	if err != nil {
		return err
	}
	prefix := strings.TrimRight(k, "/") + "/"
	after := ""
	for {
		page, err := f.store.List(f.ctx, f.wh, objstore.ListOptions{Prefix: prefix, After: after, MaxKeys: 1000})
		if err != nil {
			return fn(root, nil, pathErr("walk", root, err))
		}
		for _, o := range page.Objects {
			if err := fn("s3://"+f.wh+"/"+o.Key, entry{o}, nil); err != nil {
				if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
					return nil
				}
				return err
			}
		}
		if !page.IsTruncated {
			return nil
		}
		after = page.NextMarker
	}
}

// file is an open object as an iceio.File.
type file struct {
	*objstore.ObjectReader
	name string
}

func (f *file) Stat() (fs.FileInfo, error) { return entry{f.Info()}, nil }

// entry is an object as a directory entry and its file info.
type entry struct{ o objstore.ObjectInfo }

func (e entry) Name() string {
	return e.o.Key[strings.LastIndexByte(e.o.Key, '/')+1:]
}
func (e entry) Size() int64                { return e.o.Size }
func (e entry) Mode() fs.FileMode          { return 0o444 }
func (e entry) ModTime() time.Time         { return e.o.ModTime }
func (e entry) IsDir() bool                { return false }
func (e entry) Sys() any                   { return nil }
func (e entry) Type() fs.FileMode          { return 0 }
func (e entry) Info() (fs.FileInfo, error) { return e, nil }

// writer streams a new file into its put.
type writer struct {
	pw   *io.PipeWriter
	done chan error
	name string
	err  error
	shut bool
}

func (w *writer) Write(p []byte) (int, error) { return w.pw.Write(p) }

func (w *writer) ReadFrom(r io.Reader) (int64, error) { return io.Copy(w.pw, r) }

// Close ends the file and waits for its put.
func (w *writer) Close() error {
	if w.shut {
		return w.err
	}
	w.shut = true
	_ = w.pw.Close()
	if err := <-w.done; err != nil {
		w.err = &fs.PathError{Op: "write", Path: w.name, Err: err}
	}
	return w.err
}
