package s3

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/cairnstore/cairn/internal/httpx"
	"github.com/cairnstore/cairn/objstore"
)

func TestRangedBody(t *testing.T) {
	for _, tc := range []struct {
		name     string
		r        io.Reader
		min, max int64
		code     string // "" when the whole body reads
	}{
		{"inside", strings.NewReader("abc"), 1, 3, ""},
		{"exactly the bounds", strings.NewReader("abc"), 3, 3, ""},
		{"empty allowed", strings.NewReader(""), 0, 0, ""},
		{"too large", strings.NewReader("abcd"), 0, 3, "EntityTooLarge"},
		{"too small", strings.NewReader("ab"), 3, 10, "EntityTooSmall"},
		{"form ends inside the file", io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(io.ErrUnexpectedEOF)), 0, 10, "IncompleteBody"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := io.ReadAll(&rangedBody{r: tc.r, min: tc.min, max: tc.max})
			switch {
			case tc.code == "" && err != nil:
				t.Fatalf("read: %v", err)
			case tc.code != "" && (err == nil || toAPIError(err).Code != tc.code):
				t.Fatalf("read error %v, want %s", err, tc.code)
			}
		})
	}
}

func TestFormRequest(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/b", nil)
	r.Header.Set("Authorization", "must not survive")
	req := &request{Request: r, bucket: "b"}
	sub, err := formRequest(req, map[string]string{
		"key": "k", "acl": "public-read", "content-type": "text/plain", "cache-control": "no-cache",
		"tagging":           "<Tagging><TagSet><Tag><Key>a</Key><Value>1 2</Value></Tag></TagSet></Tagging>",
		"x-amz-meta-colour": "blue", "x-amz-storage-class": "STANDARD", "x-amz-server-side-encryption": "AES256",
		"x-amz-credential": "c", "x-amz-signature": "s", "x-amz-algorithm": "a", "x-amz-date": "d",
		"policy": "p", "signature": "s", "awsaccesskeyid": "a", "success_action_status": "201", "x-ignore-x": "y",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{
		"X-Amz-Acl": {"public-read"}, "Content-Type": {"text/plain"}, "Cache-Control": {"no-cache"},
		"X-Amz-Tagging": {"a=1+2"}, "X-Amz-Meta-Colour": {"blue"}, "X-Amz-Storage-Class": {"STANDARD"},
		"X-Amz-Server-Side-Encryption": {"AES256"},
	}
	if len(sub.Header) != len(want) {
		t.Fatalf("headers %v, want %v", sub.Header, want)
	}
	for k, v := range want {
		if sub.Header.Get(k) != v[0] {
			t.Errorf("%s = %q, want %q", k, sub.Header.Get(k), v[0])
		}
	}
	if r.Header.Get("Authorization") == "" || req.Request != r {
		t.Fatal("formRequest changed the original request")
	}
	meta, err := metaFromRequest(sub.Header)
	if err != nil || meta["x-amz-meta-colour"] != "blue" || meta["Cache-Control"] != "no-cache" {
		t.Fatalf("meta %v, %v", meta, err)
	}
	if _, err := formRequest(req, map[string]string{"tagging": "a=1"}); toAPIError(err).Code != "InvalidArgument" {
		t.Fatalf("bad tagging: %v", err)
	}
}

func TestPostResult(t *testing.T) {
	info := objstore.ObjectInfo{ETag: "abc", VersionID: objstore.NullVersion}
	for _, tc := range []struct {
		name, target, host string
		fields             map[string]string
		status             int
		location, body     string
	}{
		{"default", "/b", "s3.test", nil, 204, "http://s3.test/b/a%20b", ""},
		{"virtual-hosted", "/", "b.s3.test", nil, 204, "http://b.s3.test/a%20b", ""},
		{"200", "/b", "s3.test", map[string]string{"success_action_status": "200"}, 200, "http://s3.test/b/a%20b", ""},
		{"201", "/b", "s3.test", map[string]string{"success_action_status": "201"}, 201, "http://s3.test/b/a%20b", "<Key>a b</Key>"},
		{"other status", "/b", "s3.test", map[string]string{"success_action_status": "302"}, 204, "http://s3.test/b/a%20b", ""},
		{"redirect", "/b", "s3.test", map[string]string{"success_action_redirect": "https://app.example/done", "success_action_status": "201"},
			303, "https://app.example/done?bucket=b&key=a+b&etag=%22abc%22", ""},
		{"redirect with a query", "/b", "s3.test", map[string]string{"redirect": "https://app.example/done?x=1"},
			303, "https://app.example/done?x=1&bucket=b&key=a+b&etag=%22abc%22", ""},
		{"relative redirect ignored", "/b", "s3.test", map[string]string{"success_action_redirect": "/done"}, 204, "http://s3.test/b/a%20b", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, tc.target, nil)
			r.Host = tc.host
			rec := httptest.NewRecorder()
			w := httpx.NewRecorder(rec)
			if err := (&Server{}).postResult(w, &request{Request: r, bucket: "b"}, tc.fields, "a b", info); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tc.status || rec.Header().Get("Location") != tc.location || !strings.Contains(rec.Body.String(), tc.body) ||
				rec.Header().Get("ETag") != `"abc"` {
				t.Fatalf("got %d Location %q body %q", rec.Code, rec.Header().Get("Location"), rec.Body.String())
			}
			if tc.body == "" && rec.Body.Len() != 0 {
				t.Fatalf("body %q", rec.Body.String())
			}
		})
	}
}
