package fs

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

func TestSetxattr(t *testing.T) {
	existing := func() map[string]string {
		return map[string]string{"x-amz-meta-color": "blue", metaMode: "644", "Cache-Control": "no-cache"}
	}
	for _, tc := range []struct {
		name   string
		meta   map[string]string
		attr   string
		data   string
		flags  uint32
		remove bool
		errno  syscall.Errno
		want   map[string]string // the metadata after, when errno is 0
	}{
		{"create new", existing(), "user.size", "L", 0, false, 0,
			map[string]string{"x-amz-meta-color": "blue", "x-amz-meta-size": "L", metaMode: "644", "Cache-Control": "no-cache"}},
		{"replace existing", existing(), "user.color", "red", 0, false, 0,
			map[string]string{"x-amz-meta-color": "red", metaMode: "644", "Cache-Control": "no-cache"}},
		{"XATTR_CREATE missing", existing(), "user.size", "L", xattrCreate, false, 0,
			map[string]string{"x-amz-meta-color": "blue", "x-amz-meta-size": "L", metaMode: "644", "Cache-Control": "no-cache"}},
		{"XATTR_CREATE existing", existing(), "user.color", "red", xattrCreate, false, syscall.EEXIST, nil},
		{"XATTR_REPLACE existing", existing(), "user.color", "red", xattrReplace, false, 0,
			map[string]string{"x-amz-meta-color": "red", metaMode: "644", "Cache-Control": "no-cache"}},
		{"XATTR_REPLACE missing", existing(), "user.size", "L", xattrReplace, false, syscall.ENODATA, nil},
		{"empty value", existing(), "user.empty", "", 0, false, 0,
			map[string]string{"x-amz-meta-color": "blue", "x-amz-meta-empty": "", metaMode: "644", "Cache-Control": "no-cache"}},
		{"into nil metadata", nil, "user.a", "1", 0, false, 0, map[string]string{"x-amz-meta-a": "1"}},
		{"remove existing", existing(), "user.color", "", 0, true, 0,
			map[string]string{metaMode: "644", "Cache-Control": "no-cache"}},
		{"remove missing", existing(), "user.size", "", 0, true, syscall.ENODATA, nil},
		{"remove from nil metadata", nil, "user.a", "", 0, true, syscall.ENODATA, nil},
		{"name lower-cased", existing(), "user.Size", "L", 0, false, 0,
			map[string]string{"x-amz-meta-color": "blue", "x-amz-meta-size": "L", metaMode: "644", "Cache-Control": "no-cache"}},
		{"upper-case name replaces", existing(), "user.COLOR", "red", xattrReplace, false, 0,
			map[string]string{"x-amz-meta-color": "red", metaMode: "644", "Cache-Control": "no-cache"}},
		{"upper-case name create existing", existing(), "user.Color", "red", xattrCreate, false, syscall.EEXIST, nil},
		{"remove upper-case name", existing(), "user.Color", "", 0, true, 0,
			map[string]string{metaMode: "644", "Cache-Control": "no-cache"}},
		{"facts read-only", existing(), "user.cairn.etag", "x", 0, false, syscall.EPERM, nil},
		{"facts read-only, unknown fact", existing(), "user.cairn.anything", "x", 0, false, syscall.EPERM, nil},
		{"facts cannot be removed", existing(), "user.cairn.version", "", 0, true, syscall.EPERM, nil},
		// The name is lower-cased into x-amz-meta-cairn.etag, which
		// listxattr then shows as user.cairn.etag: the read-only
		// namespace must be checked on the lower-cased name.
		{"facts read-only in upper case", existing(), "user.CAIRN.etag", "x", 0, false, syscall.EPERM, nil},
		{"facts read-only in mixed case", existing(), "user.Cairn.version", "x", 0, false, syscall.EPERM, nil},
		{"user.cairn without dot is a user attribute", existing(), "user.cairnish", "x", 0, false, 0,
			map[string]string{"x-amz-meta-color": "blue", "x-amz-meta-cairnish": "x", metaMode: "644", "Cache-Control": "no-cache"}},
		{"security namespace", existing(), "security.selinux", "x", 0, false, syscall.ENOTSUP, nil},
		{"trusted namespace", existing(), "trusted.x", "x", 0, false, syscall.ENOTSUP, nil},
		{"system namespace", existing(), "system.posix_acl_access", "x", 0, false, syscall.ENOTSUP, nil},
		{"remove security", existing(), "security.selinux", "", 0, true, syscall.ENOTSUP, nil},
		{"user. alone", existing(), "user.", "x", 0, false, syscall.ENOTSUP, nil},
		{"no namespace", existing(), "color", "x", 0, false, syscall.ENOTSUP, nil},
		{"namespace is case-sensitive", existing(), "USER.color", "x", 0, false, syscall.ENOTSUP, nil},
		{"empty name", existing(), "", "x", 0, false, syscall.ENOTSUP, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.meta)
			var data []byte
			if !tc.remove {
				data = []byte(tc.data)
			}
			got, errno := setxattr(tc.meta, tc.attr, data, tc.flags, tc.remove)
			if errno != tc.errno {
				t.Fatalf("errno = %v, want %v (metadata %v)", errno, tc.errno, got)
			}
			if !maps.Equal(tc.meta, before) {
				t.Errorf("setxattr changed its input: %v, was %v", tc.meta, before)
			}
			if errno != 0 {
				if got != nil {
					t.Errorf("metadata %v returned with errno %v", got, errno)
				}
				return
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("metadata = %v, want %v", got, tc.want)
			}
		})
	}
}

