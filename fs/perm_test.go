package fs

import (
	"slices"
	"syscall"
	"testing"
)

func TestPermits(t *testing.T) {
	all := creds{read: true, caps: 1<<capDacOverride | 1<<capDacReadSearch | 1<<capFowner | 1<<capChown}
	none := creds{read: true}
	user := caller{uid: 1000, gid: 4242, known: true, creds: creds{read: true, groups: []uint32{77}}}
	unknownGroups := caller{uid: 1000, gid: 4242, known: true}
	tests := []struct {
		name string
		c    caller
		a    attrs
		dir  bool
		mask uint32
		want bool
	}{
		{"root with capabilities reads 0000", caller{known: true, creds: all}, attrs{perm: 0, uid: 5}, false, mayRead | mayWrite, true},
		{"root with capabilities searches 0000", caller{known: true, creds: all}, attrs{perm: 0, uid: 5}, true, mayExec, true},
		{"root cannot execute a file with no x bit", caller{known: true, creds: all}, attrs{perm: 0o644, uid: 5}, false, mayExec, false},
		{"root with capabilities executes 0100", caller{known: true, creds: all}, attrs{perm: 0o100, uid: 5}, false, mayExec, true},
		{"root without capabilities", caller{known: true, creds: none}, attrs{perm: 0o600, uid: 5, gid: 5}, false, mayRead, false},
		{"root whose process is gone", caller{known: true}, attrs{perm: 0o600, uid: 5, gid: 5}, false, mayRead, true},
		{"DAC_READ_SEARCH reads", caller{uid: 9, known: true, creds: creds{read: true, caps: 1 << capDacReadSearch}}, attrs{perm: 0, uid: 5}, false, mayRead, true},
		{"DAC_READ_SEARCH does not write", caller{uid: 9, known: true, creds: creds{read: true, caps: 1 << capDacReadSearch}}, attrs{perm: 0, uid: 5}, false, mayWrite, false},
		{"no caller", caller{}, attrs{perm: 0}, false, mayRead, true},
		{"nothing asked", user, attrs{perm: 0, uid: 5}, false, 0, true},
		{"owner bits", user, attrs{perm: 0o600, uid: 1000, gid: 1}, false, mayRead | mayWrite, true},
		{"owner bits refuse", user, attrs{perm: 0o077, uid: 1000, gid: 4242}, false, mayRead, false},
		{"primary group", user, attrs{perm: 0o040, uid: 5, gid: 4242}, false, mayRead, true},
		{"group refuses write", user, attrs{perm: 0o040, uid: 5, gid: 4242}, false, mayWrite, false},
		{"supplementary group", user, attrs{perm: 0o040, uid: 5, gid: 77}, false, mayRead, true},
		{"other bits", user, attrs{perm: 0o004, uid: 5, gid: 6}, false, mayRead, true},
		{"other refuses", user, attrs{perm: 0o770, uid: 5, gid: 6}, false, mayRead, false},
		{"search", user, attrs{perm: 0o711, uid: 5, gid: 6}, true, mayExec, true},
		{"all bits of the mask", user, attrs{perm: 0o005, uid: 5, gid: 6}, false, mayRead | mayWrite, false},
		{"groups unknown: other grants, group not", unknownGroups, attrs{perm: 0o604, uid: 5, gid: 6}, false, mayRead, false},
		{"groups unknown: both grant", unknownGroups, attrs{perm: 0o644, uid: 5, gid: 6}, false, mayRead, true},
		{"groups unknown: primary group still known", unknownGroups, attrs{perm: 0o640, uid: 5, gid: 4242}, false, mayRead, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.permits(tc.a, tc.dir, tc.mask); got != tc.want {
				t.Errorf("permits(%+v, %+v, dir %v, %o) = %v, want %v", tc.c, tc.a, tc.dir, tc.mask, got, tc.want)
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
		{syscall.O_RDONLY | fmodeExec, mayExec},
		{syscall.O_WRONLY | syscall.O_APPEND, mayWrite},
	}
	for _, tc := range tests {
		if got := openMask(tc.flags); got != tc.want {
			t.Errorf("openMask(%#o) = %o, want %o", tc.flags, got, tc.want)
		}
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		in      string
		groups  []uint32
		caps    uint64
		wantErr bool
	}{
		{"Name:\tsh\nUid:\t0\t0\t0\t0\nGroups:\t4 24 1000 \nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n", []uint32{4, 24, 1000}, 0x1ffffffffff, false},
		{"Groups:\t\nCapEff:\t0000000000000000\n", nil, 0, false},
		{"Groups:\t4294967295\nCapEff:\t0000000000000006\n", []uint32{4294967295}, 6, false},
		{"Groups:\t4294967296\nCapEff:\t0\n", nil, 0, true},
		{"Groups:\tstaff\nCapEff:\t0\n", nil, 0, true},
		{"Groups:\t1\nCapEff:\tzz\n", nil, 0, true},
		{"Groups:\t1\n", nil, 0, true},
		{"CapEff:\t0\n", nil, 0, true},
		{"", nil, 0, true},
	}
	for _, tc := range tests {
		got, err := parseStatus([]byte(tc.in))
		if (err != nil) != tc.wantErr || !slices.Equal(got.groups, tc.groups) || got.caps != tc.caps || got.read == tc.wantErr {
			t.Errorf("parseStatus(%q) = %+v, %v; want groups %v caps %x, error %v", tc.in, got, err, tc.groups, tc.caps, tc.wantErr)
		}
	}
}

func TestCredCache(t *testing.T) {
	var cc credCache
	self := uint32(syscall.Getpid())
	c := cc.get(self, uint32(syscall.Getuid()), uint32(syscall.Getgid()))
	if !c.read {
		t.Fatalf("own creds not read: %+v", c)
	}
	if again := cc.get(self, c.uid, c.gid); !again.at.Equal(c.at) {
		t.Errorf("second get within the TTL read again")
	}
	if other := cc.get(self, c.uid+1, c.gid); other.at.Equal(c.at) || other.uid != c.uid+1 {
		t.Errorf("get for other ids reused the entry: %+v", other)
	}
	if gone := cc.get(0, 0, 0); gone.read {
		t.Errorf("pid 0 read: %+v", gone)
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("Groups:\t4 24 1000\nCapEff:\t0000000000000000\n"))
	f.Add([]byte("Name:\tx\nGroups:\nCapEff:\tffffffffffffffff\n"))
	f.Add([]byte("Groups: -1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseStatus(data)
		if (err == nil) != c.read || err != nil && (c.groups != nil || c.caps != 0) {
			t.Fatalf("creds %+v with error %v", c, err)
		}
	})
}
