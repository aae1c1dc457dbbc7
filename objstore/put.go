package objstore

import (
	"context"
	"io"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Put writes body (size bytes; a negative size reads to EOF) as the new
// current version of bucket/key. The previous version stays readable by
// open readers and, in a versioned bucket, by its version id. Nothing is
// visible unless Put returns nil. Errors: ErrNoSuchBucket, ErrInvalidKey,
// ErrPreconditionFailed / ErrNoSuchKey (conditions), ErrBadDigest,
// ErrIncompleteBody, ErrQuorumLost.
func (s *Store) Put(ctx context.Context, bucket, key string, body io.Reader, size int64, opt PutOptions) (ObjectInfo, error) {
	if err := s.pending.waitKey(ctx, bucket, key); err != nil {
		return ObjectInfo{}, err
	}
	if err := s.precheckWrite(ctx, bucket, key, opt.IfMatch, opt.IfNoneMatch); err != nil {
		return ObjectInfo{}, err
	}
	info, err := s.writeAndCommit(ctx, bucket, key, body, size, opt)
	if err != nil {
		return ObjectInfo{}, err
	}
	s.notify(Event{Op: OpPut, Bucket: bucket, Key: key})
	return info, nil
}

// writeAndCommit writes body and commits it as the key's new version
// (Put's work after its checks, without the change event).
func (s *Store) writeAndCommit(ctx context.Context, bucket, key string, body io.Reader, size int64, opt PutOptions) (ObjectInfo, error) {
	wait, err := s.writeAndQueue(ctx, bucket, key, body, size, opt)
	if err != nil {
		return ObjectInfo{}, err
	}
	return wait()
}

// writeAndQueue is writeAndCommit that does not wait for the commit: it
// returns the function that does (which must be called).
func (s *Store) writeAndQueue(ctx context.Context, bucket, key string, body io.Reader, size int64, opt PutOptions) (func() (ObjectInfo, error), error) {
	d, sum, err := s.writeData(ctx, bucket, key, body, size, opt.ContentMD5, opt.ETag != nil)
	if err != nil {
		return nil, err
	}
	v, fn := s.putVersion(bucket, key, d, sum, opt)
	wait, err := s.queueData(ctx, d, fn)
	if err != nil {
		return nil, err
	}
	return func() (ObjectInfo, error) {
		if err := wait(); err != nil {
			return ObjectInfo{}, err
		}
		return toInfo(bucket, key, v, true), nil
	}, nil
}

// precheckWrite fails fast, before any byte is written, on what the
// commit would refuse anyway: a bad name, a missing bucket, a condition
// that does not hold now. The commit checks again.
func (s *Store) precheckWrite(ctx context.Context, bucket, key, ifMatch, ifNoneMatch string) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	return s.idx.View(ctx, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		if ifMatch == "" && ifNoneMatch == "" {
			return nil
		}
		cur, err := currentVersion(tx, bucket, key)
		if err != nil {
			return err
		}
		return checkConds(cur, key, ifMatch, ifNoneMatch)
	})
}
