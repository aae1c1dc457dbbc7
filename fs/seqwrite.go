package fs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"sync"

	"github.com/cairnstore/cairn/objstore"
)

// seqBufMax is how much of a file written from its start the mount keeps
// in memory before it streams the file into the store: files up to it are
// put whole, with their size known (the store packs small objects).
const seqBufMax = 128 << 10

// seqWriter streams a file that is written sequentially from empty
// straight into a put, with no staging copy: the common case (cp, dd,
// shell redirections) writes every byte once. The first write that is not
// an append, and any read or truncate, ends the stream: what was streamed
// is committed, and the file goes on copy-on-write from that version.
type seqWriter struct {
	buf []byte // the bytes so far, until streaming starts
	pw  *io.PipeWriter
	out chan error // PutAsync's result once the body ended

	mu    sync.Mutex // protects final
	final map[string]string
}

// streaming says whether a put is reading the bytes.
func (w *seqWriter) streaming() bool { return w.pw != nil }

// write appends p; it starts the streaming put once the buffer is full.
func (w *seqWriter) write(ctx context.Context, f *FS, bucket, key, contentType string, p []byte) error {
	if w.pw == nil && len(w.buf)+len(p) <= seqBufMax {
		w.buf = append(w.buf, p...)
		return nil
	}
	if w.pw == nil {
		pr, pw := io.Pipe()
		w.pw, w.out = pw, make(chan error, 1)
		body := io.MultiReader(bytes.NewReader(w.buf), pr)
		w.buf = nil
		opt := objstore.PutOptions{ContentType: contentType, FinalMeta: w.finalMeta}
		f.self.expect(bucket, key)
		pctx := context.WithoutCancel(ctx)
		go func() {
			_, err := f.store.PutAsync(pctx, bucket, key, body, -1, opt)
			if err != nil {
				f.self.cancel(bucket, key)
			}
			_ = pr.CloseWithError(err)
			w.out <- err
		}()
	}
	if _, err := w.pw.Write(p); err != nil {
		return fmt.Errorf("stream %s/%s: %w", bucket, key, err)
	}
	return nil
}

// finalMeta gives the put the metadata known at the end of the body.
func (w *seqWriter) finalMeta(m map[string]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	maps.Copy(m, w.final)
}

// finish ends the file with metadata m and waits until the store has every
// byte (the commit itself is asynchronous).
func (w *seqWriter) finish(ctx context.Context, f *FS, bucket, key, contentType string, m map[string]string) error {
	if w.pw == nil {
		return f.put(ctx, bucket, key, w.buf, objstore.PutOptions{ContentType: contentType, Meta: m})
	}
	w.mu.Lock()
	w.final = m
	w.mu.Unlock()
	_ = w.pw.Close()
	return <-w.out
}

// abort ends a stream without committing it (the file was unlinked).
func (w *seqWriter) abort() {
	if w.pw != nil {
		_ = w.pw.CloseWithError(errAborted)
		<-w.out
	}
}

var errAborted = fmt.Errorf("%w: file removed while written", objstore.ErrIncompleteBody)
