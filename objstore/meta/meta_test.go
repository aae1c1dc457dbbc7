package meta_test

import (
	"bytes"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

func TestVersionKeysSortNewestFirst(t *testing.T) {
	var keys [][]byte
	for _, seq := range []uint64{1, 7, 3, 1 << 40} {
		keys = append(keys, meta.VersionKey("bkt", "a/b", seq))
	}
	keys = append(keys, meta.VersionKey("bkt", "a/b0", 2), meta.VersionKey("bkt", "a", 9))
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	var got []string
	for _, k := range keys {
		b, key, seq, ok := meta.SplitVersionKey(k)
		if !ok || b != "bkt" {
			t.Fatalf("split %q", k)
		}
		got = append(got, key+"@"+string(rune('0'+seq%10)))
	}
	want := []string{"a@9", "a/b@6", "a/b@7", "a/b@3", "a/b@1", "a/b0@2"} // 1<<40 % 10 = 6
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestSplitKeys(t *testing.T) {
	for _, tc := range []struct {
		key        []byte
		bucket, k  string
		ok         bool
		isVersion  bool
		versionSeq uint64
	}{
		{key: meta.ObjectKey("b", "k/x"), bucket: "b", k: "k/x", ok: true},
		{key: []byte("nosep"), ok: false},
		{key: meta.VersionKey("b", "k", 42), bucket: "b", k: "k", ok: true, isVersion: true, versionSeq: 42},
		{key: []byte("short"), ok: false, isVersion: true},
	} {
		if tc.isVersion {
			b, k, seq, ok := meta.SplitVersionKey(tc.key)
			if ok != tc.ok || (ok && (b != tc.bucket || k != tc.k || seq != tc.versionSeq)) {
				t.Errorf("meta.SplitVersionKey(%q) = %q %q %d %v", tc.key, b, k, seq, ok)
			}
			continue
		}
		b, k, ok := meta.SplitObjectKey(tc.key)
		if ok != tc.ok || b != tc.bucket || k != tc.k {
			t.Errorf("meta.SplitObjectKey(%q) = %q %q %v", tc.key, b, k, ok)
		}
	}
}

func TestBoltLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	b, err := meta.OpenBolt(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if _, err := meta.OpenBolt(path, 100*time.Millisecond); err == nil {
		t.Fatal("second open of a locked index succeeded")
	}
}
