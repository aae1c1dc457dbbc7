package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

// testAppend: appends on every engine, in a versioned and an unversioned
// bucket: the content grows by each body, a wrong offset changes
// nothing, every version stays readable, and the references the appends
// share leave fsck clean (checked when the store closes).
func testAppend(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
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
		var model []byte
		var versions []objstore.ObjectInfo
		var contents [][]byte
		// Small bodies are packed, larger ones span blocks of 64 KiB.
		for i, n := range []int{300, 70 << 10, 10, 140 << 10, 4000} {
			body := data(n, uint64(200+i))
			info, err := s.Append(ctx, b, "log", int64(len(model)), bytes.NewReader(body), int64(n), objstore.AppendOptions{})
			if err != nil {
				t.Fatalf("%s: append %d: %v", b, i, err)
			}
			model = append(model, body...)
			if info.Size != int64(len(model)) {
				t.Fatalf("%s: append %d: size %d, want %d", b, i, info.Size, len(model))
			}
			versions = append(versions, info)
			contents = append(contents, bytes.Clone(model))
			if _, err := s.Append(ctx, b, "log", int64(len(model))-1, bytes.NewReader(body), int64(n), objstore.AppendOptions{}); !errors.Is(err, objstore.ErrInvalidWriteOffset) {
				t.Fatalf("%s: append at a stale offset: %v, want ErrInvalidWriteOffset", b, err)
			}
		}
		got, err := read(t, s, b, "log", objstore.GetOptions{})
		if err != nil || !bytes.Equal(got, model) {
			t.Fatalf("%s: content after the appends differs (%v)", b, err)
		}
		if versioned {
			for i, v := range versions {
				got, err := read(t, s, b, "log", objstore.GetOptions{VersionID: v.VersionID})
				if err != nil || !bytes.Equal(got, contents[i]) {
					t.Fatalf("%s: version %d differs (%v)", b, i, err)
				}
			}
		}
	}
	if n, err := s.Clean(ctx); err != nil || n != 0 {
		t.Fatalf("clean: freed %d (%v), want 0: every version's data is in use", n, err)
	}
}
