package indextest

// The suite's checks of transactions: writes and reads, read-your-writes,
// rollback, poisoned reads, read-only views, snapshot isolation, copies
// and concurrent writers.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnstore/cairn/objstore/meta"
)

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
