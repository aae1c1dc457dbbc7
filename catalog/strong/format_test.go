package strong

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// TestGates: one gate alone keeps v1, both write v2, unsetting them keeps
// v2; a process that has seen v2 refuses v1.
func TestGates(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	write := func(opt Options, key string) *Backing {
		t.Helper()
		b := openBacking(t, st, opt)
		if _, err := b.Put(ctx, "w", catalog.KindNamespace, key, nil, catalog.AnyVersion); err != nil {
			t.Fatal(err)
		}
		return b
	}
	format := func() int {
		s, err := decodeAny(snapshotBytes(t, st, "w"))
		if err != nil {
			t.Fatal(err)
		}
		return s.Format
	}
	steps := []struct {
		name string
		opt  Options
		want int
	}{
		{"no gate", Options{}, 1},
		{"v2 alone", Options{SnapshotV2: true}, 1},
		{"fleet alone", Options{SnapshotV2FleetConfirmed: true}, 1},
		{"both", Options{SnapshotV2: true, SnapshotV2FleetConfirmed: true}, 2},
		{"unset again", Options{}, 2},
	}
	var v2 *Backing
	for _, s := range steps {
		b := write(s.opt, s.name)
		if got := format(); got != s.want {
			t.Fatalf("%s: format %d, want %d", s.name, got, s.want)
		}
		if cur, hwm := b.Format("w"); cur != s.want || hwm != s.want {
			t.Fatalf("%s: Format() = %d, %d", s.name, cur, hwm)
		}
		if s.want == 2 && v2 == nil {
			v2 = b
		}
	}
	// A v1 snapshot put back under a process that has seen v2 is refused.
	s, err := decodeAny(snapshotBytes(t, st, "w"))
	if err != nil {
		t.Fatal(err)
	}
	s.Format = formatV1
	v1, err := encode(s)
	if err != nil {
		t.Fatal(err)
	}
	putRaw(t, st, "w", v1)
	if _, err := v2.Get(ctx, "w", catalog.KindNamespace, "both"); !errors.Is(err, ErrBelowHighWater) || !errors.Is(err, ErrSnapshotInvalid) {
		t.Fatalf("v1 after v2: %v", err)
	}
	if u := v2.Unhealthy(); u["w"] == nil {
		t.Fatalf("unhealthy: %v", u)
	}
	// A fresh process (restart forgets the mark) reads it and keeps v1.
	fresh := write(Options{}, "fresh")
	if cur, hwm := fresh.Format("w"); cur != 1 || hwm != 1 {
		t.Fatalf("fresh process: %d %d", cur, hwm)
	}
}

func TestParseGate(t *testing.T) {
	cases := []struct {
		in       string
		v, valid bool
	}{
		{"", false, true}, {"true", true, true}, {" 1 ", true, true}, {"TRUE", true, true},
		{"false", false, true}, {"0", false, true}, {"yes", false, false}, {"on", false, false},
	}
	for _, c := range cases {
		if v, ok := ParseGate(c.in); v != c.v || ok != c.valid {
			t.Errorf("ParseGate(%q) = %v, %v", c.in, v, ok)
		}
	}
}

