package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

// testPatch: patches on every engine, in a versioned and an unversioned
// bucket: each one over the last (an overwrite inside, an append, a
// shrink, an extension with a sparse write), the content matching a
// model after each, every version readable, and the data the patches
// share leaving fsck clean (checked when the store closes).
func testPatch(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
	steps := []struct {
		size  int64
		dirty []objstore.Range
	}{
		{200 << 10, []objstore.Range{{Offset: 70 << 10, Length: 4096}}},
		{200<<10 + 300, []objstore.Range{{Offset: 200 << 10, Length: 300}}},
		{150 << 10, nil},
		{400 << 10, []objstore.Range{{Offset: 300 << 10, Length: 10}}},
		{400 << 10, []objstore.Range{{Offset: 0, Length: 1}, {Offset: 64 << 10, Length: 64 << 10}}},
	}
	for _, versioned := range []bool{false, true} {
		b := "plain"
		if versioned {
			b = "versioned"
		}
		bucket(t, s, b)
		if versioned {
			if err := s.SetVersioning(ctx, b, objstore.VersioningEnabled); err != nil {
				t.Fatal(err)
			}
		}
		model := data(200<<10, 300)
		if _, err := s.Put(ctx, b, "file", bytes.NewReader(model), int64(len(model)), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		var versions []objstore.ObjectInfo
		var contents [][]byte
		for i, st := range steps {
			src := data(int(st.size), uint64(310+i))
			base, err := s.Open(ctx, b, "file", objstore.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.PatchAsync(ctx, b, "file", objstore.Patch{Base: base, Size: st.size, Dirty: st.dirty, Src: bytes.NewReader(src)}, objstore.PutOptions{})
			if err != nil {
				t.Fatalf("%s: patch %d: %v", b, i, err)
			}
			info, err := p.Wait(ctx)
			_ = base.Close()
			if err != nil {
				t.Fatalf("%s: patch %d: %v", b, i, err)
			}
			next := make([]byte, st.size)
			copy(next, model)
			for _, r := range st.dirty {
				copy(next[r.Offset:r.End()], src[r.Offset:r.End()])
			}
			model = next
			versions = append(versions, info)
			contents = append(contents, model)
			got, err := read(t, s, b, "file", objstore.GetOptions{})
			if err != nil || !bytes.Equal(got, model) {
				t.Fatalf("%s: content after patch %d differs (%v)", b, i, err)
			}
		}
		if versioned {
			for i, v := range versions {
				got, err := read(t, s, b, "file", objstore.GetOptions{VersionID: v.VersionID})
				if err != nil || !bytes.Equal(got, contents[i]) {
					t.Fatalf("%s: version %d differs (%v)", b, i, err)
				}
			}
		}
	}
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"plain", "versioned"} {
		if _, err := read(t, s, b, "file", objstore.GetOptions{}); err != nil {
			t.Fatalf("%s after clean: %v", b, err)
		}
	}
}
