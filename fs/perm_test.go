package fs

import (
	"os"
	"slices"
	"syscall"
	"testing"
)

func TestPermits(t *testing.T) {
	self := uint32(os.Getpid())
	groups, err := procGroups(self)
	if err != nil {
		t.Fatal(err)
	}
	// A group this process is in besides its primary one, if any.
	var supp uint32 = 1<<32 - 2
	hasSupp := false
	for _, g := range groups {
		if g != 4242 {
			supp, hasSupp = g, true
			break
		}
	}
	user := caller{uid: 1000, gid: 4242, pid: self, known: true}
	type test struct {
		name string
		c    caller
		a    attrs
		mask uint32
		want bool
	}
	tests := []test{
		{"root reads 0000", caller{uid: 0, known: true}, attrs{perm: 0, uid: 5}, mayRead | mayWrite, true},
		{"no caller", caller{}, attrs{perm: 0}, mayRead, true},
		{"nothing asked", user, attrs{perm: 0, uid: 5}, 0, true},
		{"owner bits", user, attrs{perm: 0o600, uid: 1000, gid: 1}, mayRead | mayWrite, true},
		{"owner bits refuse", user, attrs{perm: 0o077, uid: 1000, gid: 4242}, mayRead, false},
		{"primary group", user, attrs{perm: 0o040, uid: 5, gid: 4242}, mayRead, true},
		{"group refuses write", user, attrs{perm: 0o040, uid: 5, gid: 4242}, mayWrite, false},
		{"other bits", user, attrs{perm: 0o004, uid: 5, gid: 6}, mayRead, true},
		{"other refuses", user, attrs{perm: 0o770, uid: 5, gid: 6}, mayRead, false},
		{"search", user, attrs{perm: 0o711, uid: 5, gid: 6}, mayExec, true},
		{"all bits of the mask", user, attrs{perm: 0o005, uid: 5, gid: 6}, mayRead | mayWrite, false},
		{"group and other agree", caller{uid: 1000, gid: 1, pid: 0, known: true}, attrs{perm: 0o044, uid: 5, gid: 7}, mayRead, true},
	}
	if hasSupp {
		tests = append(tests, test{"supplementary group", user, attrs{perm: 0o040, uid: 5, gid: supp}, mayRead, true})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.permits(tc.a, tc.mask); got != tc.want {
				t.Errorf("permits(%+v, %+v, %o) = %v, want %v", tc.c, tc.a, tc.mask, got, tc.want)
			}
		})
	}
}

func TestOpenMask(t *testing.T) {
	tests := []struct {
		flags uint32
		want  uint32
	}{
		{syscall.O_RDONLY, mayRead},
		{syscall.O_WRONLY, mayWrite},
		{syscall.O_RDWR, mayRead | mayWrite},
		{syscall.O_RDONLY | syscall.O_TRUNC, mayRead | mayWrite},
		{syscall.O_RDONLY | fmodeExec, mayRead | mayExec},
		{syscall.O_WRONLY | syscall.O_APPEND, mayWrite},
	}
	for _, tc := range tests {
		if got := openMask(tc.flags); got != tc.want {
			t.Errorf("openMask(%#o) = %o, want %o", tc.flags, got, tc.want)
		}
	}
}

func TestParseGroups(t *testing.T) {
	tests := []struct {
		in      string
		want    []uint32
		wantErr bool
	}{
		{"Name:\tsh\nUid:\t0\t0\t0\t0\nGroups:\t4 24 1000 \nNgid:\t0\n", []uint32{4, 24, 1000}, false},
		{"Groups:\t\n", nil, false},
		{"Groups:\t4294967295\n", []uint32{4294967295}, false},
		{"Groups:\t4294967296\n", nil, true},
		{"Groups:\tstaff\n", nil, true},
		{"Name:\tsh\n", nil, true},
		{"", nil, true},
	}
	for _, tc := range tests {
		got, err := parseGroups([]byte(tc.in))
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("parseGroups(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func FuzzParseGroups(f *testing.F) {
	f.Add([]byte("Groups:\t4 24 1000\n"))
	f.Add([]byte("Name:\tx\nGroups:\n"))
	f.Add([]byte("Groups: -1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		groups, err := parseGroups(data)
		if err != nil && groups != nil {
			t.Fatalf("groups %v with error %v", groups, err)
		}
	})
}
