package indextest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Factory opens a new, empty index with the given limits for one test; an
// engine that cannot take limits returns ok false for non-zero ones and
// those subtests are skipped. Reopen, when not nil, closes idx and opens
// the same database again (persistence across opens).
type Factory struct {
	Open   func(t *testing.T, limits meta.Limits) (idx meta.Index, ok bool)
	Reopen func(t *testing.T, idx meta.Index) meta.Index
}

// Run runs the whole suite against the engine f opens.
func Run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f Factory)
	}{
		{"GetPutDelete", testGetPutDelete},
		{"ReadYourWrites", testReadYourWrites},
		{"CursorSeesWrites", testCursorSeesWrites},
		{"Rollback", testRollback},
		{"FailedReadPoisons", testFailedReadPoisons},
		{"ViewIsReadOnly", testViewIsReadOnly},
		{"SnapshotIsolation", testSnapshotIsolation},
		{"CursorOrder", testCursorOrder},
		{"Scan", testScan},
		{"NextSeq", testNextSeq},
		{"CopiesWrites", testCopiesWrites},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"Limits", testLimits},
		{"Context", testContext},
		{"Closed", testClosed},
		{"Reopen", testReopen},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, f) })
	}
}

func open(t *testing.T, f Factory) meta.Index {
	t.Helper()
	idx, ok := f.Open(t, meta.Limits{})
	if !ok {
		t.Fatal("factory cannot open an unlimited index")
	}
	return idx
}

