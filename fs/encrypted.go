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
	r, err := f.store.Open(ctx, bucket, key, objstore.GetOptions{})
	if err != nil {
		return nil, err
	}
	if objstore.Encrypted(r.Info()) {
		_ = r.Close()
		return nil, fmt.Errorf("%s/%s: %w", bucket, key, errEncrypted)
	}
	return r, nil
}
