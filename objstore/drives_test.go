package objstore

import (
	"context"
	"testing"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/faultdrive"
)

// TestLocalFastPaths: a local drive gets the direct-I/O shard writer and
// the group commit's syncfs choice; a drive that is not local gets the
// portable writer and flushes by name.
func TestLocalFastPaths(t *testing.T) {
	ctx := context.Background()
	dir, _, err := drive.OpenDir(t.TempDir(), "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	fault := faultdrive.New(dir, faultdrive.Config{})
	for _, tc := range []struct {
		name   string
		d      drive.Drive
		direct bool
	}{
		{"local", dir, true},
		{"fault", fault, false},
	} {
		w, err := createShard(ctx, tc.d, "0a0b")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := w.(*drive.ShardFile); ok != tc.direct {
			t.Errorf("%s: writer %T, direct I/O %v, want %v", tc.name, w, ok, tc.direct)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := allLocal([]drive.Drive{dir, tc.d}); got != tc.direct {
			t.Errorf("%s: allLocal %v, want %v", tc.name, got, tc.direct)
		}
	}
	s := &Store{drives: []drive.Drive{dir, fault}}
	if got, want := s.shardDesc(0, "0a0b"), dir.Path("0a0b"); got != want {
		t.Errorf("local shard described as %q, want %q", got, want)
	}
	if got, want := s.packDesc(1, 7), "fault:"+dir.Root()+":packs/0000000000000007"; got != want {
		t.Errorf("fault pack described as %q, want %q", got, want)
	}
}
