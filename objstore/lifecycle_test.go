package objstore

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestExpireUploads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	for _, b := range []string{"life", "life2", "norules"} {
		mustBucket(t, s, b)
	}
	rules := []LifecycleRule{
		{ID: "tmp", Prefix: "tmp/", Enabled: true, AbortIncompleteDays: 1},
		{ID: "off", Prefix: "keep/", Enabled: false, AbortIncompleteDays: 1},
	}
	if err := s.SetLifecycle(ctx, "life", rules); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Lifecycle(ctx, "life"); err != nil || !reflect.DeepEqual(got, rules) {
		t.Fatalf("lifecycle: %+v %v", got, err)
	}
	// Overlapping rules abort an upload once.
	if err := s.SetLifecycle(ctx, "life2", []LifecycleRule{
		{Prefix: "", Enabled: true, AbortIncompleteDays: 1},
		{Prefix: "tmp/", Enabled: true, AbortIncompleteDays: 1},
	}); err != nil {
		t.Fatal(err)
	}
	base := shardFileCount(t, opt)
	uploads := map[string][]string{
		"life":    {"tmp/a", "tmp/b", "tmp/b", "keep/c", "tmpx", "other"},
		"life2":   {"tmp/z"},
		"norules": {"tmp/a"},
	}
	for b, keys := range uploads {
		for i, k := range keys {
			id := mustCreateUpload(t, s, b, k, PutOptions{})
			mustPutPart(t, s, b, k, id, 1, randBytes(1000, uint64(i)))
		}
	}
	withParts := shardFileCount(t, opt)

	now := time.Now()
	for _, at := range []time.Time{now, now.Add(12 * time.Hour), now.Add(23 * time.Hour)} {
		if n, err := s.ExpireUploads(ctx, at); err != nil || n != 0 {
			t.Fatalf("expire at +%v: %d %v, want 0", at.Sub(now), n, err)
		}
	}
	n, err := s.ExpireUploads(ctx, now.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("expired %d uploads, want 4 (life tmp/a, tmp/b twice; life2 tmp/z)", n)
	}
	for b, want := range map[string][]string{
		"life":    {"keep/c", "other", "tmpx"},
		"life2":   nil,
		"norules": {"tmp/a"},
	} {
		ups, _, err := s.ListMultipartUploads(ctx, b, ListUploadsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range ups {
			got = append(got, u.Key)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: uploads left %q, want %q", b, got, want)
		}
	}
	if n, err := s.ExpireUploads(ctx, now.Add(48*time.Hour)); err != nil || n != 0 {
		t.Fatalf("second expire: %d %v, want 0", n, err)
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != withParts-4*4 {
		t.Fatalf("aborted parts not freed: %d shard files, want %d (base %d)", got, withParts-16, base)
	}

	// Removing the rules stops the expiry.
	if err := s.SetLifecycle(ctx, "life", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Lifecycle(ctx, "life"); err != nil || len(got) != 0 {
		t.Fatalf("lifecycle after removal: %+v %v", got, err)
	}
	id := mustCreateUpload(t, s, "life", "tmp/late", PutOptions{})
	if n, err := s.ExpireUploads(ctx, now.Add(100*24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("expire without rules: %d %v, want 0", n, err)
	}
	if _, _, err := s.ListParts(ctx, "life", "tmp/late", id, 0, 0); err != nil {
		t.Fatalf("upload expired without a rule: %v", err)
	}
}

func TestLifecycleErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "lerr")
	for _, tc := range []struct {
		name   string
		bucket string
		rules  []LifecycleRule
		want   error
	}{
		{"negative abort days", "lerr", []LifecycleRule{{ID: "x", Enabled: true, AbortIncompleteDays: -1}}, ErrInvalidArgument},
		{"negative expiration days", "lerr", []LifecycleRule{{ID: "x", Enabled: true, ExpirationDays: -1}}, ErrInvalidArgument},
		{"missing bucket", "nope", nil, ErrNoSuchBucket},
	} {
		if err := s.SetLifecycle(ctx, tc.bucket, tc.rules); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := s.Lifecycle(ctx, "nope"); !errors.Is(err, ErrNoSuchBucket) {
		t.Errorf("lifecycle of a missing bucket: %v", err)
	}
	for _, st := range []string{"", "enabled", "Disabled"} {
		if err := s.SetVersioning(ctx, "lerr", st); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("versioning %q: %v, want ErrInvalidArgument", st, err)
		}
	}
	if err := s.SetVersioning(ctx, "nope", VersioningEnabled); !errors.Is(err, ErrNoSuchBucket) {
		t.Errorf("versioning of a missing bucket: %v", err)
	}
	if n, err := s.ExpireUploads(ctx, time.Now().Add(1000*24*time.Hour)); n != 0 || err != nil {
		t.Errorf("expire with no rules: %d %v", n, err)
	}
}

func TestExpireObjects(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	for _, b := range []string{"plain", "versioned"} {
		mustBucket(t, s, b)
		for _, k := range []string{"logs/a", "logs/b", "keep/c"} {
			mustPut(t, s, b, k, []byte(k))
		}
		if err := s.SetLifecycle(ctx, b, []LifecycleRule{{ID: "old-logs", Prefix: "logs/", Enabled: true, ExpirationDays: 3}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetVersioning(ctx, "versioned", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{0, 0}, {2 * 24 * time.Hour, 0}, {4 * 24 * time.Hour, 4}, {5 * 24 * time.Hour, 0}} {
		n, err := s.ExpireObjects(ctx, time.Now().Add(tc.at))
		if err != nil || n != tc.want {
			t.Fatalf("at +%v: expired %d (%v), want %d", tc.at, n, err, tc.want)
		}
	}
	for _, b := range []string{"plain", "versioned"} {
		if _, err := s.Head(ctx, b, "logs/a", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
			t.Errorf("%s/logs/a after expiry: %v", b, err)
		}
		if _, err := s.Head(ctx, b, "keep/c", GetOptions{}); err != nil {
			t.Errorf("%s/keep/c: %v", b, err)
		}
	}
	// In the versioned bucket the data stays reachable behind a delete marker.
	page, err := s.ListVersions(ctx, "versioned", ListVersionsOptions{Prefix: "logs/a"})
	if err != nil || len(page.Versions) != 2 || !page.Versions[0].DeleteMarker {
		t.Fatalf("versions of logs/a: %+v %v", page.Versions, err)
	}
}