func xattrTestInfo() objstore.ObjectInfo {
	return objstore.ObjectInfo{
		Bucket: "b", Key: "k", VersionID: "v123", Size: 1234, ETag: "0123456789abcdef0123456789abcdef",
		ModTime: time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC),
		Meta:    map[string]string{"x-amz-meta-color": "blue", "x-amz-meta-empty": "", metaMode: "644", "Cache-Control": "no"},
	}
}

func TestGetxattr(t *testing.T) {
	info := xattrTestInfo()
	for _, tc := range []struct {
		name  string
		attr  string
		size  int // of the buffer
		want  string
		n     uint32
		errno syscall.Errno
	}{
		{"user attribute", "user.color", 100, "blue", 4, 0},
		{"exact buffer", "user.color", 4, "blue", 4, 0},
		{"small buffer answers the size", "user.color", 3, "", 4, syscall.ERANGE},
		{"size query", "user.color", 0, "", 4, syscall.ERANGE},
		{"empty value", "user.empty", 0, "", 0, 0},
		{"upper-case name", "user.COLOR", 100, "blue", 4, 0},
		{"missing", "user.size", 100, "", 0, syscall.ENODATA},
		{"stored header is no xattr", "user.Cache-Control", 100, "", 0, syscall.ENODATA},
		{"mode is no xattr", "user." + metaMode, 100, "", 0, syscall.ENODATA},
		{"etag", "user.cairn.etag", 100, info.ETag, 32, 0},
		{"version", "user.cairn.version", 100, "v123", 4, 0},
		{"size", "user.cairn.size", 100, "1234", 4, 0},
		{"mtime", "user.cairn.mtime", 100, "2024-05-06T07:08:09.000000010Z", 30, 0},
		{"fact with small buffer", "user.cairn.etag", 10, "", 32, syscall.ERANGE},
		{"unknown fact", "user.cairn.owner", 100, "", 0, syscall.ENODATA},
		{"security namespace is not kept", "security.selinux", 100, "", 0, syscall.ENOTSUP},
		{"ACLs are not kept", "system.posix_acl_access", 100, "", 0, syscall.ENOTSUP},
		{"no namespace", "color", 100, "", 0, syscall.ENOTSUP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := make([]byte, tc.size)
			n, errno := getxattr(info, tc.attr, dest)
			if errno != tc.errno || n != tc.n {
				t.Fatalf("getxattr(%q, %d bytes) = %d, %v; want %d, %v", tc.attr, tc.size, n, errno, tc.n, tc.errno)
			}
			if errno == 0 && string(dest[:n]) != tc.want {
				t.Errorf("value = %q, want %q", dest[:n], tc.want)
			}
		})
	}
}

