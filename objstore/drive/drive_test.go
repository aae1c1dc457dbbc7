package drive

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

func TestOpenDirFormatsAndChecksSet(t *testing.T) {
	root := filepath.Join(t.TempDir(), "d0")
	d, created, err := OpenDir(root, "set-a", 0)
	if err != nil || !created {
		t.Fatalf("first open: created=%v err=%v", created, err)
	}
	if d.Index() != 0 || d.Root() != root {
		t.Fatalf("index %d root %s", d.Index(), d.Root())
	}
	if _, created, err := OpenDir(root, "set-a", 0); err != nil || created {
		t.Fatalf("reopen: created=%v err=%v", created, err)
	}
	for _, tc := range []struct {
		set   string
		index int
	}{{"set-b", 0}, {"set-a", 1}} {
		if _, _, err := OpenDir(root, tc.set, tc.index); !errors.Is(err, ErrForeign) {
			t.Errorf("open as %s/%d: %v, want ErrForeign", tc.set, tc.index, err)
		}
	}
}

func TestShardFiles(t *testing.T) {
	ctx := context.Background()
	d, _, err := OpenDir(t.TempDir(), "s", 3)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"00aa", "ff01", "7c00"}
	for _, n := range names {
		f, err := d.Create(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte(n), 0); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
	if err := d.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	var seen []string
	if err := d.Walk(ctx, func(n string) error { seen = append(seen, n); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(seen)
	sort.Strings(names)
	if len(seen) != 3 || seen[0] != names[0] || seen[2] != names[2] {
		t.Fatalf("walk %v, want %v", seen, names)
	}
	// Stage + Commit replaces atomically; Abort leaves the old file.
	st, err := d.Stage(ctx, "ff01")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = st.WriteAt([]byte("new!"), 0)
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err = d.Stage(ctx, "ff01")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = st.WriteAt([]byte("lost"), 0)
	st.Abort()
	if b, _ := os.ReadFile(d.Path("ff01")); string(b) != "new!" {
		t.Fatalf("after commit+abort: %q", b)
	}
	if tmp, _ := os.ReadDir(filepath.Join(d.Root(), "tmp")); len(tmp) != 0 {
		t.Fatalf("tmp left behind: %v", tmp)
	}
	if err := d.Remove(ctx, "ff01"); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(ctx, "ff01"); err != nil {
		t.Fatalf("removing an absent shard: %v", err)
	}
	if _, err := d.Open(ctx, "ff01"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open removed: %v", err)
	}
	for _, bad := range []string{"", "a/b", "..", `a\b`} {
		if _, err := d.Create(ctx, bad); err == nil {
			t.Errorf("create %q accepted", bad)
		}
	}
}

func TestSyncAllSharesFilesystems(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	var drives []Drive
	for i := 0; i < 3; i++ {
		d, _, err := OpenDir(filepath.Join(base, "d", string(rune('0'+i))), "s", i)
		if err != nil {
			t.Fatal(err)
		}
		drives = append(drives, d)
	}
	drives = append(drives, nil) // an absent slot is skipped
	for i, err := range SyncAll(ctx, drives) {
		if err != nil {
			t.Errorf("drive %d: %v", i, err)
		}
	}
	// A deleted drive directory on a shared filesystem still syncs through
	// its neighbours.
	if err := os.RemoveAll(drives[0].(*Dir).Root()); err != nil {
		t.Fatal(err)
	}
	for i, err := range SyncAll(ctx, drives[:3]) {
		if err != nil {
			t.Errorf("after removal, drive %d: %v", i, err)
		}
	}
}

func TestSyncFiles(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	var drives []Drive
	for i := 0; i < 3; i++ {
		d, _, err := OpenDir(filepath.Join(base, string(rune('a'+i))), "s", i)
		if err != nil {
			t.Fatal(err)
		}
		drives = append(drives, d)
	}
	for _, d := range drives {
		for _, name := range []string{"0a1b", "ff00", "0a2c"} {
			sf, err := d.(*Dir).CreateShard(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sf.WriteAt(make([]byte, 5000), 0); err != nil {
				t.Fatal(err)
			}
			if err := sf.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		names []string
		want  error // nil: success; else errors.Is target
		fails bool
	}{
		{"shard files in two directories", ctx, []string{"0a1b", "ff00", "0a2c"}, nil, false},
		{"none", ctx, nil, nil, false},
		{"a missing file", ctx, []string{"0a1b", "0a99"}, fs.ErrNotExist, true},
		{"an invalid name", ctx, []string{"../x"}, nil, true},
		{"a canceled context", canceled, []string{"0a1b"}, context.Canceled, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := drives[0].SyncFiles(tc.ctx, tc.names)
			switch {
			case !tc.fails && err != nil:
				t.Fatalf("SyncFiles: %v", err)
			case tc.fails && err == nil:
				t.Fatal("SyncFiles succeeded")
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("SyncFiles: %v, want %v", err, tc.want)
			}
		})
	}
	// SyncFilesAll: each drive its own names and its own error; a drive
	// without names, or absent, is left alone.
	errs := SyncFilesAll(ctx, append(drives, nil), [][]string{{"0a1b"}, {"0a99"}, nil, {"ff00"}})
	if errs[0] != nil || !errors.Is(errs[1], fs.ErrNotExist) || errs[2] != nil || errs[3] != nil {
		t.Errorf("SyncFilesAll errors = %v", errs)
	}
}
