package fs

// Objects the S3 face encrypted: their data in the store is ciphertext,
// which the mount refuses to serve or rewrite in part.

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnstore/cairn/objstore"
)

// errEncrypted refuses reading or rewriting in part a version whose data
// is ciphertext (S3 server-side encryption, objstore.Encrypted): the mount
// would serve its ciphertext as the file's bytes.
var errEncrypted = errors.New("the object is encrypted with S3 server-side encryption, which the mount does not decrypt: read it through the S3 API (with its SSE-C key if it has one), or replace it with an unencrypted copy")

// openPlain opens the current version of bucket/key to read its bytes,
// refusing one whose data is ciphertext (errEncrypted).
func (f *FS) openPlain(ctx context.Context, bucket, key string) (*objstore.ObjectReader, error) {
	r, err := f.openReader(ctx, bucket, key, objstore.GetOptions{})
	if err != nil {
		return nil, err
	}
	if objstore.Encrypted(r.Info()) {
		_ = r.Close()
		return nil, fmt.Errorf("%s/%s: %w", bucket, key, errEncrypted)
	}
	return r, nil
}

// openReader opens a version of bucket/key for a reader that outlives
// the request opening it (a handle's pinned version, a writer's base).
// An ObjectReader's reads are bound to the context it was opened with,
// and go-fuse cancels a request's context when the kernel interrupts the
// request (a signal to the caller: Go's preemption sends them all the
// time): a reader opened with it would fail every later read with EINTR,
// and the caller's retries with it, for as long as the file stays open.
// The wait for the key's pending commits is still the request's to
// interrupt.
func (f *FS) openReader(ctx context.Context, bucket, key string, opt objstore.GetOptions) (*objstore.ObjectReader, error) {
	if err := f.store.Sync(ctx, bucket, key); err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return f.store.Open(context.WithoutCancel(ctx), bucket, key, opt)
}