func TestGetxattrNilMeta(t *testing.T) {
	info := xattrTestInfo()
	info.Meta = nil
	if _, errno := getxattr(info, "user.color", make([]byte, 10)); errno != syscall.ENODATA {
		t.Errorf("errno = %v, want ENODATA", errno)
	}
	if n, errno := getxattr(info, "user.cairn.size", make([]byte, 10)); errno != 0 || n != 4 {
		t.Errorf("user.cairn.size = %d, %v", n, errno)
	}
}

func TestListxattr(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta map[string]string
		want []string // the facts are never listed
	}{
		{"no metadata", nil, nil},
		{"no user metadata", map[string]string{metaMode: "644", "Cache-Control": "no"}, nil},
		{"user metadata sorted", map[string]string{"x-amz-meta-zeta": "1", "x-amz-meta-alpha": "2", metaUID: "0"},
			[]string{"user.alpha", "user.zeta"}},
		// S3 can store x-amz-meta-cairn.etag; it must not show up as
		// user.cairn.etag, which reads the fact.
		{"user metadata shadowing a fact", map[string]string{"x-amz-meta-cairn.etag": "fake", "x-amz-meta-a": "1"},
			[]string{"user.a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := xattrTestInfo()
			info.Meta = tc.meta
			need, errno := listxattr(info, nil)
			if len(tc.want) == 0 {
				if need != 0 || errno != 0 {
					t.Fatalf("listxattr of no names = %d, %v; want 0, 0", need, errno)
				}
				return
			}
			if errno != syscall.ERANGE {
				t.Fatalf("size query errno = %v, want ERANGE", errno)
			}
			dest := make([]byte, need)
			n, errno := listxattr(info, dest)
			if errno != 0 || n != need {
				t.Fatalf("listxattr = %d, %v; want %d, 0", n, errno, need)
			}
			if n == 0 || dest[n-1] != 0 {
				t.Fatalf("list %q does not end in NUL", dest[:n])
			}
			got := strings.Split(string(dest[:n-1]), "\x00")
			if !slices.IsSorted(got) {
				t.Errorf("names not sorted: %q", got)
			}
			if len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Errorf("names repeat: %q", got)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("names = %q, want %q", got, tc.want)
			}
			// Every listed name can be read.
			for _, name := range got {
				if _, errno := getxattr(info, name, make([]byte, 1024)); errno != 0 {
					t.Errorf("listed %q, but getxattr says %v", name, errno)
				}
			}
		})
	}
}

func TestListxattrBuffer(t *testing.T) {
	info := xattrTestInfo()
	info.Meta = map[string]string{"x-amz-meta-a": "1"}
	info.Meta["x-amz-meta-b"] = "2"
	want := "user.a\x00user.b\x00"
	for _, tc := range []struct {
		name  string
		size  int
		n     uint32
		errno syscall.Errno
	}{
		{"size query", 0, uint32(len(want)), syscall.ERANGE},
		{"one short", len(want) - 1, uint32(len(want)), syscall.ERANGE},
		{"exact", len(want), uint32(len(want)), 0},
		{"larger", len(want) + 10, uint32(len(want)), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := make([]byte, tc.size)
			n, errno := listxattr(info, dest)
			if n != tc.n || errno != tc.errno {
				t.Fatalf("listxattr(%d bytes) = %d, %v; want %d, %v", tc.size, n, errno, tc.n, tc.errno)
			}
			if errno == 0 && !bytes.Equal(dest[:n], []byte(want)) {
				t.Errorf("list = %q, want %q", dest[:n], want)
			}
		})
	}
}

