package faultdrive_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/drivetest"
	"github.com/cairnstore/cairn/objstore/drive/faultdrive"
)

func newDir(t *testing.T) *drive.Dir {
	d, _, err := drive.OpenDir(t.TempDir(), "fault", 1)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestConformance(t *testing.T) {
	drivetest.Run(t, func(t *testing.T) drive.Drive {
		return faultdrive.New(newDir(t), faultdrive.Config{})
	})
}

func TestNotLocal(t *testing.T) {
	var d drive.Drive = faultdrive.New(newDir(t), faultdrive.Config{})
	if _, ok := d.(drive.Local); ok {
		t.Fatal("a fault drive must not offer the local fast paths")
	}
}

func write(t *testing.T, d drive.Drive, name, content string) error {
	t.Helper()
	w, err := d.Create(context.Background(), name)
	if err != nil {
		return err
	}
	if _, err := w.WriteAt([]byte(content), 0); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

func read(d drive.Drive, name string) (string, error) {
	r, err := d.Open(context.Background(), name)
	if err != nil {
		return "", err
	}
	defer func() { _ = r.Close() }()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, 1<<30))
	return string(b), err
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	tests := []struct {
		name  string
		rules []faultdrive.Rule
		// run does calls and returns the errors of each, in order.
		run  func(t *testing.T, d *faultdrive.Drive) []error
		want []error // per call: nil, or an errors.Is target
	}{
		{
			name:  "error on create of one name",
			rules: []faultdrive.Rule{{Op: faultdrive.OpCreate, Name: "aa02", Err: boom}},
			run: func(t *testing.T, d *faultdrive.Drive) []error {
				return []error{write(t, d, "aa01", "x"), write(t, d, "aa02", "x"), write(t, d, "aa03", "x")}
			},
			want: []error{nil, boom, nil},
		},
		{
			name:  "after and times",
			rules: []faultdrive.Rule{{Op: faultdrive.OpCreate, After: 1, Times: 2, Err: syscall.EIO}},
			run: func(t *testing.T, d *faultdrive.Drive) []error {
				var errs []error
				for _, n := range []string{"ab01", "ab02", "ab03", "ab04"} {
					errs = append(errs, write(t, d, n, "x"))
				}
				return errs
			},
			want: []error{nil, syscall.EIO, syscall.EIO, nil},
		},
		{
			name:  "ENOSPC on writes",
			rules: []faultdrive.Rule{{Op: faultdrive.OpWrite, Err: syscall.ENOSPC}},
			run: func(t *testing.T, d *faultdrive.Drive) []error {
				p, err := d.OpenPack(ctx, 1, true)
				if err != nil {
					return []error{err}
				}
				defer func() { _ = p.Close() }()
				_, perr := p.WriteAt([]byte("rec"), 0)
				return []error{write(t, d, "ac01", "x"), perr}
			},
			want: []error{syscall.ENOSPC, syscall.ENOSPC},
		},
		{
			name:  "short write",
			rules: []faultdrive.Rule{{Op: faultdrive.OpWrite, Name: "ad01", Short: true}},
			run: func(t *testing.T, d *faultdrive.Drive) []error {
				w, err := d.Create(ctx, "ad01")
				if err != nil {
					return []error{err}
				}
				n, werr := w.WriteAt([]byte("12345678"), 0)
				_ = w.Close()
				got, _ := read(d, "ad01")
				if n != 4 || got != "1234" {
					t.Errorf("short write stored %d bytes, %q; want 4, %q", n, got, "1234")
				}
				return []error{werr}
			},
			want: []error{io.ErrShortWrite},
		},
		{
			name:  "flush errors",
			rules: []faultdrive.Rule{{Op: faultdrive.OpSyncFiles, Name: "ae02", Err: syscall.EIO}, {Op: faultdrive.OpSync, Err: boom}},
			run: func(t *testing.T, d *faultdrive.Drive) []error {
				_ = write(t, d, "ae01", "x")
				_ = write(t, d, "ae02", "x")
				return []error{d.SyncFiles(ctx, []string{"ae01"}), d.SyncFiles(ctx, []string{"ae01", "ae02"}), d.Sync(ctx)}
			},
			want: []error{nil, syscall.EIO, boom},
		},
		{
			name:  "reads and listings",
			rules: []faultdrive.Rule{{Op: faultdrive.OpRead, Err: syscall.EIO}, {Op: faultdrive.OpWalk, Err: boom}},
			run: func(t *testing.T, d *faultdrive.Drive) []error {
				_ = write(t, d, "af01", "x")
				_, rerr := read(d, "af01")
				return []error{rerr, d.Walk(ctx, func(string) error { return nil })}
			},
			want: []error{syscall.EIO, boom},
		},
		{
			name:  "latency only",
			rules: []faultdrive.Rule{{Op: faultdrive.OpOpen, Delay: time.Millisecond}},
			run: func(t *testing.T, d *faultdrive.Drive) []error {
				_ = write(t, d, "b001", "slow")
				got, err := read(d, "b001")
				if got != "slow" {
					t.Errorf("read %q", got)
				}
				return []error{err}
			},
			want: []error{nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := faultdrive.New(newDir(t), faultdrive.Config{Rules: tt.rules})
			got := tt.run(t, d)
			if len(got) != len(tt.want) {
				t.Fatalf("%d results, want %d", len(got), len(tt.want))
			}
			for i, err := range got {
				switch {
				case tt.want[i] == nil && err != nil:
					t.Errorf("call %d: %v", i, err)
				case tt.want[i] != nil && (!errors.Is(err, tt.want[i]) || !errors.Is(err, faultdrive.ErrInjected)):
					t.Errorf("call %d: %v, want an injected %v", i, err, tt.want[i])
				}
			}
		})
	}
}

