package meta

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

func openTest(t *testing.T) *Bolt {
	t.Helper()
	b, err := OpenBolt(filepath.Join(t.TempDir(), "meta", "index.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestVersionKeysSortNewestFirst(t *testing.T) {
	var keys [][]byte
	for _, seq := range []uint64{1, 7, 3, 1 << 40} {
		keys = append(keys, VersionKey("bkt", "a/b", seq))
	}
	keys = append(keys, VersionKey("bkt", "a/b0", 2), VersionKey("bkt", "a", 9))
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	var got []string
	for _, k := range keys {
		b, key, seq, ok := SplitVersionKey(k)
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
		{key: ObjectKey("b", "k/x"), bucket: "b", k: "k/x", ok: true},
		{key: []byte("nosep"), ok: false},
		{key: VersionKey("b", "k", 42), bucket: "b", k: "k", ok: true, isVersion: true, versionSeq: 42},
		{key: []byte("short"), ok: false, isVersion: true},
	} {
		if tc.isVersion {
			b, k, seq, ok := SplitVersionKey(tc.key)
			if ok != tc.ok || (ok && (b != tc.bucket || k != tc.k || seq != tc.versionSeq)) {
				t.Errorf("SplitVersionKey(%q) = %q %q %d %v", tc.key, b, k, seq, ok)
			}
			continue
		}
		b, k, ok := SplitObjectKey(tc.key)
		if ok != tc.ok || b != tc.bucket || k != tc.k {
			t.Errorf("SplitObjectKey(%q) = %q %q %v", tc.key, b, k, ok)
		}
	}
}

func TestBoltTransactions(t *testing.T) {
	ctx := context.Background()
	b := openTest(t)
	boom := errors.New("boom")
	// A failed update leaves nothing behind.
	err := b.Update(ctx, func(tx Tx) error {
		if err := tx.Put(Objects, []byte("k"), []byte("v")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("update error %v", err)
	}
	_ = b.View(ctx, func(tx Tx) error {
		if tx.Get(Objects, []byte("k")) != nil {
			t.Error("rolled-back write visible")
		}
		if tx.Writable() {
			t.Error("view is writable")
		}
		return nil
	})
	var seqs []uint64
	for i := 0; i < 3; i++ {
		if err := b.Update(ctx, func(tx Tx) error {
			s, err := tx.NextSeq()
			seqs = append(seqs, s)
			if err != nil {
				return err
			}
			return tx.Put(Objects, []byte{byte('a' + i)}, Encode(Version{Seq: s}))
		}); err != nil {
			t.Fatal(err)
		}
	}
	if seqs[0] >= seqs[1] || seqs[1] >= seqs[2] {
		t.Fatalf("sequence not increasing: %v", seqs)
	}
	_ = b.View(ctx, func(tx Tx) error {
		c := tx.Cursor(Objects)
		n := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var ver Version
			if err := Decode(v, &ver); err != nil {
				t.Fatal(err)
			}
			if ver.Seq != seqs[n] {
				t.Errorf("key %q seq %d, want %d", k, ver.Seq, seqs[n])
			}
			n++
		}
		if k, _ := c.Last(); string(k) != "c" {
			t.Errorf("last %q", k)
		}
		return nil
	})
	if err := Decode([]byte("{not json"), &Version{}); !errors.Is(err, ErrCorruptRecord) {
		t.Fatalf("decode garbage: %v", err)
	}
}

func TestBoltLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	b, err := OpenBolt(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if _, err := OpenBolt(path, 100*time.Millisecond); err == nil {
		t.Fatal("second open of a locked index succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.View(ctx, func(Tx) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("view with cancelled ctx: %v", err)
	}
}
