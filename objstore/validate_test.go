package objstore

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestValidateBucketName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"abc", true},
		{"my-bucket", true},
		{"my.bucket.name", true},
		{"1bucket", true},
		{"bucket1", true},
		{"a-b.c-d", true},
		{"123", true},
		{"192.168.5", true},         // three groups: not an address
		{"192.168.5.4.5", true},     // five groups: not an address
		{"1.2.3.a", true},           // not all digits
		{"xn-abc", true},            // only "xn--" is reserved
		{"my-s3alias-bucket", true}, // only the suffix is reserved
		{strings.Repeat("a", 63), true},
		{"", false},
		{"ab", false},
		{strings.Repeat("a", 64), false},
		{"MyBucket", false},
		{"mybucketA", false},
		{"my_bucket", false},
		{"my bucket", false},
		{"bücket", false},
		{"-abc", false},
		{"abc-", false},
		{".abc", false},
		{"abc.", false},
		{"a..b", false},
		{"my..bucket", false},
		{"192.168.5.4", false},
		{"10.0.0.1", false},
		{"255.255.255.255", false},
		{"999.999.999.999", false}, // formatted as an IP address
		{"192.168.05.4", false},    // formatted as an IP address
		{"xn--abc", false},
		{"sthree-abc", false},
		{"amzn-s3-demo-bucket", false},
		{"abc-s3alias", false},
		{"abc--ol-s3", false},
		{"abc.mrap", false},
		{"abc--x-s3", false},
		{"abc--table-s3", false},
		{"a/b", false},
		{"a\x00b", false},
	} {
		err := ValidateBucketName(tc.name)
		if tc.ok && err != nil {
			t.Errorf("%q: %v, want valid", tc.name, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalidBucketName) {
			t.Errorf("%q: %v, want ErrInvalidBucketName", tc.name, err)
		}
	}
}

func TestBuckets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	names := []string{"zeta", "alpha", "m.n", "b-c", "123"}
	for _, n := range names {
		mustBucket(t, s, n)
	}
	for _, bad := range []string{"Upper", "ab", "1.2.3.4", "xn--x", "a..b"} {
		if err := s.CreateBucket(ctx, bad, BucketOptions{}); !errors.Is(err, ErrInvalidBucketName) {
			t.Errorf("create %q: %v, want ErrInvalidBucketName", bad, err)
		}
	}
	if err := s.CreateBucket(ctx, "alpha", BucketOptions{}); !errors.Is(err, ErrBucketExists) {
		t.Fatalf("create twice: %v, want ErrBucketExists", err)
	}
	list, err := s.ListBuckets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range list {
		if b.Created.IsZero() || b.Versioning != "" {
			t.Errorf("bucket %+v", b)
		}
		got = append(got, b.Name)
	}
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(got, want) {
		t.Fatalf("list buckets %q, want %q", got, want)
	}
	if bi, err := s.HeadBucket(ctx, "m.n"); err != nil || bi.Name != "m.n" {
		t.Fatalf("head bucket: %+v %v", bi, err)
	}
	for _, op := range []struct {
		name string
		err  error
	}{
		{"head", func() error { _, err := s.HeadBucket(ctx, "nope"); return err }()},
		{"delete", s.DeleteBucket(ctx, "nope")},
		{"put", func() error { _, err := s.Put(ctx, "nope", "k", bytes.NewReader(nil), 0, PutOptions{}); return err }()},
		{"head object", func() error { _, err := s.Head(ctx, "nope", "k", GetOptions{}); return err }()},
		{"delete object", func() error { _, err := s.Delete(ctx, "nope", "k", DeleteOptions{}); return err }()},
		{"create upload", func() error { _, err := s.CreateMultipartUpload(ctx, "nope", "k", PutOptions{}); return err }()},
	} {
		if !errors.Is(op.err, ErrNoSuchBucket) {
			t.Errorf("%s on a missing bucket: %v, want ErrNoSuchBucket", op.name, op.err)
		}
	}
	if err := s.DeleteBucket(ctx, "zeta"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HeadBucket(ctx, "zeta"); !errors.Is(err, ErrNoSuchBucket) {
		t.Fatalf("head deleted bucket: %v", err)
	}
	if err := s.CreateBucket(ctx, "zeta", BucketOptions{}); err != nil {
		t.Fatalf("re-create a deleted bucket: %v", err)
	}
}

func TestDeleteBucketNotEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	for _, tc := range []struct {
		name string
		// fill leaves the bucket non-empty and returns how to empty it.
		fill func(t *testing.T, b string) (empty func())
	}{
		{"object", func(t *testing.T, b string) func() {
			mustPut(t, s, b, "k", []byte("x"))
			return func() { mustDelete(t, s, b, "k", "") }
		}},
		{"empty object", func(t *testing.T, b string) func() {
			mustPut(t, s, b, "k", nil)
			return func() { mustDelete(t, s, b, "k", "") }
		}},
		{"only versions and a delete marker", func(t *testing.T, b string) func() {
			setVersioning(t, s, b, VersioningEnabled)
			v := mustPut(t, s, b, "k", []byte("x"))
			m := mustDelete(t, s, b, "k", "")
			return func() {
				mustDelete(t, s, b, "k", m.VersionID)
				mustDelete(t, s, b, "k", v.VersionID)
			}
		}},
		{"only a delete marker", func(t *testing.T, b string) func() {
			setVersioning(t, s, b, VersioningEnabled)
			m := mustDelete(t, s, b, "never-existed", "")
			if !m.DeleteMarker {
				t.Fatalf("delete of a missing key in a versioned bucket: %+v", m)
			}
			return func() { mustDelete(t, s, b, "never-existed", m.VersionID) }
		}},
		{"only a suspended null delete marker", func(t *testing.T, b string) func() {
			setVersioning(t, s, b, VersioningSuspended)
			mustDelete(t, s, b, "k", "")
			return func() { mustDelete(t, s, b, "k", NullVersion) }
		}},
		{"an object beside an incomplete upload", func(t *testing.T, b string) func() {
			mustCreateUpload(t, s, b, "u", PutOptions{})
			mustPut(t, s, b, "k", []byte("x"))
			return func() { mustDelete(t, s, b, "k", "") }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := "b-" + strings.ReplaceAll(tc.name, " ", "-")
			mustBucket(t, s, b)
			empty := tc.fill(t, b)
			if err := s.DeleteBucket(ctx, b); !errors.Is(err, ErrBucketNotEmpty) {
				t.Fatalf("delete: %v, want ErrBucketNotEmpty", err)
			}
			if _, err := s.HeadBucket(ctx, b); err != nil {
				t.Fatalf("refused delete removed the bucket: %v", err)
			}
			empty()
			if err := s.DeleteBucket(ctx, b); err != nil {
				t.Fatalf("delete after emptying: %v", err)
			}
		})
	}
	// A bucket whose name is a prefix of a non-empty one is still empty.
	mustBucket(t, s, "pre")
	mustBucket(t, s, "prefix")
	mustPut(t, s, "prefix", "k", []byte("x"))
	if err := s.DeleteBucket(ctx, "pre"); err != nil {
		t.Fatalf("delete pre: %v", err)
	}
}

func mustDelete(t testing.TB, s *Store, bucket, key, vid string) DeleteResult {
	t.Helper()
	res, err := s.Delete(context.Background(), bucket, key, DeleteOptions{VersionID: vid})
	if err != nil {
		t.Fatalf("delete %s %q: %v", key, vid, err)
	}
	return res
}

func setVersioning(t testing.TB, s *Store, bucket, state string) {
	t.Helper()
	if err := s.SetVersioning(context.Background(), bucket, state); err != nil {
		t.Fatal(err)
	}
}