// TestQuarantine: a v1 snapshot with table/view collisions loads in
// cleanup-only mode; only shrinking writes pass; then it is normal again.
func TestQuarantine(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	s, err := newSnapshot("w")
	if err != nil {
		t.Fatal(err)
	}
	s.Generation = 1
	for _, k := range []string{"ns\x1ea", "ns\x1eb"} {
		s.put(catalog.KindTable, k, []byte("t"), 1)
		s.put(catalog.KindView, k, []byte("v"), 1)
	}
	s.put(catalog.KindTable, "ns\x1ec", []byte("t"), 1)
	s.put(catalog.KindTable, "other\x1ed", []byte("t"), 1)
	data, err := encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureSystemBucket(ctx, Bucket); err != nil {
		t.Fatal(err)
	}
	putRaw(t, st, "w", data)
	b := openBacking(t, st, Options{SnapshotV2: true, SnapshotV2FleetConfirmed: true})
	if q := b.Quarantined(); len(q["w"]) != 2 || len(b.Unhealthy()) != 0 {
		t.Fatalf("quarantined %v unhealthy %v", q, b.Unhealthy())
	}
	steps := []struct {
		name string
		run  func() error
		want error
	}{
		{"get colliding", func() error { _, err := b.Get(ctx, "w", catalog.KindView, "ns\x1ea"); return err }, ErrQuarantined},
		{"get other", func() error { _, err := b.Get(ctx, "w", catalog.KindTable, "ns\x1ec"); return err }, nil},
		{"list namespace", func() error {
			_, _, err := b.List(ctx, "w", catalog.KindTable, catalog.ListOptions{Prefix: "ns\x1e"})
			return err
		}, ErrQuarantined},
		{"list other namespace", func() error {
			_, _, err := b.List(ctx, "w", catalog.KindTable, catalog.ListOptions{Prefix: "other\x1e"})
			return err
		}, nil},
		{"unrelated write", func() error { _, err := b.Put(ctx, "w", catalog.KindNamespace, "x", nil, ""); return err }, ErrQuarantined},
		{"rewrite colliding", func() error {
			_, err := b.Put(ctx, "w", catalog.KindTable, "ns\x1ea", nil, catalog.AnyVersion)
			return err
		}, ErrQuarantined},
		{"cleanup one", func() error { return b.Delete(ctx, "w", catalog.KindView, "ns\x1ea", catalog.AnyVersion) }, nil},
		{"still v1", func() error { return wantFormat(t, b, 1) }, nil},
		{"unrelated write still blocked", func() error { _, err := b.Put(ctx, "w", catalog.KindNamespace, "x", nil, ""); return err }, ErrQuarantined},
		{"cleanup last", func() error { return b.Delete(ctx, "w", catalog.KindTable, "ns\x1eb", catalog.AnyVersion) }, nil},
		{"v2 once clean", func() error { return wantFormat(t, b, 2) }, nil},
		{"unrelated write passes", func() error { _, err := b.Put(ctx, "w", catalog.KindNamespace, "x", nil, ""); return err }, nil},
		{"new collision refused", func() error { _, err := b.Put(ctx, "w", catalog.KindView, "ns\x1ec", nil, ""); return err }, catalog.ErrConflict},
	}
	for _, s := range steps {
		err := s.run()
		if (s.want == nil) != (err == nil) || (s.want != nil && !errors.Is(err, s.want)) {
			t.Fatalf("%s: %v, want %v", s.name, err, s.want)
		}
	}
	if q := b.Quarantined(); len(q) != 0 {
		t.Fatalf("still quarantined: %v", q)
	}
	// A v2 snapshot holding a collision does not decode.
	s2, err := decodeAny(snapshotBytes(t, st, "w"))
	if err != nil {
		t.Fatal(err)
	}
	s2.put(catalog.KindView, "ns\x1ec", nil, s2.Generation)
	if enc, err := encode(s2); err != nil {
		t.Fatal(err)
	} else if _, err := decodeAny(enc); !errors.Is(err, ErrSnapshotInvalid) {
		t.Fatalf("v2 with collision: %v", err)
	}
}

func wantFormat(t *testing.T, b *Backing, want int) error {
	t.Helper()
	if cur, _ := b.Format("w"); cur != want {
		t.Fatalf("format %d, want %d", cur, want)
	}
	return nil
}

// FuzzDecode: the decoder never panics on outside input, and whatever it
// accepts is canonical (re-encodes to the same bytes) and valid.
func FuzzDecode(f *testing.F) {
	s := &snapshot{Format: formatV1, Warehouse: "w", Epoch: "0123456789abcdef", Generation: 3}
	s.put(catalog.KindTable, "ns\x1et", []byte(`{"x":1}`), 2)
	s.put(catalog.KindNamespace, "ns", nil, 3)
	v1, _ := encode(s)
	s.Format = formatV2
	v2, _ := encode(s)
	f.Add(v1)
	f.Add(v2)
	f.Add([]byte(magic + " 1 2 00\n{}"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeAny(data)
		if err != nil {
			if !errors.Is(err, ErrSnapshotInvalid) {
				t.Fatalf("error not wrapping ErrSnapshotInvalid: %v", err)
			}
			return
		}
		again, err := encode(s)
		if err != nil || string(again) != string(data) {
			t.Fatalf("accepted non-canonical input: %v", err)
		}
		if err := validate(s); err != nil {
			t.Fatalf("accepted invalid: %v", err)
		}
	})
}