// What setxattr stores, getxattr and listxattr show.
func TestSetxattrThenGet(t *testing.T) {
	m, errno := setxattr(nil, "user.Project", []byte("cairn"), xattrCreate, false)
	if errno != 0 {
		t.Fatal(errno)
	}
	info := xattrTestInfo()
	info.Meta = m
	dest := make([]byte, 16)
	if n, errno := getxattr(info, "user.project", dest); errno != 0 || string(dest[:n]) != "cairn" {
		t.Errorf("getxattr = %q, %v", dest[:n], errno)
	}
	list := make([]byte, 256)
	n, _ := listxattr(info, list)
	if !slices.Contains(strings.Split(string(list[:n]), "\x00"), "user.project") {
		t.Errorf("listxattr = %q, want user.project in it", list[:n])
	}
}

// FuzzSetxattr: attribute names and values come from any process on the
// mount. setxattr must not panic, and what it accepts getxattr reads back
// and listxattr lists once.
func FuzzSetxattr(f *testing.F) {
	for _, s := range []string{"user.color", "user.Color", "user.", "user.cairn.etag", "security.selinux", "", "user.a.b"} {
		f.Add(s, []byte("v"), uint32(0), false)
	}
	f.Add("user.color", []byte(nil), uint32(0), true)
	f.Add("user.new", []byte("x"), uint32(xattrReplace), false)
	f.Fuzz(func(t *testing.T, attr string, data []byte, flags uint32, remove bool) {
		if strings.Contains(attr, "\x00") {
			return // names reach the mount as C strings
		}
		if remove {
			data = nil
		}
		meta := map[string]string{"x-amz-meta-color": "blue", metaMode: "644"}
		m, errno := setxattr(meta, attr, data, flags, remove)
		if errno != 0 {
			if m != nil {
				t.Fatalf("metadata with errno %v", errno)
			}
			return
		}
		if m[metaMode] != "644" {
			t.Fatalf("setxattr(%q) touched %s: %v", attr, metaMode, m)
		}
		info := xattrTestInfo()
		info.Meta = m
		dest := make([]byte, len(data)+1)
		n, gerr := getxattr(info, attr, dest)
		switch {
		case remove && gerr != syscall.ENODATA:
			t.Fatalf("after removing %q, getxattr = %q, %v", attr, dest[:n], gerr)
		case !remove && (gerr != 0 || string(dest[:n]) != string(data)):
			t.Fatalf("after setting %q to %q, getxattr = %q, %v", attr, data, dest[:n], gerr)
		}
		need, _ := listxattr(info, nil)
		list := make([]byte, need)
		n, _ = listxattr(info, list)
		names := strings.Split(strings.TrimSuffix(string(list[:n]), "\x00"), "\x00")
		if len(slices.Compact(slices.Clone(names))) != len(names) {
			t.Fatalf("after setxattr(%q), listxattr repeats names: %q", attr, names)
		}
	})
}

func TestNoXattr(t *testing.T) {
	for _, tc := range []struct {
		name          string
		attr          string
		write, remove bool
		want          syscall.Errno
	}{
		{"get a user attribute", "user.color", false, false, syscall.ENODATA},
		{"set a user attribute", "user.color", true, false, syscall.ENOTSUP},
		{"remove a user attribute", "user.color", true, true, syscall.ENODATA},
		{"get a label", "security.selinux", false, false, syscall.ENOTSUP},
		{"get an ACL", "system.posix_acl_access", false, false, syscall.ENOTSUP},
		{"set a trusted attribute", "trusted.x", true, false, syscall.ENOTSUP},
		{"remove a label", "security.selinux", true, true, syscall.ENOTSUP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := noXattr(tc.attr, tc.write, tc.remove); got != tc.want {
				t.Errorf("noXattr(%q, write %v, remove %v) = %v, want %v", tc.attr, tc.write, tc.remove, got, tc.want)
			}
		})
	}
}

