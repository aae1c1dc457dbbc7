package objstore

import (
	"context"
	"testing"
)

// TestHeadBucketCacheNeverStale: HeadBucket answers from its cache only
// while the record is unchanged, and callers own the Config map.
func TestHeadBucketCacheNeverStale(t *testing.T) {
	s, _ := newTestStore(t, 4, 1)
	ctx := context.Background()
	mustBucket(t, s, "bkt")
	for i, doc := range []string{"one", "two", "", "three"} {
		if err := s.SetBucketConfig(ctx, "bkt", "face.doc", []byte(doc)); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2; j++ { // the second read is the cached one
			b, err := s.HeadBucket(ctx, "bkt")
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b.Config["face.doc"]); got != doc {
				t.Fatalf("step %d read %d: %q, want %q", i, j, got, doc)
			}
			if b.Config != nil {
				b.Config["other"] = []byte("caller's own") // must not reach the cache
			}
		}
	}
	if b, _ := s.HeadBucket(ctx, "bkt"); b.Config["other"] != nil {
		t.Fatal("a caller's change reached the cache")
	}
	if err := s.DeleteBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HeadBucket(ctx, "bkt"); err == nil {
		t.Fatal("a deleted bucket is still cached")
	}
	mustBucket(t, s, "bkt")
	if b, err := s.HeadBucket(ctx, "bkt"); err != nil || len(b.Config) != 0 {
		t.Fatalf("re-created bucket: %+v %v", b, err)
	}
}
