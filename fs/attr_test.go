package fs

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

var (
	testOwner   = owner{uid: 1000, gid: 100}
	testModTime = time.Date(2024, 3, 1, 12, 30, 45, 123456789, time.UTC)
)

func TestAttrsStoreRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    attrs
	}{
		{"file", attrs{perm: 0o644, uid: 1000, gid: 1000, mtime: time.Unix(1700000000, 123456789)}},
		{"all permission bits", attrs{perm: 0o7777, uid: 0, gid: 0, mtime: time.Unix(0, 1)}},
		{"no permission bits", attrs{perm: 0, uid: 1, gid: 2, mtime: time.Unix(1, 0)}},
		{"setuid dir", attrs{perm: 0o4755, uid: 5, gid: 6, mtime: time.Unix(1234567890, 999999999)}},
		{"largest ids", attrs{perm: 0o600, uid: 1<<32 - 1, gid: 1<<32 - 2, mtime: time.Unix(1700000000, 0)}},
		{"before 1970", attrs{perm: 0o755, uid: 3, gid: 4, mtime: time.Unix(-86400, 500)}},
		{"year 2200", attrs{perm: 0o700, uid: 3, gid: 4, mtime: time.Date(2200, 1, 1, 0, 0, 0, 7, time.UTC)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]string{}
			tc.a.store(m)
			// The object's own size and time must not leak into what the
			// metadata says.
			info := objstore.ObjectInfo{Size: 42, ModTime: testModTime, Meta: m}
			got := attrsFrom(info, 0o111, owner{7, 8})
			if got.perm != tc.a.perm || got.uid != tc.a.uid || got.gid != tc.a.gid {
				t.Errorf("attrsFrom(store(%+v)) = %+v", tc.a, got)
			}
			if !got.mtime.Equal(tc.a.mtime) {
				t.Errorf("mtime = %v, want %v", got.mtime, tc.a.mtime)
			}
			if got.mtime.Nanosecond() != tc.a.mtime.Nanosecond() {
				t.Errorf("mtime nanoseconds = %d, want %d", got.mtime.Nanosecond(), tc.a.mtime.Nanosecond())
			}
			if got.size != 42 {
				t.Errorf("size = %d, want the object's 42", got.size)
			}
			// The keys are the documented ones.
			for _, k := range []string{metaMode, metaUID, metaGID, metaMtime} {
				if _, ok := m[k]; !ok {
					t.Errorf("store wrote no %s: %v", k, m)
				}
			}
		})
	}
}

func TestAttrsStoreFormat(t *testing.T) {
	m := map[string]string{}
	attrs{perm: 0o4755, uid: 1000, gid: 50, mtime: time.Unix(1, 5)}.store(m)
	want := map[string]string{metaMode: "4755", metaUID: "1000", metaGID: "50", metaMtime: "1000000005"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %q, want %q", k, m[k], v)
		}
	}
}

func TestWithAttrs(t *testing.T) {
	a := attrs{perm: 0o640, uid: 1, gid: 2, mtime: time.Unix(3, 4)}
	orig := map[string]string{"x-amz-meta-color": "blue", metaMode: "777"}
	out := withAttrs(orig, a)
	if orig[metaMode] != "777" || len(orig) != 2 {
		t.Errorf("withAttrs changed its input: %v", orig)
	}
	if out["x-amz-meta-color"] != "blue" || out[metaMode] != "640" {
		t.Errorf("withAttrs = %v", out)
	}
	if out := withAttrs(nil, a); out[metaUID] != "1" {
		t.Errorf("withAttrs(nil) = %v", out)
	}
}