// TestSetFact: a fact may be set to the value it holds (cp -a, rsync -X
// copying between files of one version), nothing else.
func TestSetFact(t *testing.T) {
	info := xattrTestInfo()
	for _, tc := range []struct {
		name   string
		info   *objstore.ObjectInfo
		attr   string
		data   string
		flags  uint32
		remove bool
		errno  syscall.Errno
	}{
		{"etag, same value", &info, "user.cairn.etag", info.ETag, 0, false, 0},
		{"version, same value", &info, "user.cairn.version", "v123", 0, false, 0},
		{"size, same value", &info, "user.cairn.size", "1234", 0, false, 0},
		{"mtime, same value", &info, "user.cairn.mtime", "2024-05-06T07:08:09.000000010Z", 0, false, 0},
		{"same value, name in upper case", &info, "user.CAIRN.etag", info.ETag, 0, false, 0},
		{"same value, XATTR_REPLACE", &info, "user.cairn.etag", info.ETag, xattrReplace, false, 0},
		{"same value, XATTR_CREATE: it exists", &info, "user.cairn.etag", info.ETag, xattrCreate, false, syscall.EEXIST},
		{"another value", &info, "user.cairn.etag", "forged", 0, false, syscall.EPERM},
		{"a prefix of the value", &info, "user.cairn.etag", info.ETag[:8], 0, false, syscall.EPERM},
		{"empty value", &info, "user.cairn.etag", "", 0, false, syscall.EPERM},
		{"unknown fact", &info, "user.cairn.anything", "", 0, false, syscall.EPERM},
		{"remove", &info, "user.cairn.etag", "", 0, true, syscall.EPERM},
		{"no version (implied directory)", nil, "user.cairn.etag", info.ETag, 0, false, syscall.EPERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !isFact(tc.attr) {
				t.Fatalf("isFact(%q) = false", tc.attr)
			}
			if errno := setFact(tc.info, tc.attr, []byte(tc.data), tc.flags, tc.remove); errno != tc.errno {
				t.Errorf("setFact = %v, want %v", errno, tc.errno)
			}
		})
	}
	for _, attr := range []string{"user.cairnish", "user.color", "security.cairn.etag", "user."} {
		if isFact(attr) {
			t.Errorf("isFact(%q) = true", attr)
		}
	}
}

// TestSetxattrTimes: a setxattr changes the ctime only, on a file whose
// mtime is in its metadata (written on the mount) and on one whose mtime
// is its version's time (written over S3, which the change replaces).
func TestSetxattrTimes(t *testing.T) {
	mounted := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, tc := range []struct {
		name string
		meta map[string]string
	}{
		{"written on the mount", map[string]string{metaMtime: strconv.FormatInt(mounted.UnixNano(), 10)}},
		{"written over S3", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFS(t)
			ctx := context.Background()
			d := testBucketDir(t, f, "bkt")
			n := testFileNode(t, d, "f")
			if _, err := f.store.Put(ctx, "bkt", "f", strings.NewReader("x"), 1, objstore.PutOptions{Meta: tc.meta}); err != nil {
				t.Fatal(err)
			}
			stat := func() (mtime, ctime time.Time) {
				t.Helper()
				var out fuse.AttrOut
				if errno := n.Getattr(ctx, nil, &out); errno != 0 {
					t.Fatalf("getattr: %v", errno)
				}
				return time.Unix(int64(out.Mtime), int64(out.Mtimensec)), time.Unix(int64(out.Ctime), int64(out.Ctimensec))
			}
			mtime, ctime := stat()
			if ctime.Before(mtime) {
				t.Errorf("ctime %v before mtime %v", ctime, mtime)
			}
			time.Sleep(10 * time.Millisecond) // a later version time
			if errno := n.Setxattr(ctx, "user.color", []byte("blue"), 0); errno != 0 {
				t.Fatalf("setxattr: %v", errno)
			}
			mtime2, ctime2 := stat()
			if !mtime2.Equal(mtime) {
				t.Errorf("setxattr moved the mtime: %v, was %v", mtime2, mtime)
			}
			if !ctime2.After(ctime) {
				t.Errorf("setxattr left the ctime at %v (was %v)", ctime2, ctime)
			}
			info, err := f.store.Head(ctx, "bkt", "f", objstore.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := attrsFrom(info, 0, owner{}).mtime; !got.Equal(mtime) {
				t.Errorf("stored mtime %v, want %v (a remount would show it)", got, mtime)
			}
		})
	}
}
