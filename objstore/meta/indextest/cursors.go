package indextest

// The suite's checks of cursors and scans: order, seeks, and a cursor
// seeing its transaction's writes.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnstore/cairn/objstore/meta"
)

// testCursorSeesWrites walks, inside an Update, a table whose stored keys
// the transaction overwrote, deleted (first, middle and last ones) and
// added to (before, between and after them), across more keys than an
// engine may fetch at once: a cursor opened after the writes sees the
// table as the writes left it.
func testCursorSeesWrites(t *testing.T, f Factory) {
	idx := open(t, f)
	const n = 300
	err := idx.Update(context.Background(), func(tx meta.Tx) error {
		for i := 1; i <= n; i++ {
			if err := tx.Put(meta.Uploads, []byte(fmt.Sprintf("k%04d", i)), []byte("old")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// want is the table after the writes, in order.
	var want []string
	err = idx.Update(context.Background(), func(tx meta.Tx) error {
		for i := 0; i <= n+1; i++ {
			k := []byte(fmt.Sprintf("k%04d", i))
			var err error
			switch {
			case i == 0 || i == n+1: // new, before and after every stored key
				err = tx.Put(meta.Uploads, k, []byte("new"))
				want = append(want, string(k)+"=new")
			case i == 1 || i == n || i%3 == 0: // deleted
				err = tx.Delete(meta.Uploads, k)
			case i%3 == 1: // overwritten, and a new key right after it
				err = tx.Put(meta.Uploads, k, []byte("over"))
				if err == nil {
					err = tx.Put(meta.Uploads, append(k, 0), []byte("new"))
				}
				want = append(want, string(k)+"=over", string(k)+"\x00=new")
			default:
				want = append(want, string(k)+"=old")
			}
			if err != nil {
				return err
			}
		}
		c := tx.Cursor(meta.Uploads)
		var got []string
		for k, v := c.First(); k != nil; k, v = c.Next() {
			got = append(got, string(k)+"="+string(v))
		}
		if err := c.Err(); err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("walk after the writes: %d keys, want %d; first %q", len(got), len(want), got[:min(len(got), 6)])
		}
		for _, tc := range []struct{ seek, want string }{
			{"k0001", "k0002=old"},  // a deleted key: the next one
			{"k0003", "k0004=over"}, // deleted, then an overwritten one
			{"k0004\x00", "k0004\x00=new"},
			{fmt.Sprintf("k%04d", n), fmt.Sprintf("k%04d=new", n+1)},
			{"k9", ""},
		} {
			k, v := c.Seek([]byte(tc.seek))
			if got := string(k) + "=" + string(v); (k == nil) != (tc.want == "") || k != nil && got != tc.want {
				t.Errorf("Seek(%q) = %q, want %q", tc.seek, got, tc.want)
			}
		}
		return c.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(t, idx, meta.Uploads); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the commit: %d keys, want %d", len(got), len(want))
	}
}

func testCursorOrder(t *testing.T, f Factory) {
	idx := open(t, f)
	// Binary keys, including 0x00 and 0xff bytes and prefixes of others.
	in := [][]byte{{0xff}, {0x00}, {0x00, 0x00}, []byte("a"), []byte("a\x00b"), []byte("ab"), {0x7f, 0xff}, []byte("b")}
	err := idx.Update(context.Background(), func(tx meta.Tx) error {
		for i, k := range in {
			if err := tx.Put(meta.Versions, k, []byte{byte(i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{{0x00}, {0x00, 0x00}, []byte("a"), []byte("a\x00b"), []byte("ab"), []byte("b"), {0x7f, 0xff}, {0xff}}
	err = idx.View(context.Background(), func(tx meta.Tx) error {
		c := tx.Cursor(meta.Versions)
		var got [][]byte
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			got = append(got, bytes.Clone(k))
		}
		if c.Err() != nil {
			return c.Err()
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("order %q, want %q", got, want)
		}
		if k, _ := c.Next(); k != nil {
			t.Errorf("Next past the end returned %q", k)
		}
		for _, tc := range []struct {
			seek, want []byte
		}{
			{nil, []byte{0x00}},
			{[]byte("a\x00"), []byte("a\x00b")},
			{[]byte("aa"), []byte("ab")},
			{[]byte("ab"), []byte("ab")},
			{[]byte{0xff}, []byte{0xff}},
			{[]byte{0xff, 0x00}, nil},
		} {
			if k, _ := c.Seek(tc.seek); !bytes.Equal(k, tc.want) {
				t.Errorf("Seek(%q) = %q, want %q", tc.seek, k, tc.want)
			}
		}
		// Next after a Seek goes on from there, across more keys than an
		// engine may fetch at once.
		if k, _ := c.Seek([]byte("ab")); string(k) == "ab" {
			if k, v := c.Next(); string(k) != "b" || !bytes.Equal(v, []byte{7}) {
				t.Errorf("Next after Seek = %q %v", k, v)
			}
		}
		return c.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	// Many keys: a walk sees each exactly once, in order.
	const n = 1000
	err = idx.Update(context.Background(), func(tx meta.Tx) error {
		for i := 0; i < n; i++ {
			if err := tx.Put(meta.Parts, []byte(fmt.Sprintf("p%05d", i)), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	all := keys(t, idx, meta.Parts)
	if len(all) != n || all[0] != "p00000=v" || all[n-1] != fmt.Sprintf("p%05d=v", n-1) {
		t.Fatalf("walk of %d keys: %d, first %q", n, len(all), all[0])
	}
}

func testScan(t *testing.T, f Factory) {
	idx := open(t, f)
	put(t, idx, meta.Objects, "b\x00a", "1", "b\x00b", "2", "b\x00c", "3", "b0", "x", "c\x00a", "y")
	for _, tc := range []struct {
		name      string
		prefix    string
		stopAfter int
		want      string
	}{
		{"prefix", "b\x00", 0, "[b\x00a b\x00b b\x00c]"},
		{"whole table", "", 0, "[b\x00a b\x00b b\x00c b0 c\x00a]"},
		{"no match", "a", 0, "[]"},
		{"stop", "b\x00", 2, "[b\x00a b\x00b]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := idx.View(context.Background(), func(tx meta.Tx) error {
				fn := func(k, _ []byte) error {
					got = append(got, string(k))
					if tc.stopAfter > 0 && len(got) == tc.stopAfter {
						return meta.ErrStop
					}
					return nil
				}
				return meta.Scan(tx, meta.Objects, []byte(tc.prefix), fn)
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	// A callback's error ends the walk and is returned.
	boom := errors.New("boom")
	err := idx.View(context.Background(), func(tx meta.Tx) error {
		return meta.Scan(tx, meta.Objects, nil, func(_, _ []byte) error { return boom })
	})
	if !errors.Is(err, boom) {
		t.Fatalf("scan callback error: %v", err)
	}
}