func TestAttrsFromDefaults(t *testing.T) {
	const defPerm = 0o644
	for _, tc := range []struct {
		name  string
		meta  map[string]string
		perm  uint32
		uid   uint32
		gid   uint32
		mtime time.Time
	}{
		{"nil metadata", nil, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"empty metadata", map[string]string{}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"only user metadata", map[string]string{"x-amz-meta-a": "1"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mode only", map[string]string{metaMode: "600"}, 0o600, testOwner.uid, testOwner.gid, testModTime},
		{"mode with type bits is masked", map[string]string{metaMode: "100755"}, 0o755, testOwner.uid, testOwner.gid, testModTime},
		{"mode 0", map[string]string{metaMode: "0"}, 0, testOwner.uid, testOwner.gid, testModTime},
		{"mode not octal", map[string]string{metaMode: "0o755"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mode digit 8", map[string]string{metaMode: "758"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mode decimal word", map[string]string{metaMode: "rwxr-xr-x"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mode empty", map[string]string{metaMode: ""}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mode negative", map[string]string{metaMode: "-755"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mode over 32 bits", map[string]string{metaMode: "77777777777"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mode with space", map[string]string{metaMode: " 755"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"uid and gid", map[string]string{metaUID: "0", metaGID: "0"}, defPerm, 0, 0, testModTime},
		{"uid negative", map[string]string{metaUID: "-1"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"uid overflow", map[string]string{metaUID: "4294967296"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"uid max", map[string]string{metaUID: "4294967295"}, defPerm, 4294967295, testOwner.gid, testModTime},
		{"uid hex", map[string]string{metaUID: "0x10"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"uid garbage", map[string]string{metaUID: "root"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"gid negative", map[string]string{metaGID: "-5"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"gid overflow", map[string]string{metaGID: "99999999999999999999"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mtime garbage", map[string]string{metaMtime: "yesterday"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mtime RFC 3339", map[string]string{metaMtime: "2024-01-01T00:00:00Z"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mtime float", map[string]string{metaMtime: "1.5"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mtime overflow", map[string]string{metaMtime: "9223372036854775808"}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mtime empty", map[string]string{metaMtime: ""}, defPerm, testOwner.uid, testOwner.gid, testModTime},
		{"mtime nanoseconds", map[string]string{metaMtime: "1700000000000000001"}, defPerm, testOwner.uid, testOwner.gid, time.Unix(1700000000, 1)},
		{"mtime negative", map[string]string{metaMtime: "-1"}, defPerm, testOwner.uid, testOwner.gid, time.Unix(0, -1)},
		{"one bad field leaves the others", map[string]string{metaMode: "x", metaUID: "12", metaGID: "-1", metaMtime: "5"},
			defPerm, 12, testOwner.gid, time.Unix(0, 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := objstore.ObjectInfo{Size: 10, ModTime: testModTime, Meta: tc.meta}
			got := attrsFrom(info, defPerm, testOwner)
			if got.perm != tc.perm {
				t.Errorf("perm = %#o, want %#o", got.perm, tc.perm)
			}
			if got.uid != tc.uid || got.gid != tc.gid {
				t.Errorf("owner = %d:%d, want %d:%d", got.uid, got.gid, tc.uid, tc.gid)
			}
			if !got.mtime.Equal(tc.mtime) {
				t.Errorf("mtime = %v, want %v", got.mtime, tc.mtime)
			}
			if got.size != 10 {
				t.Errorf("size = %d, want 10", got.size)
			}
		})
	}
}

func TestApplySetattr(t *testing.T) {
	base := attrs{perm: 0o644, uid: 10, gid: 20, mtime: time.Unix(100, 0), size: 7}
	newMtime := time.Unix(1700000000, 987654321)
	for _, tc := range []struct {
		name    string
		in      fuse.SetAttrInCommon
		want    attrs
		changed bool
	}{
		{"nothing", fuse.SetAttrInCommon{}, base, false},
		{"values without valid bits", fuse.SetAttrInCommon{Mode: 0o777, Owner: fuse.Owner{Uid: 1, Gid: 2}, Mtime: 5}, base, false},
		{"mode", fuse.SetAttrInCommon{Valid: fuse.FATTR_MODE, Mode: 0o600},
			attrs{perm: 0o600, uid: 10, gid: 20, mtime: base.mtime, size: 7}, true},
		{"mode keeps only permission bits", fuse.SetAttrInCommon{Valid: fuse.FATTR_MODE, Mode: syscall.S_IFREG | 0o4751},
			attrs{perm: 0o4751, uid: 10, gid: 20, mtime: base.mtime, size: 7}, true},
		{"mode to the same value still counts", fuse.SetAttrInCommon{Valid: fuse.FATTR_MODE, Mode: 0o644}, base, true},
		{"uid", fuse.SetAttrInCommon{Valid: fuse.FATTR_UID, Owner: fuse.Owner{Uid: 0, Gid: 99}},
			attrs{perm: 0o644, uid: 0, gid: 20, mtime: base.mtime, size: 7}, true},
		{"gid", fuse.SetAttrInCommon{Valid: fuse.FATTR_GID, Owner: fuse.Owner{Uid: 99, Gid: 0}},
			attrs{perm: 0o644, uid: 10, gid: 0, mtime: base.mtime, size: 7}, true},
		{"uid and gid", fuse.SetAttrInCommon{Valid: fuse.FATTR_UID | fuse.FATTR_GID, Owner: fuse.Owner{Uid: 1, Gid: 2}},
			attrs{perm: 0o644, uid: 1, gid: 2, mtime: base.mtime, size: 7}, true},
		{"mtime with nanoseconds", fuse.SetAttrInCommon{Valid: fuse.FATTR_MTIME, Mtime: 1700000000, Mtimensec: 987654321},
			attrs{perm: 0o644, uid: 10, gid: 20, mtime: newMtime, size: 7}, true},
		// Size is truncation, handled by the file, not by the attributes.
		{"size only", fuse.SetAttrInCommon{Valid: fuse.FATTR_SIZE, Size: 3}, base, false},
		// atime and ctime are not kept.
		{"atime only", fuse.SetAttrInCommon{Valid: fuse.FATTR_ATIME, Atime: 5}, base, false},
		{"atime now only", fuse.SetAttrInCommon{Valid: fuse.FATTR_ATIME | fuse.FATTR_ATIME_NOW}, base, false},
		{"ctime only", fuse.SetAttrInCommon{Valid: fuse.FATTR_CTIME, Ctime: 5}, base, false},
		{"fh only", fuse.SetAttrInCommon{Valid: fuse.FATTR_FH, Fh: 3}, base, false},
		{"lock owner only", fuse.SetAttrInCommon{Valid: fuse.FATTR_LOCKOWNER, LockOwner: 3}, base, false},
		// MTIME_NOW means nothing without MTIME (the kernel sends both).
		{"mtime now without mtime", fuse.SetAttrInCommon{Valid: fuse.FATTR_MTIME_NOW}, base, false},
		{"everything", fuse.SetAttrInCommon{
			Valid: fuse.FATTR_MODE | fuse.FATTR_UID | fuse.FATTR_GID | fuse.FATTR_SIZE | fuse.FATTR_ATIME |
				fuse.FATTR_MTIME | fuse.FATTR_FH | fuse.FATTR_CTIME,
			Mode: 0o700, Owner: fuse.Owner{Uid: 3, Gid: 4}, Size: 1, Atime: 1, Mtime: 1700000000, Mtimensec: 987654321, Fh: 9,
		}, attrs{perm: 0o700, uid: 3, gid: 4, mtime: newMtime, size: 7}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := base
			in := &fuse.SetAttrIn{SetAttrInCommon: tc.in}
			changed := a.applySetattr(in)
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if a.perm != tc.want.perm || a.uid != tc.want.uid || a.gid != tc.want.gid || a.size != tc.want.size {
				t.Errorf("attrs = %+v, want %+v", a, tc.want)
			}
			if !a.mtime.Equal(tc.want.mtime) {
				t.Errorf("mtime = %v, want %v", a.mtime, tc.want.mtime)
			}
		})
	}
}

// utimensat(UTIME_NOW) arrives as MTIME|MTIME_NOW: the time is the
// server's now.
func TestApplySetattrMtimeNow(t *testing.T) {
	a := attrs{perm: 0o644, mtime: time.Unix(100, 0)}
	before := time.Now()
	in := &fuse.SetAttrIn{SetAttrInCommon: fuse.SetAttrInCommon{Valid: fuse.FATTR_MTIME | fuse.FATTR_MTIME_NOW, Mtime: 5}}
	if !a.applySetattr(in) {
		t.Fatal("changed = false")
	}
	if a.mtime.Before(before) || a.mtime.After(time.Now()) {
		t.Errorf("mtime = %v, want now (%v)", a.mtime, before)
	}
}

func TestFill(t *testing.T) {
	mtime := time.Unix(1700000000, 123456789)
	a := attrs{perm: 0o4755, uid: 1000, gid: 100, mtime: mtime, size: 1025}
	for _, tc := range []struct {
		name   string
		typ    uint32
		size   uint64
		blocks uint64
		nlink  uint32
	}{
		{"file", syscall.S_IFREG, 1025, 3, 1},
		{"dir", syscall.S_IFDIR, 4096, 8, 2},
		{"symlink", syscall.S_IFLNK, 1025, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out fuse.Attr
			a.fill(&out, tc.typ)
			if out.Mode != tc.typ|0o4755 {
				t.Errorf("mode = %#o, want %#o", out.Mode, tc.typ|0o4755)
			}
			if out.Mode&syscall.S_IFMT != tc.typ {
				t.Errorf("type = %#o, want %#o", out.Mode&syscall.S_IFMT, tc.typ)
			}
			if out.Size != tc.size || out.Blocks != tc.blocks || out.Nlink != tc.nlink {
				t.Errorf("size/blocks/nlink = %d/%d/%d, want %d/%d/%d", out.Size, out.Blocks, out.Nlink, tc.size, tc.blocks, tc.nlink)
			}
			if out.Blksize != 4096 {
				t.Errorf("blksize = %d", out.Blksize)
			}
			if out.Uid != 1000 || out.Gid != 100 {
				t.Errorf("owner = %d:%d", out.Uid, out.Gid)
			}
			for what, got := range map[string]time.Time{"mtime": out.ModTime(), "atime": out.AccessTime(), "ctime": out.ChangeTime()} {
				if !got.Equal(mtime) {
					t.Errorf("%s = %v, want %v", what, got, mtime)
				}
			}
		})
	}
}

func TestFillBlocks(t *testing.T) {
	for _, tc := range []struct {
		size   int64
		blocks uint64
	}{
		{0, 0}, {1, 1}, {511, 1}, {512, 1}, {513, 2}, {1 << 30, 1 << 21},
	} {
		var out fuse.Attr
		attrs{size: tc.size}.fill(&out, syscall.S_IFREG)
		if out.Blocks != tc.blocks || out.Size != uint64(tc.size) {
			t.Errorf("size %d: blocks %d size %d, want %d blocks", tc.size, out.Blocks, out.Size, tc.blocks)
		}
	}
}

// FuzzAttrsFrom feeds metadata as it arrives from S3 (or a damaged store)
// to attrsFrom: it must not panic, must keep perm within 07777, and what
// it reads must survive store and attrsFrom again unchanged.
func FuzzAttrsFrom(f *testing.F) {
	f.Add("644", "1000", "1000", "1700000000123456789", int64(1700000000000000000), uint32(0o644))
	f.Add("100755", "-1", "4294967296", "garbage", int64(0), uint32(0o755))
	f.Add("", "", "", "", int64(-1), uint32(0))
	f.Add("77777777777", "0x10", " 1", "-9223372036854775808", int64(1<<62), uint32(0o7777))
	f.Add("7777", "4294967295", "0", "9223372036854775807", int64(-1<<62), uint32(0xffffffff))
	f.Fuzz(func(t *testing.T, mode, uid, gid, mtime string, modNanos int64, defPerm uint32) {
		defPerm &= 0o7777 // callers pass permission bits
		info := objstore.ObjectInfo{
			Size:    5,
			ModTime: time.Unix(0, modNanos),
			Meta:    map[string]string{metaMode: mode, metaUID: uid, metaGID: gid, metaMtime: mtime},
		}
		a := attrsFrom(info, defPerm, owner{1, 2})
		if a.perm&^0o7777 != 0 {
			t.Fatalf("perm %#o from mode %q has bits beyond 07777", a.perm, mode)
		}
		if a.size != 5 {
			t.Fatalf("size = %d", a.size)
		}
		// Each field is either the parsed value or the default.
		if n, err := strconv.ParseUint(uid, 10, 32); err == nil && a.uid != uint32(n) || err != nil && a.uid != 1 {
			t.Fatalf("uid %q read as %d", uid, a.uid)
		}
		if n, err := strconv.ParseUint(gid, 10, 32); err == nil && a.gid != uint32(n) || err != nil && a.gid != 2 {
			t.Fatalf("gid %q read as %d", gid, a.gid)
		}

		m := map[string]string{"x-amz-meta-keep": "me"}
		a.store(m)
		if m["x-amz-meta-keep"] != "me" {
			t.Fatalf("store clobbered user metadata: %v", m)
		}
		// Another object time and other defaults: the stored metadata
		// alone must carry everything.
		again := attrsFrom(objstore.ObjectInfo{Size: 5, ModTime: time.Unix(3, 3), Meta: m}, defPerm^0o7777, owner{9, 9})
		if again.perm != a.perm || again.uid != a.uid || again.gid != a.gid || !again.mtime.Equal(a.mtime) || again.size != a.size {
			t.Fatalf("round trip: stored %+v (%v), read back %+v", a, m, again)
		}
	})
}
