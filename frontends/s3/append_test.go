package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"strconv"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

func crc32b64(b []byte) string {
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(out[:])
}

// TestAppendObject runs PutObject with x-amz-write-offset-bytes through
// the face: the answers S3 gives, the content, and the object's CRC32
// extended over every append.
func TestAppendObject(t *testing.T) {
	s, st := testServer(t)
	ctx := context.Background()
	if code, _ := call(t, s, "root", "PUT", "/app", nil, nil); code != 200 {
		t.Fatalf("create bucket: %d", code)
	}
	shaSum := sha256.Sum256([]byte("sha"))
	if code, c := call(t, s, "root", "PUT", "/app/sha", []byte("sha"),
		map[string]string{"x-amz-checksum-sha256": base64.StdEncoding.EncodeToString(shaSum[:])}); code != 200 {
		t.Fatalf("put with sha256: %d %s", code, c)
	}
	var model []byte
	at := func(n int) map[string]string { return map[string]string{hdrWriteOffset: strconv.Itoa(n)} }
	with := func(h map[string]string, k, v string) map[string]string { h[k] = v; return h }
	steps := []struct {
		name   string
		key    string
		body   string
		header func() map[string]string
		status int
		code   string
		grows  bool // the body joins the model
	}{
		{"create at 0", "log", "first line\n", func() map[string]string {
			return with(at(0), "x-amz-checksum-crc32", crc32b64([]byte("first line\n")))
		}, 200, "", true},
		{"append", "log", "second\n", func() map[string]string { return at(len(model)) }, 200, "", true},
		{"append with its own crc32", "log", "third\n", func() map[string]string {
			return with(at(len(model)), "x-amz-checksum-crc32", crc32b64([]byte("third\n")))
		}, 200, "", true},
		{"offset short", "log", "x", func() map[string]string { return at(len(model) - 1) }, 400, "InvalidWriteOffset", false},
		{"offset past the end", "log", "x", func() map[string]string { return at(len(model) + 1) }, 400, "InvalidWriteOffset", false},
		{"offset on a missing key", "nothing", "x", func() map[string]string { return at(5) }, 400, "InvalidWriteOffset", false},
		{"negative offset", "log", "x", func() map[string]string { return at(-1) }, 400, "InvalidArgument", false},
		{"not a number", "log", "x", func() map[string]string { return map[string]string{hdrWriteOffset: "ten"} }, 400, "InvalidArgument", false},
		{"if-none-match", "log", "x", func() map[string]string { return with(at(len(model)), "If-None-Match", "*") }, 400, "InvalidArgument", false},
		{"if-match another", "log", "x", func() map[string]string { return with(at(len(model)), "If-Match", `"0123"`) }, 412, "PreconditionFailed", false},
		{"sse requested", "log", "x", func() map[string]string {
			return with(at(len(model)), "x-amz-server-side-encryption", "AES256")
		}, 400, "InvalidRequest", false},
		{"sha256 object", "sha", "x", func() map[string]string { return at(3) }, 400, "InvalidRequest", false},
	}
	for _, st := range steps {
		code, c := call(t, s, "root", "PUT", "/app/"+st.key, []byte(st.body), st.header())
		if code != st.status || c != st.code {
			t.Fatalf("%s: %d %s, want %d %s", st.name, code, c, st.status, st.code)
		}
		if st.grows {
			model = append(model, st.body...)
		}
	}
	r, err := st.Open(ctx, "app", "log", objstore.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make([]byte, r.Size())
	if _, err := r.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, model) {
		t.Fatalf("content %q, want %q", got, model)
	}
	info := r.Info()
	if sum := info.Meta["x-amz-checksum-crc32"]; sum != crc32b64(model) {
		t.Fatalf("object crc32 %s, want %s (of the whole)", sum, crc32b64(model))
	}
	if info.PartsCount != 3 {
		t.Fatalf("%d parts, want 3", info.PartsCount)
	}
}
