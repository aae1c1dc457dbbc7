package objstore

// Listing uploads, copying parts and retried completions.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestListMultipartUploads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "lmu")
	mustBucket(t, s, "lmu2")
	type up struct{ key, id string }
	var all []up
	for _, k := range []string{"a/1", "a/1", "a/2", "b/1", "b/2", "c", "é"} {
		all = append(all, up{k, mustCreateUpload(t, s, "lmu", k, PutOptions{})})
	}
	mustCreateUpload(t, s, "lmu2", "a/1", PutOptions{}) // another bucket
	done := mustCreateUpload(t, s, "lmu", "done", PutOptions{})
	p := mustPutPart(t, s, "lmu", "done", done, 1, []byte("x"))
	if _, err := s.CompleteMultipartUpload(ctx, "lmu", "done", done, []CompletePart{{Number: 1, ETag: p.ETag}}, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(all, func(a, b up) int {
		if a.key != b.key {
			return cmpStr(a.key, b.key)
		}
		return cmpStr(a.id, b.id)
	})
	pick := func(keep func(up) bool) []up {
		var out []up
		for _, u := range all {
			if keep(u) {
				out = append(out, u)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		opt  ListUploadsOptions
		want []up
	}{
		{"all", ListUploadsOptions{}, all},
		{"prefix a/", ListUploadsOptions{Prefix: "a/"}, all[:3]},
		{"prefix b", ListUploadsOptions{Prefix: "b"}, all[3:5]},
		{"prefix none", ListUploadsOptions{Prefix: "zz"}, nil},
		{"key marker", ListUploadsOptions{KeyMarker: "a/1"}, all[2:]},
		{"key and id marker", ListUploadsOptions{KeyMarker: "a/1", UploadIDMarker: all[0].id}, all[1:]},
		{"key marker inside prefix", ListUploadsOptions{Prefix: "b/", KeyMarker: "b/1"}, all[4:5]},
		{"key marker before prefix", ListUploadsOptions{Prefix: "b/", KeyMarker: "a/1"}, all[3:5]},
		{"key and id marker before prefix", ListUploadsOptions{Prefix: "b/", KeyMarker: "a/1", UploadIDMarker: all[0].id}, all[3:5]},
		{"key marker past prefix", ListUploadsOptions{Prefix: "a/", KeyMarker: "b"}, nil},
		{"unicode", ListUploadsOptions{Prefix: "é"}, pick(func(u up) bool { return u.key == "é" })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, truncated, err := s.ListMultipartUploads(ctx, "lmu", tc.opt)
			if err != nil || truncated {
				t.Fatalf("%v truncated %v", err, truncated)
			}
			var gotU []up
			for _, u := range got {
				if u.Bucket != "lmu" || u.Initiated.IsZero() {
					t.Errorf("upload %+v", u)
				}
				gotU = append(gotU, up{u.Key, u.UploadID})
			}
			if fmt.Sprint(gotU) != fmt.Sprint(tc.want) {
				t.Errorf("\n got %v\nwant %v", gotU, tc.want)
			}
		})
	}
	// Paging with the last upload as the markers yields each once.
	for max := 1; max <= 4; max++ {
		var got []up
		opt := ListUploadsOptions{MaxUploads: max}
		for pages := 0; ; pages++ {
			if pages > len(all)+1 {
				t.Fatal("paging does not end")
			}
			page, truncated, err := s.ListMultipartUploads(ctx, "lmu", opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > max {
				t.Fatalf("%d uploads with max %d", len(page), max)
			}
			for _, u := range page {
				got = append(got, up{u.Key, u.UploadID})
			}
			if !truncated {
				break
			}
			opt.KeyMarker, opt.UploadIDMarker = page[len(page)-1].Key, page[len(page)-1].UploadID
		}
		if fmt.Sprint(got) != fmt.Sprint(all) {
			t.Errorf("max %d: paged\n got %v\nwant %v", max, got, all)
		}
	}
	if _, _, err := s.ListMultipartUploads(ctx, "nope", ListUploadsOptions{}); !errors.Is(err, ErrNoSuchBucket) {
		t.Errorf("missing bucket: %v", err)
	}
	if _, _, err := s.ListMultipartUploads(ctx, "lmu", ListUploadsOptions{MaxUploads: -1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative max: %v", err)
	}
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestCopyPart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "cps")
	mustBucket(t, s, "cpd")
	if err := s.SetVersioning(ctx, "cps", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	srcData := randBytes(200<<10, 1) // several blocks
	src := mustPut(t, s, "cps", "src", srcData)
	mustPut(t, s, "cps", "src", []byte("newer version")) // copy the older one by id
	// A multipart source: a whole-object copy of it needs the real MD5.
	mid := mustCreateUpload(t, s, "cps", "multi", PutOptions{})
	m1, m2 := randBytes(70<<10, 2), randBytes(30<<10, 3)
	mp1 := mustPutPart(t, s, "cps", "multi", mid, 1, m1)
	mp2 := mustPutPart(t, s, "cps", "multi", mid, 2, m2)
	if _, err := s.CompleteMultipartUpload(ctx, "cps", "multi", mid, []CompletePart{{Number: 1, ETag: mp1.ETag}, {Number: 2, ETag: mp2.ETag}}, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	before := shardFileCount(t, opt)

	id := mustCreateUpload(t, s, "cpd", "dst", PutOptions{})
	type cp struct {
		n              int
		key, vid       string
		offset, length int64
		want           []byte
	}
	multi := slices.Concat(m1, m2)
	copies := []cp{
		{1, "src", src.VersionID, 0, -1, srcData},
		{2, "src", src.VersionID, 1000, 70000, srcData[1000:71000]},
		{3, "multi", "", 0, -1, multi},
		{4, "multi", "", 60 << 10, 20 << 10, multi[60<<10 : 80<<10]}, // spans both parts
		{5, "src", src.VersionID, int64(len(srcData)) - 1, 1, srcData[len(srcData)-1:]},
	}
	var complete []CompletePart
	var want [][]byte
	for _, c := range copies {
		p, err := s.CopyPart(ctx, "cpd", "dst", id, c.n, "cps", c.key, c.vid, c.offset, c.length)
		if err != nil {
			t.Fatalf("copy part %d: %v", c.n, err)
		}
		if p.ETag != md5hex(c.want) || p.Size != int64(len(c.want)) || p.Number != c.n {
			t.Errorf("copy part %d: %+v, want ETag %s size %d", c.n, p, md5hex(c.want), len(c.want))
		}
		complete = append(complete, CompletePart{Number: c.n, ETag: p.ETag})
		want = append(want, c.want)
	}
	if p, err := s.CopyPart(ctx, "cpd", "dst", id, 1, "cps", "src", src.VersionID, 0, -1); err != nil || p.ETag != src.ETag {
		t.Errorf("whole single-part copy: ETag %s %v, want the source's %s", p.ETag, err, src.ETag)
	}
	if got := shardFileCount(t, opt); got != before {
		t.Fatalf("copy part wrote shard files: %d -> %d", before, got)
	}
	for _, bad := range []struct {
		name           string
		offset, length int64
		want           error
	}{
		{"offset past end", int64(len(srcData)), 1, ErrInvalidRange},
		{"length past end", 10, int64(len(srcData)), ErrInvalidRange},
		{"negative offset", -1, 10, ErrInvalidRange},
	} {
		if _, err := s.CopyPart(ctx, "cpd", "dst", id, 9, "cps", "src", src.VersionID, bad.offset, bad.length); !errors.Is(err, bad.want) {
			t.Errorf("copy part, %s: %v, want %v", bad.name, err, bad.want)
		}
	}
	if _, err := s.CopyPart(ctx, "cpd", "dst", id, 9, "cps", "missing", "", 0, -1); !errors.Is(err, ErrNoSuchKey) {
		t.Errorf("copy part of a missing key: %v", err)
	}

	info, err := s.CompleteMultipartUpload(ctx, "cpd", "dst", id, complete, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.ETag != multipartETag(want...) {
		t.Errorf("ETag %s, want %s", info.ETag, multipartETag(want...))
	}
	whole := slices.Concat(want...)
	if got := readAll(t, s, "cpd", "dst", GetOptions{}); !bytes.Equal(got, whole) {
		t.Fatal("content differs from the copied ranges")
	}
	// The sources may go: the copy holds its own references.
	for _, k := range []string{"src", "multi"} {
		vs, err := s.ListVersions(ctx, "cps", ListVersionsOptions{Prefix: k})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs.Versions {
			if _, err := s.Delete(ctx, "cps", v.Key, DeleteOptions{VersionID: v.VersionID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustClean(t, s)
	if got := readAll(t, s, "cpd", "dst", GetOptions{}); !bytes.Equal(got, whole) {
		t.Fatal("content differs after the sources were deleted")
	}
}

// A complete retried after it succeeded (the answer was lost) gets the
// same answer; one with other parts, or for another upload, does not.
func TestCompleteRetry(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	id, err := s.CreateMultipartUpload(ctx, "bkt", "k", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p1, err := s.PutPart(ctx, "bkt", "k", id, 1, bytes.NewReader([]byte("hello ")), 6, PartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := s.PutPart(ctx, "bkt", "k", id, 2, bytes.NewReader([]byte("world")), 5, PartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parts := []CompletePart{{Number: 1, ETag: p1.ETag}, {Number: 2, ETag: p2.ETag}}
	first, err := s.CompleteMultipartUpload(ctx, "bkt", "k", id, parts, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.CompleteMultipartUpload(ctx, "bkt", "k", id, parts, PutOptions{})
	if err != nil || again.ETag != first.ETag || again.VersionID != first.VersionID {
		t.Fatalf("retry: %+v %v, want %+v", again, err, first)
	}
	if _, err := s.CompleteMultipartUpload(ctx, "bkt", "k", id, parts[:1], PutOptions{}); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("retry with other parts: %v", err)
	}
	if _, err := s.CompleteMultipartUpload(ctx, "bkt", "k", "0123456789abcdef0123456789abcdef", parts, PutOptions{}); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("other upload id: %v", err)
	}
	if got := readAll(t, s, "bkt", "k", GetOptions{}); string(got) != "hello world" {
		t.Fatalf("content %q", got)
	}
}
