package fs

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

// TestImpliedDirMtime: a directory that only exists through the keys
// under it shows the newest mtime of the files directly in it (the
// mount's x-cairn-mtime where set, else the version's time), or the
// bucket's creation when it holds no file; never 1970. A marker's mtime
// is the marker's.
func TestImpliedDirMtime(t *testing.T) {
	f := newTestFS(t)
	ctx := context.Background()
	bd := testBucketDir(t, f, "bkt")
	b, err := f.store.HeadBucket(ctx, "bkt")
	if err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC)
	older := time.Date(2019, 1, 2, 3, 4, 5, 6, time.UTC)
	put := func(key string, mtime time.Time) objstore.ObjectInfo {
		t.Helper()
		var m map[string]string
		if !mtime.IsZero() {
			m = map[string]string{metaMtime: strconv.FormatInt(mtime.UnixNano(), 10)}
		}
		info, err := f.store.Put(ctx, "bkt", key, bytes.NewReader([]byte(key)), int64(len(key)), objstore.PutOptions{Meta: m})
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	put("set/a", old)
	put("set/b", older)
	put("set/sub/c", time.Time{}) // in a subdirectory: not looked at
	s3 := put("mixed/s3", time.Time{})
	put("mixed/mount", old)
	put("onlydirs/x/y", old)
	put("marked/", older)
	put("marked/z", old)
	for _, tc := range []struct {
		name string
		want time.Time
	}{
		{"set", old},
		{"mixed", s3.ModTime}, // written after the 2020 mtime
		{"onlydirs", b.Created},
		{"onlydirs/x", old},
		{"marked", older},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := bd
			var out fuse.EntryOut
			for _, name := range strings.Split(tc.name, "/") {
				in, errno := d.Lookup(ctx, name, &out)
				if errno != 0 {
					t.Fatalf("lookup %s: %v", name, errno)
				}
				d.AddChild(name, in, true)
				d = in.Operations().(*dirNode)
			}
			if got := time.Unix(int64(out.Mtime), int64(out.Mtimensec)); !got.Equal(tc.want) {
				t.Errorf("lookup: mtime %v, want %v", got, tc.want)
			}
			var ao fuse.AttrOut
			if errno := d.Getattr(ctx, nil, &ao); errno != 0 {
				t.Fatalf("getattr: %v", errno)
			}
			if got := time.Unix(int64(ao.Mtime), int64(ao.Mtimensec)); !got.Equal(tc.want) {
				t.Errorf("getattr: mtime %v, want %v", got, tc.want)
			}
			if ao.Mtime == 0 {
				t.Error("mtime is the Unix epoch")
			}
		})
	}
}