func put(t *testing.T, idx meta.Index, table meta.Table, kv ...string) {
	t.Helper()
	err := idx.Update(context.Background(), func(tx meta.Tx) error {
		for i := 0; i+1 < len(kv); i += 2 {
			if err := tx.Put(table, []byte(kv[i]), []byte(kv[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
}

// get reads one key in a View; "" with ok false when absent.
func get(t *testing.T, idx meta.Index, table meta.Table, key string) (string, bool) {
	t.Helper()
	var v []byte
	err := idx.View(context.Background(), func(tx meta.Tx) error {
		raw, err := tx.Get(table, []byte(key))
		v = bytes.Clone(raw)
		return err
	})
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return string(v), v != nil
}

// keys lists a table's keys (and values) in cursor order.
func keys(t *testing.T, idx meta.Index, table meta.Table) []string {
	t.Helper()
	var out []string
	err := idx.View(context.Background(), func(tx meta.Tx) error {
		return meta.Scan(tx, table, nil, func(k, v []byte) error {
			out = append(out, string(k)+"="+string(v))
			return nil
		})
	})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return out
}

func testGetPutDelete(t *testing.T, f Factory) {
	idx := open(t, f)
	if _, ok := get(t, idx, meta.Objects, "a"); ok {
		t.Fatal("absent key found")
	}
	put(t, idx, meta.Objects, "a", "1", "b", "2")
	put(t, idx, meta.Versions, "a", "other table")
	for _, tc := range []struct {
		table     meta.Table
		key, want string
		ok        bool
	}{
		{meta.Objects, "a", "1", true},
		{meta.Objects, "b", "2", true},
		{meta.Objects, "c", "", false},
		{meta.Versions, "a", "other table", true},
		{meta.Versions, "b", "", false},
	} {
		if got, ok := get(t, idx, tc.table, tc.key); got != tc.want || ok != tc.ok {
			t.Errorf("%s %q = %q %v, want %q %v", tc.table, tc.key, got, ok, tc.want, tc.ok)
		}
	}
	// An empty value is present, not absent.
	put(t, idx, meta.PackData, "e", "")
	err := idx.View(context.Background(), func(tx meta.Tx) error {
		ok, err := meta.Has(tx, meta.PackData, []byte("e"))
		if err == nil && !ok {
			t.Error("empty value reads as absent")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Overwrite, then delete, then delete again (absent is not an error).
	put(t, idx, meta.Objects, "a", "1b")
	err = idx.Update(context.Background(), func(tx meta.Tx) error {
		if err := tx.Delete(meta.Objects, []byte("b")); err != nil {
			return err
		}
		return tx.Delete(meta.Objects, []byte("never"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(t, idx, meta.Objects); fmt.Sprint(got) != "[a=1b]" {
		t.Fatalf("after overwrite and delete: %v", got)
	}
}

func testReadYourWrites(t *testing.T, f Factory) {
	idx := open(t, f)
	put(t, idx, meta.Objects, "k1", "old", "k3", "gone")
	err := idx.Update(context.Background(), func(tx meta.Tx) error {
		steps := []struct {
			write func() error
			key   string
			want  string // "" for absent
		}{
			{func() error { return tx.Put(meta.Objects, []byte("k1"), []byte("new")) }, "k1", "new"},
			{func() error { return tx.Put(meta.Objects, []byte("k2"), []byte("two")) }, "k2", "two"},
			{func() error { return tx.Delete(meta.Objects, []byte("k3")) }, "k3", ""},
			{func() error { return tx.Put(meta.Objects, []byte("k3"), []byte("back")) }, "k3", "back"},
		}
		for i, st := range steps {
			if err := st.write(); err != nil {
				return err
			}
			v, err := tx.Get(meta.Objects, []byte(st.key))
			if err != nil {
				return err
			}
			if string(v) != st.want || (st.want == "") != (v == nil) {
				t.Errorf("step %d: %q reads %q, want %q", i, st.key, v, st.want)
			}
		}
		// A cursor opened after the writes sees all of them.
		var got []string
		if err := meta.Scan(tx, meta.Objects, []byte("k"), func(k, v []byte) error {
			got = append(got, string(k)+"="+string(v))
			return nil
		}); err != nil {
			return err
		}
		if fmt.Sprint(got) != "[k1=new k2=two k3=back]" {
			t.Errorf("cursor after writes: %v", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

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

func testRollback(t *testing.T, f Factory) {
	idx := open(t, f)
	put(t, idx, meta.Objects, "keep", "1")
	boom := errors.New("boom")
	var seqBefore uint64
	err := idx.Update(context.Background(), func(tx meta.Tx) error {
		var err error
		seqBefore, err = tx.NextSeq()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = idx.Update(context.Background(), func(tx meta.Tx) error {
		if err := tx.Put(meta.Objects, []byte("new"), []byte("x")); err != nil {
			return err
		}
		if err := tx.Delete(meta.Objects, []byte("keep")); err != nil {
			return err
		}
		if _, err := tx.NextSeq(); err != nil {
			return err
		}
		return fmt.Errorf("wrapped: %w", boom)
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	if got := keys(t, idx, meta.Objects); fmt.Sprint(got) != "[keep=1]" {
		t.Fatalf("rolled-back writes visible: %v", got)
	}
	err = idx.Update(context.Background(), func(tx meta.Tx) error {
		s, err := tx.NextSeq()
		if err == nil && s <= seqBefore {
			t.Errorf("sequence after a rollback %d, not above %d", s, seqBefore)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testFailedReadPoisons(t *testing.T, f Factory) {
	idx := open(t, f)
	bogus := meta.Table("no-such-table")
	for _, tc := range []struct {
		name string
		read func(tx meta.Tx)
	}{
		{"get", func(tx meta.Tx) { _, _ = tx.Get(bogus, []byte("k")) }},
		{"cursor", func(tx meta.Tx) {
			c := tx.Cursor(bogus)
			if k, _ := c.First(); k != nil {
				t.Error("cursor of an unknown table returned a key")
			}
			if c.Err() == nil {
				t.Error("cursor of an unknown table reports no error")
			}
		}},
		{"put", func(tx meta.Tx) { _ = tx.Put(bogus, []byte("k"), []byte("v")) }},
		{"put of an empty key", func(tx meta.Tx) { _ = tx.Put(meta.Objects, nil, []byte("v")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := idx.Update(context.Background(), func(tx meta.Tx) error {
				if err := tx.Put(meta.Objects, []byte(tc.name), []byte("x")); err != nil {
					return err
				}
				tc.read(tx) // the error is ignored on purpose
				return nil
			})
			if err == nil {
				t.Fatal("Update after an ignored failed call committed")
			}
			if _, ok := get(t, idx, meta.Objects, tc.name); ok {
				t.Fatal("a transaction with a failed call committed")
			}
			err = idx.View(context.Background(), func(tx meta.Tx) error {
				tc.read(tx)
				return nil
			})
			if (tc.name == "get" || tc.name == "cursor") && !errors.Is(err, meta.ErrUnknownTable) {
				t.Fatalf("View after an ignored failed read returned %v", err)
			}
		})
	}
}

func testViewIsReadOnly(t *testing.T, f Factory) {
	idx := open(t, f)
	for _, tc := range []struct {
		name  string
		write func(tx meta.Tx) error
	}{
		{"put", func(tx meta.Tx) error { return tx.Put(meta.Objects, []byte("k"), []byte("v")) }},
		{"delete", func(tx meta.Tx) error { return tx.Delete(meta.Objects, []byte("k")) }},
		{"seq", func(tx meta.Tx) error { _, err := tx.NextSeq(); return err }},
	} {
		err := idx.View(context.Background(), tc.write)
		if err == nil {
			t.Errorf("%s in a View succeeded", tc.name)
		}
	}
	if _, ok := get(t, idx, meta.Objects, "k"); ok {
		t.Fatal("a View wrote")
	}
}

func testSnapshotIsolation(t *testing.T, f Factory) {
	idx := open(t, f)
	put(t, idx, meta.Objects, "a", "1", "b", "1")
	inView, viewDone := make(chan struct{}), make(chan struct{})
	var seen []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := idx.View(context.Background(), func(tx meta.Tx) error {
			v1, err := tx.Get(meta.Objects, []byte("a"))
			if err != nil {
				return err
			}
			seen = append(seen, string(v1))
			close(inView)
			<-viewDone
			v2, err := tx.Get(meta.Objects, []byte("b"))
			if err != nil {
				return err
			}
			seen = append(seen, string(v2))
			return meta.Scan(tx, meta.Objects, nil, func(k, v []byte) error {
				seen = append(seen, string(k)+"="+string(v))
				return nil
			})
		})
		if err != nil {
			t.Error(err)
		}
	}()
	<-inView
	// A writer commits while the View is open; engines may make it wait
	// for the reader (none of ours do) or not: both are allowed, so the
	// reader is released once the write has started.
	wrote := make(chan error, 1)
	go func() {
		wrote <- idx.Update(context.Background(), func(tx meta.Tx) error {
			if err := tx.Put(meta.Objects, []byte("a"), []byte("2")); err != nil {
				return err
			}
			if err := tx.Put(meta.Objects, []byte("b"), []byte("2")); err != nil {
				return err
			}
			return tx.Put(meta.Objects, []byte("c"), []byte("2"))
		})
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
		close(viewDone)
	case <-contextTimer():
		close(viewDone)
		if err := <-wrote; err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if fmt.Sprint(seen) != "[1 1 a=1 b=1]" {
		t.Fatalf("a View saw a commit made while it ran: %v", seen)
	}
	if got := keys(t, idx, meta.Objects); fmt.Sprint(got) != "[a=2 b=2 c=2]" {
		t.Fatalf("after the write: %v", got)
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

func testNextSeq(t *testing.T, f Factory) {
	idx := open(t, f)
	var last uint64
	for i := 0; i < 5; i++ {
		err := idx.Update(context.Background(), func(tx meta.Tx) error {
			for j := 0; j < 3; j++ {
				s, err := tx.NextSeq()
				if err != nil {
					return err
				}
				if s <= last {
					t.Errorf("sequence %d after %d", s, last)
				}
				last = s
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func testCopiesWrites(t *testing.T, f Factory) {
	idx := open(t, f)
	k, v := []byte("key"), []byte("value")
	err := idx.Update(context.Background(), func(tx meta.Tx) error { return tx.Put(meta.Objects, k, v) })
	if err != nil {
		t.Fatal(err)
	}
	// The caller may reuse its buffers once the transaction ended.
	copy(k, "KEY")
	copy(v, "VALUE")
	if got, ok := get(t, idx, meta.Objects, "key"); !ok || got != "value" {
		t.Fatalf("stored value changed with the caller's buffer: %q %v", got, ok)
	}
	if _, ok := get(t, idx, meta.Objects, "KEY"); ok {
		t.Fatal("stored key changed with the caller's buffer")
	}
}

func testConcurrentUpdates(t *testing.T, f Factory) {
	idx := open(t, f)
	const writers, rounds = 4, 25
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				// Read-modify-write of one counter: serialised writers
				// lose no increment.
				err := idx.Update(context.Background(), func(tx meta.Tx) error {
					raw, err := tx.Get(meta.Settings, []byte("counter"))
					if err != nil {
						return err
					}
					n := 0
					if raw != nil {
						if _, err := fmt.Sscan(string(raw), &n); err != nil {
							return err
						}
					}
					return tx.Put(meta.Settings, []byte("counter"), []byte(fmt.Sprint(n+1)))
				})
				if err != nil {
					t.Error(err)
					return
				}
				if _, ok := get(t, idx, meta.Settings, "counter"); !ok {
					t.Error("counter absent")
					return
				}
			}
		}()
	}
	wg.Wait()
	if got, _ := get(t, idx, meta.Settings, "counter"); got != fmt.Sprint(writers*rounds) {
		t.Fatalf("counter %s, want %d", got, writers*rounds)
	}
}

func testLimits(t *testing.T, f Factory) {
	limits := meta.Limits{MaxWrites: 4, MaxBytes: 64}
	idx, ok := f.Open(t, limits)
	if !ok {
		t.Skip("engine takes no limits")
	}
	if got := idx.Limits(); got != limits {
		t.Fatalf("Limits() = %+v, want %+v", got, limits)
	}
	for _, tc := range []struct {
		name   string
		writes int
		size   int
		ok     bool
	}{
		{"within", 4, 8, true},
		{"too many writes", 5, 1, false},
		{"too many bytes", 2, 40, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := idx.Update(context.Background(), func(tx meta.Tx) error {
				for i := 0; i < tc.writes; i++ {
					k := []byte(fmt.Sprintf("%s-%d", tc.name[:3], i))
					if err := tx.Put(meta.Objects, k, bytes.Repeat([]byte("v"), tc.size)); err != nil {
						return err
					}
				}
				return nil
			})
			if tc.ok && err != nil {
				t.Fatalf("within limits: %v", err)
			}
			if !tc.ok && !errors.Is(err, meta.ErrTxTooLarge) {
				t.Fatalf("beyond limits: %v, want ErrTxTooLarge", err)
			}
			if _, found := get(t, idx, meta.Objects, tc.name[:3]+"-0"); found != tc.ok {
				t.Fatalf("first write committed: %v, want %v", found, tc.ok)
			}
		})
	}
	if !limits.Fits(4, 64) || limits.Fits(5, 1) || limits.Fits(1, 65) || !(meta.Limits{}).Fits(1<<30, 1<<30) {
		t.Fatal("Limits.Fits")
	}
}

func testContext(t *testing.T, f Factory) {
	idx := open(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	for name, call := range map[string]func(context.Context, func(meta.Tx) error) error{"view": idx.View, "update": idx.Update} {
		err := call(ctx, func(meta.Tx) error { ran = true; return nil })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", name, err)
		}
	}
	if ran {
		t.Fatal("a transaction ran with a cancelled context")
	}
}

func testClosed(t *testing.T, f Factory) {
	idx := open(t, f)
	put(t, idx, meta.Objects, "k", "v")
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func(context.Context, func(meta.Tx) error) error{"view": idx.View, "update": idx.Update} {
		err := call(context.Background(), func(meta.Tx) error { return nil })
		if !errors.Is(err, meta.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func testReopen(t *testing.T, f Factory) {
	if f.Reopen == nil {
		t.Skip("engine cannot be reopened")
	}
	idx := open(t, f)
	put(t, idx, meta.Objects, "k", "v")
	var seq uint64
	if err := idx.Update(context.Background(), func(tx meta.Tx) (err error) { seq, err = tx.NextSeq(); return err }); err != nil {
		t.Fatal(err)
	}
	idx = f.Reopen(t, idx)
	if got, ok := get(t, idx, meta.Objects, "k"); !ok || got != "v" {
		t.Fatalf("after reopen: %q %v", got, ok)
	}
	err := idx.Update(context.Background(), func(tx meta.Tx) error {
		s, err := tx.NextSeq()
		if err == nil && s <= seq {
			t.Errorf("sequence after reopen %d, not above %d", s, seq)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// contextTimer bounds how long the isolation test waits for a writer that
// an engine makes wait for an open reader.
func contextTimer() <-chan time.Time { return time.After(2 * time.Second) }
