package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnstore/cairn/objstore/meta"
)

// TestGroupCommitRespectsIndexLimits runs the store on an in-memory index
// that refuses transactions of more than 16 writes, as an engine with
// bounded transactions would: concurrent writers whose requests share
// group commits all succeed (the committer splits their batches), and an
// operation that alone passes the bound fails with ErrTooManyChanges and
// changes nothing.
func TestGroupCommitRespectsIndexLimits(t *testing.T) {
	ctx := context.Background()
	db := meta.NewMem(meta.Limits{MaxWrites: 16})
	opt := Options{Dir: t.TempDir(), DriveCount: 3, Parity: 1, BlockSize: 64 << 10, NoBackground: true}
	s := openOn(t, db, opt)
	mustBucket(t, s, "bkt")
	const writers, each = 8, 12
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				// Small packed puts: several writes each (version, object,
				// data, pack records), many per batch.
				data := randBytes(100, uint64(w*each+i))
				if _, err := s.Put(ctx, "bkt", fmt.Sprintf("d/w%d-%d", w, i), bytes.NewReader(data), int64(len(data)), PutOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("put under a bounded index: %v", err)
	}
	page, err := s.List(ctx, "bkt", ListOptions{Prefix: "d/", MaxKeys: 1000})
	if err != nil || len(page.Objects) != writers*each {
		t.Fatalf("listed %d objects, want %d (%v)", len(page.Objects), writers*each, err)
	}
	// Renaming 96 keys in one transaction is several hundred writes.
	_, err = s.RenamePrefix(ctx, "bkt", "d/", "e/", RenameOptions{})
	if !errors.Is(err, ErrTooManyChanges) {
		t.Fatalf("rename of a prefix past the bound: %v, want ErrTooManyChanges", err)
	}
	if page, _ := s.List(ctx, "bkt", ListOptions{Prefix: "e/"}); len(page.Objects) != 0 {
		t.Fatalf("a refused rename moved %d keys", len(page.Objects))
	}
	// Garbage from overwrites is freed in requests that fit.
	for i := 0; i < each; i++ {
		mustPut(t, s, "bkt", fmt.Sprintf("d/w0-%d", i), randBytes(50, 99))
	}
	if n, err := s.Clean(ctx); err != nil || n != each {
		t.Fatalf("clean: %d freed, %v", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opt.Index = db.Open()
	rep, err := Fsck(ctx, opt, nil)
	if err != nil || !rep.Clean() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
}
