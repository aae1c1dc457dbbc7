package fs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/cairnstore/cairn/objstore"
)

func TestUnescapeMount(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain", "/mnt/data", "/mnt/data"},
		{"space", `/mnt/my\040disk`, "/mnt/my disk"},
		{"tab", `/mnt/a\011b`, "/mnt/a\tb"},
		{"newline", `/mnt/a\012b`, "/mnt/a\nb"},
		{"backslash", `/mnt/a\134b`, `/mnt/a\b`},
		{"escaped backslash before digits", `/mnt/a\134040`, `/mnt/a\040`},
		{"escape at the end", `/mnt/a\040`, "/mnt/a "},
		{"escape alone", `\040`, " "},
		{"several", `\040\011\134`, " \t\\"},
		{"trailing backslash", `/mnt/a\`, `/mnt/a\`},
		{"short escape", `/mnt/a\04`, `/mnt/a\04`},
		{"short escape, one digit", `/mnt/a\0`, `/mnt/a\0`},
		{"not octal", `/mnt/a\089`, `/mnt/a\089`},
		{"letters", `/mnt/a\abc`, `/mnt/a\abc`},
		{"over a byte", `/mnt/a\777`, `/mnt/a\777`},
		{"largest byte", `\377`, "\xff"},
		{"sign is no digit", `\+12`, `\+12`},
		{"double backslash", `a\\040`, `a\ `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnescapeMount(tc.in); got != tc.want {
				t.Errorf("UnescapeMount(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzUnescapeMount: the mount table is outside input. UnescapeMount must
// not panic, never lengthen its input, leave backslash-free input alone,
// and undo the kernel's escaping of space, tab, newline and backslash.
func FuzzUnescapeMount(f *testing.F) {
	for _, s := range []string{"", "/mnt/x", `\040`, `a\`, `a\04`, `\\\\`, `\777`, `\134\134`, "/mnt/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := UnescapeMount(s)
		if len(got) > len(s) {
			t.Fatalf("UnescapeMount(%q) = %q is longer", s, got)
		}
		if !strings.Contains(s, `\`) && got != s {
			t.Fatalf("UnescapeMount(%q) = %q changed input without escapes", s, got)
		}
		// The kernel's escaping (mangle in fs/proc_namespace.c) of any
		// path comes back unchanged.
		esc := strings.NewReplacer(`\`, `\134`, " ", `\040`, "\t", `\011`, "\n", `\012`).Replace(s)
		if back := UnescapeMount(esc); back != s {
			t.Fatalf("UnescapeMount(escape(%q)) = %q", s, back)
		}
	})
}

func TestIsFUSEMountNot(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  string
	}{
		{"plain directory", t.TempDir()},
		{"missing directory", filepath.Join(t.TempDir(), "missing")},
		{"root", "/"},
		{"proc, a mount of another type", "/proc"},
		{"relative", "."},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := isFUSEMount(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if got {
				t.Errorf("isFUSEMount(%q) = true", tc.dir)
			}
		})
	}
}

func TestClearStaleNotMounted(t *testing.T) {
	if err := ClearStale(t.TempDir()); err != nil {
		t.Errorf("ClearStale(plain dir) = %v", err)
	}
	if err := ClearStale(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ClearStale(missing dir) = %v, want ErrNotExist", err)
	}
}

// A real FUSE mount on a directory whose name the mount table escapes is
// found; ClearStale leaves a live one alone. Needs root and /dev/fuse.
func TestIsFUSEMountLive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount FUSE without fusermount")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "my mount\twith\\odd name")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	server, err := gofs.Mount(dir, &gofs.Inode{}, &gofs.Options{
		MountOptions: fuse.MountOptions{FsName: "cairntest", Name: "cairntest", DirectMountStrict: true},
	})
	if err != nil {
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	t.Cleanup(func() {
		if err := server.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	for _, tc := range []struct {
		name string
		dir  string
		want bool
	}{
		{"the mount point", dir, true},
		{"its parent", filepath.Dir(dir), false},
		{"a name inside it", filepath.Join(dir, "x"), false},
		{"a prefix of its name", dir[:len(dir)-1], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := isFUSEMount(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("isFUSEMount(%q) = %v, want %v", tc.dir, got, tc.want)
			}
		})
	}
	if err := ClearStale(dir); !errors.Is(err, objstore.ErrInvalidArgument) {
		t.Errorf("ClearStale(live mount) = %v, want ErrInvalidArgument", err)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	ra := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	if _, err := os.Stat(ra); err != nil {
		t.Skipf("no sysfs bdi here: %v", err)
	}
	for _, kb := range []int{128, 1024} {
		if err := setReadAhead(dir, kb<<10); err != nil {
			t.Fatalf("setReadAhead(%d KiB): %v", kb, err)
		}
		if b, err := os.ReadFile(ra); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(kb) {
			t.Errorf("%s = %q %v after setReadAhead(%d KiB)", ra, b, err, kb)
		}
	}
	if err := setReadAhead(filepath.Join(dir, "missing"), 1<<20); err == nil {
		t.Error("setReadAhead on a missing directory succeeded")
	}
}

func TestParseFUSEMount(t *testing.T) {
	const table = `22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw
30 22 0:50 / /mnt/a rw,relatime - fuse.cairn cairn rw,user_id=0
31 1 253:0 / /mnt/b rw - ext4 /dev/vda rw
32 31 0:51 / /mnt/b rw - fuse cairn rw
33 1 0:52 / /mnt/c rw - fuse.cairn cairn rw
34 33 0:53 / /mnt/c rw - tmpfs tmpfs rw
35 1 0:54 / /mnt/odd\040name rw - fuse.cairn cairn rw
garbage line
36 1 0:55 / /mnt/short
`
	for _, tc := range []struct {
		name, dir string
		want      bool
	}{
		{"a FUSE mount", "/mnt/a", true},
		{"FUSE on top of ext4", "/mnt/b", true},
		{"tmpfs on top of FUSE", "/mnt/c", false},
		{"an escaped name", "/mnt/odd name", true},
		{"not a FUSE mount", "/proc", false},
		{"no mount", "/mnt", false},
		{"a line without its separator", "/mnt/short", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseFUSEMount(table, tc.dir); got != tc.want {
				t.Errorf("parseFUSEMount(%q) = %v, want %v", tc.dir, got, tc.want)
			}
		})
	}
}

func FuzzParseFUSEMount(f *testing.F) {
	f.Add("30 22 0:50 / /mnt/a rw,relatime - fuse.cairn cairn rw\n", "/mnt/a")
	f.Add("- - - - -\n", "-")
	f.Fuzz(func(t *testing.T, table, dir string) {
		if parseFUSEMount(table, dir) && !strings.Contains(table, "fuse") {
			t.Errorf("a FUSE mount on %q in a table that names none", dir)
		}
	})
}
