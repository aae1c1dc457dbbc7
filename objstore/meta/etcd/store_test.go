package etcd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// TestStore runs an objstore.Store on the etcd index through a workload
// of every kind of index transaction the store makes (buckets, puts small
// and large, overwrites, conditional puts, lists, renames, deletes,
// multipart, concurrent writers that group commit batches, the cleaner),
// then closes it and runs fsck over a new index on the same prefix: it
// must be clean. It runs twice: with the default limits, and with limits
// so tight that the store's group commit must split its batches.
func TestStore(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	for _, tc := range []struct {
		name   string
		limits meta.Limits
	}{
		{"default limits", meta.Limits{}},
		{"tight limits", meta.Limits{MaxWrites: 12, MaxBytes: 16 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/cairn/store/" + strings.ReplaceAll(tc.name, " ", "-"), Limits: tc.limits}
			idx := openIndex(t, cfg)
			opt := objstore.Options{Index: idx, Dir: t.TempDir(), DriveCount: 3, Parity: 1, BlockSize: 64 << 10, MinPartSize: 1, NoBackground: true}
			s, err := objstore.Open(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			storeWorkload(t, s, idx.Limits())
			stats := idx.Stats()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("index: %+v", stats)
			storetest.Check(t, opt, openIndex(t, cfg))
		})
	}
}

func storeWorkload(t *testing.T, s *objstore.Store, lim meta.Limits) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	body := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	put := func(key string, b []byte, opt objstore.PutOptions) (objstore.ObjectInfo, error) {
		return s.Put(ctx, "bkt", key, bytes.NewReader(b), int64(len(b)), opt)
	}
	mustPut := func(key string, b []byte) objstore.ObjectInfo {
		t.Helper()
		info, err := put(key, b, objstore.PutOptions{})
		if err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		return info
	}
	mustRead := func(key string, want []byte) {
		t.Helper()
		rd, err := s.Open(ctx, "bkt", key, objstore.GetOptions{})
		if err != nil {
			t.Fatalf("open %s: %v", key, err)
		}
		defer rd.Close()
		got, err := io.ReadAll(rd)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %s: %d bytes (%v), want the %d written", key, len(got), err, len(want))
		}
	}
	list := func(opt objstore.ListOptions) []string { return storetest.Keys(t, s, "bkt", opt) }

	if err := s.CreateBucket(ctx, "bkt", objstore.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket(ctx, "bkt", objstore.BucketOptions{}); !errors.Is(err, objstore.ErrBucketExists) {
		t.Fatalf("second create: %v", err)
	}

	// Puts, small (packed) and large (several blocks), and reads.
	small, large := body(300), body(200<<10)
	mustPut("dir/small", small)
	mustPut("dir/large", large)
	mustRead("dir/small", small)
	mustRead("dir/large", large)

	// Overwrite.
	small2 := body(500)
	first := mustPut("dir/over", small)
	mustPut("dir/over", small2)
	mustRead("dir/over", small2)

	// Conditional puts: create only, compare-and-swap.
	if _, err := put("dir/over", small, objstore.PutOptions{IfNoneMatch: "*"}); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("If-None-Match * on an existing key: %v", err)
	}
	if _, err := put("dir/new", small, objstore.PutOptions{IfNoneMatch: "*"}); err != nil {
		t.Fatalf("If-None-Match * on a new key: %v", err)
	}
	if _, err := put("dir/over", small, objstore.PutOptions{IfMatch: first.ETag}); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("If-Match of an old ETag: %v", err)
	}
	cur, err := s.Head(ctx, "bkt", "dir/over", objstore.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put("dir/over", small, objstore.PutOptions{IfMatch: cur.ETag}); err != nil {
		t.Fatalf("If-Match of the current ETag: %v", err)
	}
	mustRead("dir/over", small)

	// Racing creates of one key: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < 6; i++ {
		b := body(100 + i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := put("race", b, objstore.PutOptions{IfNoneMatch: "*"})
			switch {
			case err == nil:
				mu.Lock()
				wins++
				mu.Unlock()
			case !errors.Is(err, objstore.ErrPreconditionFailed):
				t.Errorf("racing create: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d racing creates won, want 1", wins)
	}

	// Concurrent writers: their commits share index transactions.
	want := map[string][]byte{}
	for w := 0; w < 8; w++ {
		bodies := make([][]byte, 10)
		for i := range bodies {
			bodies[i] = body(64 + 50*i)
			want[fmt.Sprintf("many/%d-%02d", w, i)] = bodies[i]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, b := range bodies {
				if _, err := put(fmt.Sprintf("many/%d-%02d", w, i), b, objstore.PutOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for k, b := range want {
		mustRead(k, b)
	}

	// Lists, with a delimiter and pages.
	if got := list(objstore.ListOptions{Prefix: "dir/"}); fmt.Sprint(got) != "[dir/large dir/new dir/over dir/small]" {
		t.Fatalf("list dir/: %v", got)
	}
	if got := list(objstore.ListOptions{Delimiter: "/"}); fmt.Sprint(got) != "[race dir/* many/*]" {
		t.Fatalf("list with a delimiter: %v", got)
	}
	var all []string
	for after := ""; ; {
		page, err := s.List(ctx, "bkt", objstore.ListOptions{Prefix: "many/", After: after, MaxKeys: 7})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Objects {
			all = append(all, o.Key)
		}
		if !page.IsTruncated {
			break
		}
		after = page.NextMarker
	}
	if len(all) != len(want) || !sort.StringsAreSorted(all) {
		t.Fatalf("paged list: %d keys, want %d, in order", len(all), len(want))
	}

	// Renames: one key, and a prefix.
	if err := s.Rename(ctx, "bkt", "dir/new", "dir/renamed", objstore.RenameOptions{}); err != nil {
		t.Fatal(err)
	}
	mustRead("dir/renamed", small)
	// A prefix rename is one transaction: within the index's bound it
	// moves every key; past it, it fails with nothing moved. Moving a key
	// writes 4 entries (its objects and versions entries, at both names).
	for _, r := range []struct{ from, to string }{
		{"many/0-0", "moved/0-0"}, // 10 keys
		{"many/1-00", "moved/1-00"},
		{"many/", "moved/"}, // the rest
	} {
		keys := len(list(objstore.ListOptions{Prefix: r.from}))
		n, err := s.RenamePrefix(ctx, "bkt", r.from, r.to, objstore.RenameOptions{})
		if 4*keys <= lim.MaxWrites {
			if err != nil || n != keys {
				t.Fatalf("rename prefix %s of %d keys: %d %v", r.from, keys, n, err)
			}
			continue
		}
		if !errors.Is(err, objstore.ErrTooManyChanges) || n != 0 {
			t.Fatalf("rename prefix %s of %d keys past %+v: %d %v, want ErrTooManyChanges", r.from, keys, lim, n, err)
		}
		if left := len(list(objstore.ListOptions{Prefix: r.from})); left != keys {
			t.Fatalf("a refused prefix rename moved keys: %d left of %d", left, keys)
		}
	}

	// Multipart.
	id, err := s.CreateMultipartUpload(ctx, "bkt", "mp", objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var whole []byte
	var parts []objstore.CompletePart
	for n := 1; n <= 3; n++ {
		p := body(70<<10 + n)
		whole = append(whole, p...)
		info, err := s.PutPart(ctx, "bkt", "mp", id, n, bytes.NewReader(p), int64(len(p)), objstore.PartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, objstore.CompletePart{Number: n, ETag: info.ETag})
	}
	if _, err := s.CompleteMultipartUpload(ctx, "bkt", "mp", id, parts, objstore.PutOptions{IfNoneMatch: "*"}); err != nil {
		t.Fatal(err)
	}
	mustRead("mp", whole)

	// Deletes, then the cleaner frees what nothing references.
	for _, k := range []string{"dir/large", "dir/over", "moved/0-00"} {
		if _, err := s.Delete(ctx, "bkt", k, objstore.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Head(ctx, "bkt", k, objstore.GetOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
			t.Fatalf("deleted %s: %v", k, err)
		}
	}
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
}
