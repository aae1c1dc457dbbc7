package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFSSetIDClearing checks which set-user-ID and set-group-ID bits
// writes, truncations and chowns clear on the mount against what the
// running kernel does on a local directory, case by case. The mount
// asks for FUSE_HANDLE_KILLPRIV_V2, so on Linux 5.11+ the kernel leaves
// all of it to the mount; passthrough writes, which the mount never
// sees, are refused for files whose bits the writer would clear, and a
// chmod that sets them on a file open for passthrough writing is caught
// at the next look at the staging file.
func TestFSSetIDClearing(t *testing.T) {
	requireFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run commands as another user")
	}
	mnt := reachableMountPoint(t, "setid-mnt-")
	srv := startMountAt(t, t.TempDir(), mnt)
	onMount := fsBucket(t, fsClient(srv), mnt, "setid")
	local := reachableMountPoint(t, "setid-local-") // a local directory, made reachable the same way
	t.Cleanup(func() { _ = os.RemoveAll(local) })

	// Each case: root's set-up in a fresh directory (mode 0777), then the
	// action as root or as uid/gid 65534 (supplementary group 1234), then
	// the permission bits of f, printed by root.
	const chmodOwn = `import os, sys
f = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
os.write(f, b"a" * (1 << 20))
os.fchmod(f, 0o4766)
before = os.fstat(f).st_mode & 0o7777
os.write(f, b"b" * (1 << 20))
after = os.fstat(f).st_mode & 0o7777
os.close(f)
print("%o %o" % (before, after))`
	// Root keeps the file open for writing (written with passthrough
	// on the mount) while another user writes to it through a
	// descriptor of its own.
	const joinWriter = `import os, sys
f = os.open("f", os.O_WRONLY)
os.write(f, b"r" * (1 << 20))
pid = os.fork()
if pid == 0:
    os.setgroups([1234]); os.setgid(65534); os.setuid(65534)
    g = os.open("f", os.O_WRONLY)
    os.pwrite(g, b"o" * 4096, 4096)
    os._exit(0)
_, status = os.waitpid(pid, 0)
os.close(f)
sys.exit(status)`
	for _, tc := range []struct {
		what, setup string
		asOther     bool
		action      []string // run in the case's directory; "f" is its file
		want        string   // the bits Linux leaves, checked against the local run too
	}{
		{"another user writes 2 MiB", "echo x > f; chmod 4666 f", true,
			[]string{"dd", "if=/dev/zero", "of=f", "bs=1M", "count=2", "conv=notrunc", "status=none"}, "666"},
		{"another user appends", "echo x > f; chmod 6666 f", true, []string{"sh", "-c", "echo y >> f"}, "666"},
		{"a member of the group appends to a set-group-ID file without group execute",
			"echo x > f; chown 0:1234 f; chmod 2666 f", true, []string{"sh", "-c", "echo y >> f"}, "2666"},
		{"a member of the group appends to a group-executable set-group-ID file",
			"echo x > f; chown 0:1234 f; chmod 2676 f", true, []string{"sh", "-c", "echo y >> f"}, "676"},
		{"another user truncates", "echo x > f; chmod 4666 f", true, []string{"truncate", "-s", "0", "f"}, "666"},
		{"another user opens with O_TRUNC", "echo x > f; chmod 4666 f", true, []string{"sh", "-c", ": > f"}, "666"},
		{"root writes 2 MiB", "echo x > f; chmod 6666 f", false,
			[]string{"dd", "if=/dev/zero", "of=f", "bs=1M", "count=2", "conv=notrunc", "status=none"}, "6666"},
		{"root chowns a set-user-ID file", "echo x > f; chmod 4755 f", false, []string{"chown", "65534", "f"}, "755"},
		{"root chowns a group-executable set-group-ID file", "echo x > f; chmod 2755 f", false, []string{"chgrp", "1234", "f"}, "755"},
		{"root chowns a set-group-ID file without group execute", "echo x > f; chmod 2745 f", false, []string{"chgrp", "1234", "f"}, "2745"},
		// A large file first ends any run of small files, so that the
		// owner's file below is written with passthrough.
		{"another user writes while root has the file open for writing", "echo x > f; chmod 6666 f", false,
			[]string{"python3", "-c", joinWriter}, "666"},
		{"the owner sets set-user-ID on a file open for writing, then writes",
			"dd if=/dev/zero of=big bs=1M count=1 status=none", true, []string{"python3", "-c", chmodOwn, "f"}, "766"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			var got [2]string
			for i, base := range []string{local, onMount} {
				d := filepath.Join(base, strings.NewReplacer(" ", "-", "'", "").Replace(tc.what))
				fsSh(t, "set -e; mkdir -m 0777 "+d+"; cd "+d+"; "+tc.setup)
				script := `cd "$0" && exec "$@"`
				argv := append([]string{"sh", "-c", script, d}, tc.action...)
				var out string
				var err error
				if tc.asOther {
					out, err = runAsOther(t, argv...)
				} else {
					out, err = fsRun(argv[0], argv[1:]...)
				}
				if err != nil {
					t.Fatalf("%s in %s: %v\n%s", strings.Join(tc.action, " "), d, err, out)
				}
				got[i] = strings.Join(strings.Fields(out+" "+fsSh(t, "stat -c %a "+filepath.Join(d, "f"))), " ")
			}
			if got[1] != got[0] {
				t.Errorf("on the mount %q, on a local directory %q", got[1], got[0])
			}
			if !strings.HasSuffix(got[0], tc.want) {
				t.Errorf("the local directory gave %q, the test expects %q: is this kernel's rule another?", got[0], tc.want)
			}
		})
	}
}
