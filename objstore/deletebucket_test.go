package objstore

import (
	"context"
	"errors"
	"testing"
)

// TestDeleteBucketAbortsUploads: a bucket holding only incomplete multipart
// uploads is deleted with them (AWS's general purpose buckets), their parts'
// data freed; an object or version still refuses the delete and leaves the
// uploads alone. newTestStore's fsck checks the index after each case.
func TestDeleteBucketAbortsUploads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		uploads []int // parts per upload in the bucket
		object  bool  // an object beside the uploads
	}{
		{"one upload without parts", []int{0}, false},
		{"one upload with parts", []int{2}, false},
		{"several uploads", []int{1, 0, 3}, false},
		{"two uploads of one key", []int{1, 1}, false},
		{"uploads beside an object", []int{2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, opt := newTestStore(t, 4, 2)
			mustBucket(t, s, "bkt")
			mustBucket(t, s, "bkt-more") // a bucket whose name the first one prefixes
			otherID := mustCreateUpload(t, s, "bkt-more", "k", PutOptions{})
			mustPutPart(t, s, "bkt-more", "k", otherID, 1, randBytes(10, 9))
			if tc.object {
				mustPut(t, s, "bkt", "obj", []byte("x"))
			}
			base := shardFileCount(t, opt)
			var ids []string
			for i, n := range tc.uploads {
				key := "k"
				if tc.name != "two uploads of one key" {
					key = string(rune('a' + i))
				}
				id := mustCreateUpload(t, s, "bkt", key, PutOptions{})
				ids = append(ids, id)
				for p := 1; p <= n; p++ {
					mustPutPart(t, s, "bkt", key, id, p, randBytes(100, uint64(10*i+p)))
				}
			}
			err := s.DeleteBucket(ctx, "bkt")
			if tc.object {
				if !errors.Is(err, ErrBucketNotEmpty) {
					t.Fatalf("delete with an object: %v, want ErrBucketNotEmpty", err)
				}
				ups, _, err := s.ListMultipartUploads(ctx, "bkt", ListUploadsOptions{})
				if err != nil || len(ups) != len(ids) {
					t.Fatalf("refused delete touched the uploads: %d of %d, %v", len(ups), len(ids), err)
				}
				return
			}
			if err != nil {
				t.Fatalf("delete a bucket of uploads only: %v", err)
			}
			if _, err := s.HeadBucket(ctx, "bkt"); !errors.Is(err, ErrNoSuchBucket) {
				t.Fatalf("head after delete: %v, want ErrNoSuchBucket", err)
			}
			mustClean(t, s)
			if got := shardFileCount(t, opt); got != base {
				t.Fatalf("after delete and Clean: %d shard files, want %d (the parts' data freed)", got, base)
			}
			// The bucket's name is free again and holds nothing of the old uploads.
			mustBucket(t, s, "bkt")
			if ups, _, err := s.ListMultipartUploads(ctx, "bkt", ListUploadsOptions{}); err != nil || len(ups) != 0 {
				t.Fatalf("re-created bucket: uploads %v, %v", ups, err)
			}
			for _, id := range ids {
				if _, _, err := s.ListParts(ctx, "bkt", "k", id, 0, 0); !errors.Is(err, ErrNoSuchUpload) {
					t.Fatalf("list parts of a deleted bucket's upload: %v, want ErrNoSuchUpload", err)
				}
			}
			// The other bucket's upload is untouched.
			if parts, _, err := s.ListParts(ctx, "bkt-more", "k", otherID, 0, 0); err != nil || len(parts) != 1 {
				t.Fatalf("other bucket's upload: %v, %v", parts, err)
			}
		})
	}
}
