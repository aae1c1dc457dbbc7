package integration

import (
	"bytes"
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// upload is a multipart upload as S3ABlockOutputStream drives it.
type s3aUpload struct {
	fs    *s3aFS
	key   string
	id    string
	etags []string
}

func (fs *s3aFS) initiate(ctx context.Context, key string) (*s3aUpload, error) {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	out, err := fs.c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &fs.bucket, Key: &key})
	if err != nil {
		return nil, fmt.Errorf("CreateMultipartUpload %s: %w", key, err)
	}
	return &s3aUpload{fs: fs, key: key, id: aws.ToString(out.UploadId)}, nil
}

func (u *s3aUpload) part(ctx context.Context, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	n := int32(len(u.etags) + 1)
	out, err := u.fs.c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &u.fs.bucket, Key: &u.key, UploadId: &u.id,
		PartNumber: &n, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))})
	if err != nil {
		return fmt.Errorf("UploadPart %s #%d: %w", u.key, n, err)
	}
	u.etags = append(u.etags, aws.ToString(out.ETag))
	return nil
}

// fullParts uploads every full block of data and returns the tail.
func (u *s3aUpload) fullParts(ctx context.Context, data []byte) ([]byte, error) {
	for len(data) > s3aPartSize {
		if err := u.part(ctx, data[:s3aPartSize]); err != nil {
			return nil, err
		}
		data = data[s3aPartSize:]
	}
	return data, nil
}

func (fs *s3aFS) complete(ctx context.Context, key, id string, etags []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	parts := make([]types.CompletedPart, len(etags))
	for i, e := range etags {
		parts[i] = types.CompletedPart{ETag: aws.String(e), PartNumber: aws.Int32(int32(i + 1))}
	}
	out, err := fs.c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &fs.bucket, Key: &key,
		UploadId: &id, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		return "", fmt.Errorf("CompleteMultipartUpload %s %s: %w", key, id, err)
	}
	return aws.ToString(out.ETag), nil
}

// abortUpload returns the raw error so that callers can tell 404
// NoSuchUpload apart.
func (fs *s3aFS) abortUpload(ctx context.Context, key, id string) error {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	_, err := fs.c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &fs.bucket, Key: &key, UploadId: &id})
	return err
}

// listUploads is CommitOperations.listPendingUploadsUnderPath: prefix k/
// (the root: no prefix), first page only.
func (fs *s3aFS) listUploads(ctx context.Context, dir string) ([]types.MultipartUpload, error) {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	in := &s3.ListMultipartUploadsInput{Bucket: &fs.bucket}
	if dir != "" {
		in.Prefix = aws.String(dir + "/")
	}
	out, err := fs.c.ListMultipartUploads(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("ListMultipartUploads %s/: %w", dir, err)
	}
	return out.Uploads, nil
}
