package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFSPermissions drives the mount's own permission checks (it does
// not use the kernel's default_permissions) with real commands run as
// uid/gid 65534 with the supplementary group 1234, on files root made:
// modes, search permission on directories whose entries the kernel has
// cached, the sticky bit, chmod and touch rights, supplementary groups,
// access(2), chdir, rename, user.* extended attributes, execute-only
// programs, the kernel clearing a set-user-ID bit on a write, the control
// tree; and root without capabilities (setpriv), checked like anybody.
func TestFSPermissions(t *testing.T) {
	requireFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run commands as another user")
	}
	mnt := reachableMountPoint(t, "perm-mnt-")
	srv := startMountAt(t, t.TempDir(), mnt)
	dir := fsBucket(t, fsClient(srv), mnt, "perm")
	p := func(rel string) string { return filepath.Join(dir, rel) }

	// Root's tree, read once by root so that the kernel caches its
	// entries (a later walk by the other user then does not ask the
	// mount for them).
	fsSh(t, strings.Join([]string{
		"set -e", "cd " + dir,
		"mkdir private shared sticky",
		"echo secret > private/secret", "chmod 600 private/secret", "chmod 700 private",
		"chmod 777 shared", "chmod 1777 sticky",
		"echo public > pub.txt", "chmod 644 pub.txt",
		"echo root > sticky/rootfile", "chmod 666 sticky/rootfile",
		"echo ok > grp-ok", "chown 0:1234 grp-ok", "chmod 640 grp-ok",
		"echo no > grp-no", "chown 0:4321 grp-no", "chmod 640 grp-no",
		"cp /bin/true shared/xonly", "chmod 711 shared/xonly",
		"echo suid > suid.txt", "chmod 4666 suid.txt",
		"echo sgid > sgid.txt", "chown 0:1234 sgid.txt", "chmod 6666 sgid.txt",
		"echo rw > shared/rw.txt", "chmod 666 shared/rw.txt",
		"cat private/secret >/dev/null", "ls -l private sticky >/dev/null",
	}, "\n"))
	if err := syscall.Setxattr(p("pub.txt"), "user.color", []byte("blue"), 0); err != nil {
		t.Fatalf("root sets user.color: %v", err)
	}

	const denied, notPermitted = "Permission denied", "Operation not permitted"
	xattr := func(op, path, name, value string) []string {
		return []string{"python3", "-c", `import os, sys
op, path, name, value = sys.argv[1:]
if op == "get":
    sys.stdout.write(os.getxattr(path, name).decode())
else:
    os.setxattr(path, name, value.encode())`, op, path, name, value}
	}
	for _, tc := range []struct {
		what string
		argv []string
		want string // "" means success; else a word of the error
		out  string // when it succeeds, what it prints
	}{
		{"read a 0644 file", []string{"cat", p("pub.txt")}, "", "public"},
		{"append to a 0644 file of root's", []string{"sh", "-c", "echo x >> " + p("pub.txt")}, denied, ""},
		{"list a 0700 directory", []string{"ls", p("private")}, denied, ""},
		{"read a file under a 0700 directory, cached", []string{"cat", p("private/secret")}, denied, ""},
		{"chdir into a 0700 directory", []string{"sh", "-c", "cd " + p("private")}, "can't cd", ""},
		{"access(R_OK) of a 0644 file", []string{"test", "-r", p("pub.txt")}, "", ""},
		{"access(W_OK) of a 0644 file of root's", []string{"test", "-w", p("pub.txt")}, "exit status 1", ""},
		{"create in a 0777 directory", []string{"sh", "-c", "echo mine > " + p("shared/mine") + " && stat -c %u:%g " + p("shared/mine")}, "", "65534:65534"},
		{"create in the 0755 bucket of root's", []string{"mkdir", p("newdir")}, denied, ""},
		{"rename out of a 0777 directory into the 0755 bucket", []string{"mv", p("shared/mine"), p("moved")}, denied, ""},
		{"remove root's file from a sticky directory", []string{"rm", "-f", p("sticky/rootfile")}, notPermitted, ""},
		{"create and remove one's own file in a sticky directory", []string{"sh", "-c", "touch " + p("sticky/mine") + " && rm " + p("sticky/mine")}, "", ""},
		{"chmod a file of root's", []string{"chmod", "600", p("pub.txt")}, notPermitted, ""},
		{"chmod one's own file", []string{"chmod", "600", p("shared/mine")}, "", ""},
		{"read a 0640 file of a supplementary group", []string{"cat", p("grp-ok")}, "", "ok"},
		{"read a 0640 file of another group", []string{"cat", p("grp-no")}, denied, ""},
		{"read a user.* attribute of a readable file", xattr("get", p("pub.txt"), "user.color", ""), "", "blue"},
		{"set a user.* attribute of root's file", xattr("set", p("pub.txt"), "user.color", "red"), "PermissionError", ""},
		{"list the control tree", []string{"ls", filepath.Join(mnt, ".cairn")}, denied, ""},
		{"read a user.* attribute of the control tree", xattr("get", filepath.Join(mnt, ".cairn"), "user.color", ""), "PermissionError", ""},
		{"read a user.* attribute of the mount's root", xattr("get", mnt, "user.color", ""), "No data available", ""},
		{"set a user.* attribute of the mount's root", xattr("set", mnt, "user.color", "red"), "PermissionError", ""},
		{"chmod the mount's root", []string{"chmod", "700", mnt}, notPermitted, ""},
		{"run an execute-only program", []string{p("shared/xonly")}, "", ""},
		{"append to a set-user-ID file one may write", []string{"sh", "-c", "echo more >> " + p("suid.txt") + " && stat -c %a " + p("suid.txt")}, "", "666"},
		{"append to a set-user-ID, set-group-ID file of one's group without group execute", []string{"sh", "-c", "echo more >> " + p("sgid.txt") + " && stat -c %a " + p("sgid.txt")}, "", "2666"},
		{"touch a file one may write", []string{"touch", p("shared/rw.txt")}, "", ""},
		{"touch -m a file one may write but does not own", []string{"touch", "-m", p("shared/rw.txt")}, notPermitted, ""},
		{"make a private file", []string{"sh", "-c", "echo nobody > " + p("shared/nob") + " && chmod 600 " + p("shared/nob")}, "", ""},
	} {
		t.Run(tc.what, func(t *testing.T) {
			out, err := runAsOther(t, tc.argv...)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s: %v\n%s", strings.Join(tc.argv, " "), err, out)
			case tc.want == "" && tc.out != "" && strings.TrimSpace(out) != tc.out:
				t.Errorf("%s printed %q, want %q", strings.Join(tc.argv, " "), out, tc.out)
			case tc.want != "" && err == nil:
				t.Errorf("%s succeeded, want %q\n%s", strings.Join(tc.argv, " "), tc.want, out)
			case tc.want != "" && !strings.Contains(out+err.Error(), tc.want):
				t.Errorf("%s: %v %q, want %q", strings.Join(tc.argv, " "), err, out, tc.want)
			}
		})
	}

	// Capabilities held in a user namespace of one's own count for that
	// namespace only.
	if out, err := runAsOther(t, "unshare", "-Ur", "true"); err != nil {
		t.Logf("no unprivileged user namespaces here (%v %s): not checked", err, strings.TrimSpace(out))
	} else if out, err := runAsOther(t, "unshare", "-Ur", "cat", p("private/secret")); err == nil || !strings.Contains(out, denied) {
		t.Errorf("uid 65534 as root of its own user namespace reads root's 0600 file: %v %q", err, out)
	}

	// The control tree's entries are the server's, even for root.
	ctlStore := filepath.Join(mnt, ".cairn", "store")
	for _, argv := range [][]string{{"rm", "-f", filepath.Join(ctlStore, "status")}, {"rmdir", ctlStore}} {
		if out, err := fsRun(argv[0], argv[1:]...); err == nil || !strings.Contains(out, notPermitted) {
			t.Errorf("root %s: %v %q, want %q", strings.Join(argv, " "), err, out, notPermitted)
		}
	}

	// Root without capabilities is checked like anybody else.
	if setpriv, err := exec.LookPath("setpriv"); err != nil {
		t.Log("setpriv is not installed: root without capabilities not checked")
	} else {
		out, err := fsRun(setpriv, "--bounding-set=-all", "--inh-caps=-all", "--", "cat", p("shared/nob"))
		if err == nil || !strings.Contains(out, denied) {
			t.Errorf("root without capabilities reads another user's 0600 file: %v %q", err, out)
		}
		if out, err := fsRun(setpriv, "--bounding-set=-all", "--inh-caps=-all", "--", "cat", p("pub.txt")); err != nil {
			t.Errorf("root without capabilities reads its own 0644 file: %v %q", err, out)
		}
	}

	// What was refused did not happen, and root still does everything.
	if b, err := os.ReadFile(p("pub.txt")); err != nil || string(b) != "public\n" {
		t.Errorf("pub.txt after the refused append: %q %v", b, err)
	}
	v := make([]byte, 16)
	if n, err := syscall.Getxattr(p("pub.txt"), "user.color", v); err != nil || string(v[:max(n, 0)]) != "blue" {
		t.Errorf("user.color after the refused set: %q %v", v[:max(n, 0)], err)
	}
	fsSh(t, "set -e; cd "+dir+"; cat private/secret shared/nob >/dev/null; rm sticky/rootfile; chmod 600 pub.txt; mkdir newdir; test ! -e moved; test -e "+filepath.Join(mnt, ".cairn", "store", "status"))
}

// reachableMountPoint makes a mount point other users can reach (under
// os.TempDir, mode 0755), so that a denial comes from the mount and not
// from the path to it.
func reachableMountPoint(t *testing.T, pattern string) string {
	t.Helper()
	mnt, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(mnt) })
	if err := os.Chmod(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	return mnt
}

// runAsOther runs argv as uid/gid 65534 with the supplementary group
// 1234, bounded in time, and returns its combined output.
func runAsOther(t *testing.T, argv ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fsCmdTimeout)
	defer cancel()
	// The program comes from the system's directories, which the other
	// user can reach (not from root's own PATH, such as ~/.pyenv).
	const path = "/usr/local/bin:/usr/bin:/bin"
	prog := argv[0]
	for _, d := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(d, argv[0])); err == nil && fi.Mode()&0o001 != 0 {
			prog = filepath.Join(d, argv[0])
			break
		}
	}
	cmd := exec.CommandContext(ctx, prog, argv[1:]...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + path, "LC_ALL=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{1234}}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}
