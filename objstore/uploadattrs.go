package objstore

import (
	"context"

	"github.com/cairnstore/cairn/objstore/meta"
)

// UploadAttrs returns the attributes an upload was created with (those
// its completed version gets), for a face that needs them at UploadPart
// time (the S3 face's encryption record).
func (s *Store) UploadAttrs(ctx context.Context, bucket, key, uploadID string) (Attrs, error) {
	if err := s.checkOpen(); err != nil {
		return Attrs{}, err
	}
	if err := ValidateKey(key); err != nil {
		return Attrs{}, err
	}
	var a Attrs
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		u, err := getUpload(tx, bucket, key, uploadID)
		if err != nil {
			return err
		}
		a = u.Attrs
		return nil
	})
	return a, err
}
