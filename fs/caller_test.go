package fs

import (
	"slices"
	"syscall"
	"testing"
)

func TestPermits(t *testing.T) {
	all := creds{state: credsRead, caps: 1<<capDacOverride | 1<<capDacReadSearch | 1<<capFowner | 1<<capChown}
	none := creds{state: credsRead}
	user := caller{uid: 1000, gid: 4242, known: true, creds: creds{state: credsRead, groups: []uint32{77}}}
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
		{"root outside the PID namespace", caller{known: true, creds: creds{state: credsUnknown}}, attrs{perm: 0o600, uid: 5, gid: 5}, false, mayRead, true},
		{"root whose thread is gone", caller{known: true, creds: creds{state: credsGone}}, attrs{perm: 0o600, uid: 5, gid: 5}, false, mayRead, false},
		{"user on another's credentials", caller{uid: 9, known: true, creds: creds{state: credsUnknown}}, attrs{perm: 0o600, uid: 5, gid: 5}, false, mayRead, false},
		{"DAC_READ_SEARCH reads", caller{uid: 9, known: true, creds: creds{state: credsRead, caps: 1 << capDacReadSearch}}, attrs{perm: 0, uid: 5}, false, mayRead, true},
		{"DAC_READ_SEARCH does not write", caller{uid: 9, known: true, creds: creds{state: credsRead, caps: 1 << capDacReadSearch}}, attrs{perm: 0, uid: 5}, false, mayWrite, false},
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

func TestParseStatus(t *testing.T) {
	const ids = "Uid:\t0\t0\t0\t7\nGid:\t1\t1\t1\t8\n"
	tests := []struct {
		in           string
		groups       []uint32
		caps         uint64
		fsuid, fsgid uint32
		wantErr      bool
	}{
		{"Name:\tsh\n" + ids + "Groups:\t4 24 1000 \nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n", []uint32{4, 24, 1000}, 0x1ffffffffff, 7, 8, false},
		{ids + "Groups:\t\nCapEff:\t0000000000000000\n", nil, 0, 7, 8, false},
		{ids + "Groups:\t4294967295\nCapEff:\t0000000000000006\n", []uint32{4294967295}, 6, 7, 8, false},
		{ids + "Groups:\t4294967296\nCapEff:\t0\n", nil, 0, 0, 0, true},
		{ids + "Groups:\tstaff\nCapEff:\t0\n", nil, 0, 0, 0, true},
		{ids + "Groups:\t1\nCapEff:\tzz\n", nil, 0, 0, 0, true},
		{"Uid:\t0\t0\t0\nGid:\t1\t1\t1\t8\nGroups:\t1\nCapEff:\t0\n", nil, 0, 0, 0, true},
		{"Uid:\t0\t0\t0\tx\nGid:\t1\t1\t1\t8\nGroups:\t1\nCapEff:\t0\n", nil, 0, 0, 0, true},
		{ids + "Groups:\t1\n", nil, 0, 0, 0, true},
		{"Groups:\t1\nCapEff:\t0\n", nil, 0, 0, 0, true},
		{"", nil, 0, 0, 0, true},
	}
	for _, tc := range tests {
		got, fsuid, fsgid, err := parseStatus([]byte(tc.in))
		if (err != nil) != tc.wantErr || !slices.Equal(got.groups, tc.groups) || got.caps != tc.caps || fsuid != tc.fsuid || fsgid != tc.fsgid {
			t.Errorf("parseStatus(%q) = %+v %d %d, %v; want groups %v caps %x ids %d %d, error %v", tc.in, got, fsuid, fsgid, err, tc.groups, tc.caps, tc.fsuid, tc.fsgid, tc.wantErr)
		}
	}
}

func TestCredCache(t *testing.T) {
	var cc credCache
	self := uint32(syscall.Gettid())
	uid, gid := uint32(syscall.Getuid()), uint32(syscall.Getgid())
	c := cc.get(self, uid, gid)
	if c.state != credsRead {
		t.Fatalf("own creds not read: %+v", c)
	}
	if again := cc.get(self, uid, gid); !again.at.Equal(c.at) {
		t.Errorf("second get within the TTL read again")
	}
	// The kernel says the thread acts as someone else (override_creds):
	// what /proc says does not apply.
	if other := cc.get(self, uid+1, gid); other.state != credsUnknown || other.uid != uid+1 {
		t.Errorf("get for other ids: %+v, want credsUnknown", other)
	}
	if none := cc.get(0, 0, 0); none.state != credsUnknown {
		t.Errorf("pid 0: %+v, want credsUnknown", none)
	}
	if gone := cc.get(1<<31-1, uid, gid); gone.state != credsGone {
		t.Errorf("a thread that does not exist: %+v, want credsGone", gone)
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t4 24 1000\nCapEff:\t0000000000000000\n"))
	f.Add([]byte("Name:\tx\nUid:\t1 2 3 4\nGid:\t1 2 3 4\nGroups:\nCapEff:\tffffffffffffffff\n"))
	f.Add([]byte("Groups: -1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, fsuid, fsgid, err := parseStatus(data)
		if err != nil && (c.groups != nil || c.caps != 0 || fsuid != 0 || fsgid != 0) {
			t.Fatalf("creds %+v %d %d with error %v", c, fsuid, fsgid, err)
		}
	})
}
