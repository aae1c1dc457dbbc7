package objstore

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

func TestUploadAndETagOverride(t *testing.T) {
	s, _ := newTestStore(t, 4, 1)
	ctx := context.Background()
	mustBucket(t, s, "bkt")
	a := Attrs{Owner: "alice", Sys: map[string]string{"s3.sse": "rec"}}
	id, err := s.CreateMultipartUpload(ctx, "bkt", "k", PutOptions{Attrs: a})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Upload(ctx, "bkt", "k", id)
	if err != nil || got.Attrs.Owner != "alice" || got.Attrs.Sys["s3.sse"] != "rec" || got.UploadID != id {
		t.Fatalf("Upload = %+v, %v", got, err)
	}
	if _, err := s.Upload(ctx, "bkt", "other", id); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("other key: %v", err)
	}
	if _, err := s.Upload(ctx, "nob", "k", id); !errors.Is(err, ErrNoSuchBucket) {
		t.Fatalf("no bucket: %v", err)
	}
	info, err := s.Put(ctx, "bkt", "e", bytes.NewReader([]byte("data")), 4, PutOptions{ETag: func() string { return "0123" }})
	if err != nil || info.ETag != "0123" {
		t.Fatalf("override: %+v %v", info, err)
	}
	h, err := s.Head(ctx, "bkt", "e", GetOptions{})
	if err != nil || h.ETag != "0123" {
		t.Fatalf("head after override: %+v %v", h, err)
	}
}
