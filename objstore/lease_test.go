package objstore

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// TestLeasesAcrossProcesses runs two stores on one in-memory index and one
// set of drives, as two processes sharing a replicated index would: a
// reader of the second keeps its data from the first's cleaner through a
// lease and the grace period, since the first cannot see its pins; with
// neither, the data is freed under the reader (the control case, which
// shows that the rule is needed and that this test can fail).
func TestLeasesAcrossProcesses(t *testing.T) {
	const grace = 300 * time.Millisecond
	for _, tc := range []struct {
		name    string
		grace   time.Duration
		lease   bool
		survive bool
	}{
		{"leased", grace, true, true},
		{"in grace, not yet leased", time.Hour, false, true},
		{"no grace, no lease", 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := meta.NewMem(meta.Limits{MaxWrites: 128, MaxBytes: 1536 << 10})
			dir := t.TempDir()
			opt := Options{Dir: dir, DriveCount: 3, Parity: 1, BlockSize: 64 << 10, PackMaxSize: -1, NoBackground: true, ReaderGrace: tc.grace}
			a := openOn(t, db, opt)
			b := openOn(t, db, opt)
			mustBucket(t, a, "bkt")
			old := randBytes(200<<10, 1)
			mustPut(t, a, "bkt", "k", old)
			var oldID string
			if err := a.idx.View(ctx, func(tx meta.Tx) error {
				v, err := currentVersion(tx, "bkt", "k")
				if err == nil {
					oldID = v.Segments[0].Data
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			r, err := b.Open(ctx, "bkt", "k", GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.lease {
				if err := b.renewLeases(ctx); err != nil {
					t.Fatal(err)
				}
			}
			mustPut(t, a, "bkt", "k", randBytes(1000, 2)) // the old data is garbage now
			if tc.lease {
				// Past the grace only the lease keeps it, renewed as the
				// leaser does every ReaderGrace/4.
				time.Sleep(tc.grace + 50*time.Millisecond)
				if err := b.renewLeases(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := a.Clean(ctx); err != nil {
				t.Fatal(err)
			}
			got, rerr := io.ReadAll(r)
			if tc.survive && (rerr != nil || !bytes.Equal(got, old)) {
				t.Fatalf("reader of the other store lost its data: %d bytes, %v", len(got), rerr)
			}
			if !tc.survive && rerr == nil && bytes.Equal(got, old) {
				t.Fatal("without lease or grace the data survived: the test cannot tell")
			}
			_ = r.Close()
			if !tc.survive {
				return
			}
			// Once the reader is gone and its lease dropped (and the grace
			// over), the cleaner frees the data.
			if err := b.renewLeases(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.grace > grace {
				return // the grace outlasts the test
			}
			time.Sleep(tc.grace)
			if n, err := a.Clean(ctx); err != nil || n != 1 {
				t.Fatalf("clean after the reader closed: %d freed, %v", n, err)
			}
			if _, err := os.Stat(a.drives[0].Path(oldID)); !os.IsNotExist(err) {
				t.Fatalf("shard of freed data still there: %v", err)
			}
		})
	}
}

// openOn opens a store on a handle of db, closed at the end of the test.
func openOn(t *testing.T, db *meta.Mem, opt Options) *Store {
	t.Helper()
	opt.Index = db.Open()
	s, err := Open(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