// Invalid keys are ErrInvalidKey on every operation that takes a key, and
// never a panic.
func TestInvalidKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "keys")
	mustPut(t, s, "keys", "good", []byte("x"))
	id := mustCreateUpload(t, s, "keys", "good", PutOptions{})
	body := func() *bytes.Reader { return bytes.NewReader([]byte("x")) }
	ops := []struct {
		name string
		fn   func(key string) error
	}{
		{"put", func(k string) error { _, err := s.Put(ctx, "keys", k, body(), 1, PutOptions{}); return err }},
		{"put if-none-match", func(k string) error {
			_, err := s.Put(ctx, "keys", k, body(), 1, PutOptions{IfNoneMatch: "*"})
			return err
		}},
		{"head", func(k string) error { _, err := s.Head(ctx, "keys", k, GetOptions{}); return err }},
		{"head version", func(k string) error { _, err := s.Head(ctx, "keys", k, GetOptions{VersionID: NullVersion}); return err }},
		{"open", func(k string) error { _, err := s.Open(ctx, "keys", k, GetOptions{}); return err }},
		{"delete", func(k string) error { _, err := s.Delete(ctx, "keys", k, DeleteOptions{}); return err }},
		{"delete version", func(k string) error {
			_, err := s.Delete(ctx, "keys", k, DeleteOptions{VersionID: NullVersion})
			return err
		}},
		{"copy source", func(k string) error { _, err := s.Copy(ctx, "keys", k, "keys", "dst", CopyOptions{}); return err }},
		{"copy destination", func(k string) error { _, err := s.Copy(ctx, "keys", "good", "keys", k, CopyOptions{}); return err }},
		{"rename source", func(k string) error { return s.Rename(ctx, "keys", k, "dst", RenameOptions{}) }},
		{"rename destination", func(k string) error { return s.Rename(ctx, "keys", "good", k, RenameOptions{}) }},
		{"rename prefix source", func(k string) error { _, err := s.RenamePrefix(ctx, "keys", k, "dst/", RenameOptions{}); return err }},
		{"rename prefix destination", func(k string) error { _, err := s.RenamePrefix(ctx, "keys", "go", k, RenameOptions{}); return err }},
		{"create upload", func(k string) error { _, err := s.CreateMultipartUpload(ctx, "keys", k, PutOptions{}); return err }},
		{"put part", func(k string) error { _, err := s.PutPart(ctx, "keys", k, id, 1, body(), 1, PartOptions{}); return err }},
		{"copy part source", func(k string) error {
			_, err := s.CopyPart(ctx, "keys", "good", id, 1, "keys", k, "", 0, -1)
			return err
		}},
		{"complete", func(k string) error {
			_, err := s.CompleteMultipartUpload(ctx, "keys", k, id, []CompletePart{{Number: 1, ETag: "x"}}, PutOptions{})
			return err
		}},
	}
	bad := map[string]string{
		"empty":        "",
		"too long":     strings.Repeat("k", MaxKeyLen+1),
		"too long utf": strings.Repeat("é", MaxKeyLen/2) + "x",
		"not utf-8":    "a\xffb",
		"cut utf-8":    "é"[:1],
		"nul":          "a\x00b",
		"only nul":     "\x00",
	}
	for kname, key := range bad {
		for _, op := range ops {
			if err := op.fn(key); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("%s with a key that is %s: %v, want ErrInvalidKey", op.name, kname, err)
			}
		}
	}
	// The limit is inclusive, and unicode and odd bytes are fine.
	for _, key := range []string{strings.Repeat("k", MaxKeyLen), "é/日本/😀", "a\x01b", " ", "../x", "a//b", "\t"} {
		data := []byte(key)
		if _, err := s.Put(ctx, "keys", key, bytes.NewReader(data), int64(len(data)), PutOptions{}); err != nil {
			t.Errorf("put %q: %v", key, err)
			continue
		}
		if got := readAll(t, s, "keys", key, GetOptions{}); !bytes.Equal(got, data) {
			t.Errorf("read %q: %q", key, got)
		}
	}
	// The object store state is unharmed.
	if got := readAll(t, s, "keys", "good", GetOptions{}); string(got) != "x" {
		t.Fatalf("good = %q", got)
	}
	if err := s.AbortMultipartUpload(ctx, "keys", "good", id); err != nil {
		t.Fatal(err)
	}
}

func TestValidateKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"a", true},
		{strings.Repeat("a", MaxKeyLen), true},
		{"日本語", true},
		{"a\x7fb", true},
		{"", false},
		{strings.Repeat("a", MaxKeyLen+1), false},
		{"\xc3", false},
		{"\xed\xa0\x80", false}, // a UTF-16 surrogate is not UTF-8
		{"a\x00", false},
	} {
		err := ValidateKey(tc.key)
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, ErrInvalidKey)) {
			t.Errorf("ValidateKey(%q) = %v, ok %v", tc.key, err, tc.ok)
		}
	}
}