// TestCrash: a crash keeps exactly what the flushes covered.
func TestCrash(t *testing.T) {
	ctx := context.Background()
	inner := newDir(t)
	d := faultdrive.New(inner, faultdrive.Config{})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Flushed before the crash, each by its own kind of flush.
	must(write(t, d, "c001", "synced by name"))
	must(write(t, d, "c002", "removed, flushed"))
	must(write(t, d, "c003", "overwritten later"))
	must(write(t, d, "c004", "removed later"))
	must(write(t, d, "c005", "healed later"))
	must(d.SyncFiles(ctx, []string{"c001", "c002", "c003", "c004", "c005"}))
	must(d.Remove(ctx, "c002"))
	p, err := d.OpenPack(ctx, 1, true)
	must(err)
	_, err = p.WriteAt([]byte("AAAABBBB"), 0)
	must(err)
	must(d.SyncPacks(ctx, []uint64{1}))
	p2, err := d.OpenPack(ctx, 2, true)
	must(err)
	_, err = p2.WriteAt([]byte("whole segment, then removed"), 0)
	must(err)
	must(d.Sync(ctx)) // covers the remove of c002 and segment 2
	must(d.RemovePack(ctx, 2))
	_ = p2.Close()
	st, err := d.Stage(ctx, "c005")
	must(err)
	_, err = st.WriteAt([]byte("healed"), 0)
	must(err)
	must(st.Commit()) // durable on its own

	// Not flushed: all of this must go.
	must(write(t, d, "c006", "never flushed"))
	must(write(t, d, "c003", "new"))
	must(d.Remove(ctx, "c004"))
	_, err = p.WriteAt([]byte("CCCC"), 8) // append
	must(err)
	_, err = p.WriteAt([]byte("xx"), 2) // overwrite of flushed bytes
	must(err)
	p3, err := d.OpenPack(ctx, 3, true)
	must(err)
	_, err = p3.WriteAt([]byte("gone"), 0)
	must(err)
	w, err := d.Create(ctx, "c007") // still open at the crash
	must(err)
	_, err = w.WriteAt([]byte("open"), 0)
	must(err)
	st, err = d.Stage(ctx, "c001") // staged, never committed
	must(err)
	_, err = st.WriteAt([]byte("staged"), 0)
	must(err)

	must(d.Crash(ctx))
	if _, err := d.Open(ctx, "c001"); !errors.Is(err, faultdrive.ErrCrashed) {
		t.Errorf("open after crash: %v, want ErrCrashed", err)
	}
	if _, err := w.WriteAt([]byte("x"), 0); !errors.Is(err, faultdrive.ErrCrashed) {
		t.Errorf("write through an old handle after crash: %v, want ErrCrashed", err)
	}
	if _, err := p.WriteAt([]byte("x"), 0); !errors.Is(err, faultdrive.ErrCrashed) {
		t.Errorf("pack write after crash: %v, want ErrCrashed", err)
	}

	// What the machine finds after the power came back.
	want := map[string]string{
		"c001": "synced by name",
		"c003": "overwritten later",
		"c004": "removed later",
		"c005": "healed",
	}
	var names []string
	must(inner.Walk(ctx, func(n string) error { names = append(names, n); return nil }))
	slices.Sort(names)
	if !slices.Equal(names, []string{"c001", "c003", "c004", "c005"}) {
		t.Errorf("shards after crash: %v", names)
	}
	for n, c := range want {
		if got, err := read(inner, n); err != nil || got != c {
			t.Errorf("%s after crash: %q, %v; want %q", n, got, err, c)
		}
	}
	if _, err := inner.Open(ctx, "c006"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unflushed shard survived: %v", err)
	}
	segs, err := inner.Packs(ctx)
	must(err)
	slices.Sort(segs)
	if !slices.Equal(segs, []uint64{1, 2}) { // 2's remove was not flushed
		t.Errorf("segments after crash: %v, want [1 2]", segs)
	}
	ip2, err := inner.OpenPack(ctx, 2, false)
	must(err)
	defer func() { _ = ip2.Close() }()
	b2 := make([]byte, 64)
	n2, _ := ip2.ReadAt(b2, 0)
	if string(b2[:n2]) != "whole segment, then removed" {
		t.Errorf("segment 2 after crash: %q", b2[:n2])
	}
	ip, err := inner.OpenPack(ctx, 1, false)
	must(err)
	defer func() { _ = ip.Close() }()
	b := make([]byte, 16)
	n, _ := ip.ReadAt(b, 0)
	if !bytes.Equal(b[:n], []byte("AAAABBBB")) {
		t.Errorf("segment 1 after crash: %q, want %q", b[:n], "AAAABBBB")
	}
}

// TestCrashAllAtOnce: Crash of several drives undoes each.
func TestCrashAllAtOnce(t *testing.T) {
	ctx := context.Background()
	var ds []*faultdrive.Drive
	for range 3 {
		d := faultdrive.New(newDir(t), faultdrive.Config{})
		if err := write(t, d, "d001", "kept"); err != nil {
			t.Fatal(err)
		}
		if err := d.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if err := write(t, d, "d002", "lost"); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	if err := faultdrive.Crash(ctx, append(ds, ds[0])...); err != nil { // a drive named twice is crashed once
		t.Fatal(err)
	}
	for i, d := range ds {
		if got, err := read(d.Inner(), "d001"); got != "kept" || err != nil {
			t.Errorf("drive %d: d001 %q, %v", i, got, err)
		}
		if _, err := d.Inner().Open(ctx, "d002"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("drive %d: unflushed d002 survived: %v", i, err)
		}
	}
}
