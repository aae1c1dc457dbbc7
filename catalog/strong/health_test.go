package strong

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// seed writes a record into each of the warehouses.
func seed(t *testing.T, b *Backing, whs ...string) {
	t.Helper()
	for _, wh := range whs {
		if _, err := b.Put(context.Background(), wh, catalog.KindNamespace, "ns", []byte(`{"owner":"t"}`), ""); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Put(context.Background(), "", catalog.KindWarehouse, wh, []byte(`{}`), ""); err != nil {
			t.Fatal(err)
		}
	}
}

// TestValidationFailsClosed: a damaged snapshot makes its warehouse fail
// closed, at Open and on a running backing, while the others serve; a
// valid snapshot put back is served again.
func TestValidationFailsClosed(t *testing.T) {
	damage := []struct {
		name string
		edit func([]byte) []byte
	}{
		{"flipped body byte", func(d []byte) []byte { d[len(d)-5] ^= 0x01; return d }},
		{"flipped magic", func(d []byte) []byte { d[0] ^= 0x20; return d }},
		{"truncated", func(d []byte) []byte { return d[:len(d)-1] }},
		{"empty", func([]byte) []byte { return nil }},
		{"bad checksum digit", func(d []byte) []byte {
			i := bytes.IndexByte(d, '\n') - 1
			d[i] = map[bool]byte{true: '1', false: '0'}[d[i] == '0']
			return d
		}},
		{"unknown format", func(d []byte) []byte {
			return bytes.Replace(d, []byte(magic+" 1 "), []byte(magic+" 3 "), 1)
		}},
		{"other warehouse's snapshot", func([]byte) []byte { return nil }}, // replaced below
		{"broken invariant with good checksum", func(d []byte) []byte {
			s, err := decodeAny(d)
			if err != nil {
				panic(err)
			}
			g := &s.Kinds[0]
			g.Records = append(g.Records, g.Records[0]) // a repeated key
			out, _ := encode(s)
			return out
		}},
	}
	for _, c := range damage {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st := newStore(t)
			b := openBacking(t, st, Options{})
			seed(t, b, "good", "bad")
			orig := snapshotBytes(t, st, "bad")
			bad := c.edit(bytes.Clone(orig))
			if c.name == "other warehouse's snapshot" {
				bad = snapshotBytes(t, st, "good")
			}
			putRaw(t, st, "bad", bad)

			check := func(b *Backing) {
				t.Helper()
				if _, err := b.Get(ctx, "bad", catalog.KindNamespace, "ns"); !errors.Is(err, ErrSnapshotInvalid) {
					t.Fatalf("get from bad: %v", err)
				}
				if _, _, err := b.List(ctx, "bad", catalog.KindNamespace, catalog.ListOptions{}); !errors.Is(err, ErrSnapshotInvalid) {
					t.Fatalf("list of bad: %v", err)
				}
				if _, err := b.Put(ctx, "bad", catalog.KindNamespace, "x", nil, ""); !errors.Is(err, ErrSnapshotInvalid) {
					t.Fatalf("put to bad: %v", err)
				}
				if err := b.Delete(ctx, "bad", catalog.KindNamespace, "ns", catalog.AnyVersion); !errors.Is(err, ErrSnapshotInvalid) {
					t.Fatalf("delete in bad: %v", err)
				}
				if _, err := b.Get(ctx, "good", catalog.KindNamespace, "ns"); err != nil {
					t.Fatalf("good warehouse: %v", err)
				}
				if _, err := b.Put(ctx, "good", catalog.KindTable, "t-"+strings.ReplaceAll(t.Name(), "/", "-"), nil, catalog.AnyVersion); err != nil {
					t.Fatalf("write to good: %v", err)
				}
				u := b.Unhealthy()
				if len(u) != 1 || !errors.Is(u["bad"], ErrSnapshotInvalid) {
					t.Fatalf("unhealthy: %v", u)
				}
			}
			check(b)                             // the running backing notices
			check(openBacking(t, st, Options{})) // and so does a restart
			if !bytes.Equal(snapshotBytes(t, st, "bad"), bad) {
				t.Fatal("a failed-closed warehouse was written")
			}
			putRaw(t, st, "bad", orig) // a restore
			if _, err := b.Get(ctx, "bad", catalog.KindNamespace, "ns"); err != nil {
				t.Fatalf("after restore: %v", err)
			}
			if len(b.Unhealthy()) != 0 {
				t.Fatalf("unhealthy after restore: %v", b.Unhealthy())
			}
		})
	}
}

// TestVanished: a snapshot deleted after it was seen fails closed.
func TestVanished(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	b := openBacking(t, st, Options{})
	seed(t, b, "w")
	if _, err := st.Delete(ctx, Bucket, SnapshotKey("w"), objstoreDelete()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "w", catalog.KindNamespace, "ns"); !errors.Is(err, ErrSnapshotMissing) {
		t.Fatalf("get: %v", err)
	}
	if _, err := b.Put(ctx, "w", catalog.KindNamespace, "ns2", nil, ""); !errors.Is(err, ErrSnapshotMissing) {
		t.Fatalf("put: %v", err)
	}
	if u := b.Unhealthy(); u["w"] == nil {
		t.Fatalf("unhealthy: %v", u)
	}
}

// TestAmbiguousPublish: a publish whose answer is lost is resolved by
// re-reading: landed = success, not landed = an error and nothing
// applied.
func TestAmbiguousPublish(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	lost := errors.New("connection reset")
	var after, before bool
	b := openBacking(t, st, Options{Hooks: Hooks{
		AfterPublish:  func(string) error { return map[bool]error{true: lost}[after] },
		BeforePublish: func(string) error { return map[bool]error{true: lost}[before] },
	}})
	seed(t, b, "w")
	after = true
	v, err := b.Put(ctx, "w", catalog.KindTable, "t", []byte("1"), "")
	after = false
	if err != nil {
		t.Fatalf("landed publish: %v", err)
	}
	if r, err := b.Get(ctx, "w", catalog.KindTable, "t"); err != nil || r.Version != v {
		t.Fatalf("get: %v %+v", err, r)
	}
	before = true
	_, err = b.Put(ctx, "w", catalog.KindTable, "u", []byte("1"), "")
	before = false
	if !errors.Is(err, lost) {
		t.Fatalf("lost publish: %v", err)
	}
	if _, err := b.Get(ctx, "w", catalog.KindTable, "u"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("unlanded write visible: %v", err)
	}
	if _, err := b.Put(ctx, "w", catalog.KindTable, "u", []byte("1"), ""); err != nil {
		t.Fatalf("retry: %v", err)
	}
}
