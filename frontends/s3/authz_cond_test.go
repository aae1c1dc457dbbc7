package s3

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// TestPolicyObjectConditions checks the conditions that read the object
// (s3:ExistingObjectTag) or the write's tags (s3:RequestObjectTag), and
// the answer to a read of a key that is not there (NoSuchKey to whom may
// list the bucket, else AccessDenied).
func TestPolicyObjectConditions(t *testing.T) {
	s, _ := testServer(t)
	tagging := func(k, v string) string {
		return `<Tagging><TagSet><Tag><Key>` + k + `</Key><Value>` + v + `</Value></Tag></TagSet></Tagging>`
	}
	pol := `{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:GetObjectTagging","s3:PutObjectTagging","s3:GetObjectAcl"],"Resource":"arn:aws:s3:::tbk/*",
	   "Condition":{"StringEquals":{"s3:ExistingObjectTag/security":"public"}}},
	  {"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/bob"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::tbk/*",
	   "Condition":{"StringEquals":{"s3:RequestObjectTag/security":"public"}}}]}`
	for i, tc := range []struct {
		who, method, target, body string
		header                    map[string]string
		status                    int
		code                      string
	}{
		{"alice", "PUT", "/tbk", "", nil, 200, ""},
		{"alice", "PUT", "/tbk?policy", pol, nil, 204, ""},
		{"alice", "PUT", "/tbk/pub", "x", map[string]string{"x-amz-tagging": "security=public&foo=bar"}, 200, ""},
		{"alice", "PUT", "/tbk/priv", "x", nil, 200, ""},
		{"alice", "PUT", "/tbk/priv?tagging", tagging("security", "private"), nil, 200, ""},
		{"alice", "PUT", "/tbk/other", "x", map[string]string{"x-amz-tagging": "Security=public"}, 200, ""},

		{"bob", "GET", "/tbk/pub", "", nil, 200, ""},
		{"", "GET", "/tbk/pub", "", nil, 200, ""},
		{"bob", "GET", "/tbk/pub?tagging", "", nil, 200, ""},
		{"bob", "GET", "/tbk/pub?acl", "", nil, 200, ""},
		{"bob", "GET", "/tbk/priv", "", nil, 403, "AccessDenied"},
		{"bob", "GET", "/tbk/priv?tagging", "", nil, 403, "AccessDenied"},
		{"bob", "GET", "/tbk/priv?acl", "", nil, 403, "AccessDenied"},
		{"bob", "GET", "/tbk/other", "", nil, 403, "AccessDenied"}, // tag keys are case-sensitive
		// PutObjectTagging is decided on the tags the object has now.
		{"bob", "PUT", "/tbk/priv?tagging", tagging("security", "public"), nil, 403, "AccessDenied"},
		{"bob", "PUT", "/tbk/pub?tagging", tagging("security", "private"), nil, 200, ""},
		{"bob", "GET", "/tbk/pub", "", nil, 403, "AccessDenied"},
		{"bob", "PUT", "/tbk/pub?tagging", tagging("security", "public"), nil, 403, "AccessDenied"},

		// s3:RequestObjectTag: the x-amz-tagging header of the write.
		{"bob", "PUT", "/tbk/new", "x", nil, 403, "AccessDenied"},
		{"bob", "PUT", "/tbk/new", "x", map[string]string{"x-amz-tagging": "security=private"}, 403, "AccessDenied"},
		{"bob", "PUT", "/tbk/new", "x", map[string]string{"x-amz-tagging": "security=public"}, 200, ""},

		// A key that is not there: AccessDenied to whom may not list the
		// bucket, even if allowed to read it; NoSuchKey to whom may.
		{"alice", "GET", "/tbk/absent", "", nil, 404, "NoSuchKey"},
		{"bob", "GET", "/tbk/absent", "", nil, 403, "AccessDenied"},
		{"", "GET", "/tbk/absent", "", nil, 403, "AccessDenied"},
		{"alice", "PUT", "/tbk?acl", "", map[string]string{"x-amz-acl": "public-read"}, 200, ""},
		{"", "GET", "/tbk/absent", "", nil, 404, "NoSuchKey"},
		{"", "HEAD", "/tbk/absent", "", nil, 404, ""},
		{"bob", "GET", "/tbk/absent", "", nil, 404, "NoSuchKey"},
		{"bob", "GET", "/tbk/absent?attributes", "", map[string]string{"x-amz-object-attributes": "ETag"}, 404, "NoSuchKey"},
		{"alice", "DELETE", "/tbk/pub", "", nil, 204, ""},
		{"", "GET", "/tbk/pub", "", nil, 404, "NoSuchKey"},
		{"", "GET", "/tbk/priv", "", nil, 403, "AccessDenied"}, // there, but not readable
		{"alice", "PUT", "/tbk?acl", "", map[string]string{"x-amz-acl": "private"}, 200, ""},
		{"", "GET", "/tbk/pub", "", nil, 403, "AccessDenied"},
		{"", "HEAD", "/tbk/pub", "", nil, 403, ""},
	} {
		if st, code := call(t, s, tc.who, tc.method, tc.target, []byte(tc.body), tc.header); st != tc.status || code != tc.code {
			t.Errorf("%d: %q %s %s: %d %s, want %d %s", i, tc.who, tc.method, tc.target, st, code, tc.status, tc.code)
		}
	}
}

// TestPolicyResources checks which Resource a bucket policy may name.
func TestPolicyResources(t *testing.T) {
	s, _ := testServer(t)
	doc := func(res string) string {
		return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:ListBucket","Resource":` + res + `}]}`
	}
	for i, tc := range []struct {
		who, method, target, body string
		status                    int
		code                      string
	}{
		{"alice", "PUT", "/rb1", "", 200, ""},
		{"alice", "PUT", "/rb2", "", 200, ""},
		{"bob", "GET", "/rb1", "", 403, "AccessDenied"},
		{"alice", "PUT", "/rb1?policy", doc(`["arn:aws:s3:::*","arn:aws:s3:::*/*"]`), 204, ""},
		{"alice", "PUT", "/rb2?policy", doc(`"*"`), 204, ""},
		{"bob", "GET", "/rb1", "", 200, ""},
		{"bob", "GET", "/rb2?list-type=2", "", 200, ""},
		{"alice", "PUT", "/rb1?policy", doc(`"arn:aws:s3:::rb2"`), 400, "MalformedPolicy"},
		{"alice", "PUT", "/rb1?policy", doc(`["arn:aws:s3:::rb1","arn:aws:s3:::rb2/*"]`), 400, "MalformedPolicy"},
		{"alice", "PUT", "/rb1?policy", doc(`"arn:aws:s3:::rb1?"`), 400, "MalformedPolicy"},
		{"alice", "PUT", "/rb1?policy", doc(`"arn:aws:s3:::rb*"`), 204, ""},
		// An account or region in an S3 ARN (RGW's tenant form
		// arn:aws:s3::TENANT:bucket) is not an S3 ARN to AWS.
		{"alice", "PUT", "/rb1?policy", doc(`"arn:aws:s3::*:rb1"`), 400, "MalformedPolicy"},
	} {
		if st, code := call(t, s, tc.who, tc.method, tc.target, []byte(tc.body), nil); st != tc.status || code != tc.code {
			t.Errorf("%d: %q %s %s: %d %s, want %d %s", i, tc.who, tc.method, tc.target, st, code, tc.status, tc.code)
		}
	}
}

// TestCORSOnMissingKeys checks the Access-Control headers of an actual
// (not preflight) request, an anonymous read of a key that is not there
// in a public-read bucket included (404 NoSuchKey, with the headers).
func TestCORSOnMissingKeys(t *testing.T) {
	s, _ := testServer(t)
	cors := `<CORSConfiguration><CORSRule><AllowedOrigin>*suffix</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>` +
		`<CORSRule><AllowedOrigin>*.put</AllowedOrigin><AllowedMethod>PUT</AllowedMethod></CORSRule></CORSConfiguration>`
	for _, setup := range []struct{ target, body string }{{"/cbk", ""}, {"/cbk?cors", cors}} {
		if st, code := call(t, s, "alice", "PUT", setup.target, []byte(setup.body), map[string]string{"x-amz-acl": "public-read"}); st != 200 {
			t.Fatalf("PUT %s: %d %s", setup.target, st, code)
		}
	}
	for i, tc := range []struct {
		method, origin, acrm string
		status               int
		allowOrigin, methods string
	}{
		{"GET", "foo.suffix", "", 404, "foo.suffix", "GET"},
		{"GET", "foo.bar", "", 404, "", ""},
		{"PUT", "foo.suffix", "GET", 403, "foo.suffix", "GET"},
		{"PUT", "foo.suffix", "PUT", 403, "", ""},
		{"PUT", "foo.suffix", "", 403, "", ""},
		{"PUT", "foo.put", "", 403, "foo.put", "PUT"},
	} {
		r := httptest.NewRequest(tc.method, "http://cairn.test/cbk/bar", nil)
		r.Header.Set("Origin", tc.origin)
		if tc.acrm != "" {
			r.Header.Set("Access-Control-Request-Method", tc.acrm)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		h := w.Header()
		if w.Code != tc.status || h.Get("Access-Control-Allow-Origin") != tc.allowOrigin || h.Get("Access-Control-Allow-Methods") != tc.methods {
			t.Errorf("%d: %s origin %s acrm %q: %d %q %q, want %d %q %q", i, tc.method, tc.origin, tc.acrm,
				w.Code, h.Get("Access-Control-Allow-Origin"), h.Get("Access-Control-Allow-Methods"), tc.status, tc.allowOrigin, tc.methods)
		}
	}
}

// serveAs serves one request signed as who and returns the recorder.
func serveAs(t *testing.T, s *Server, who, method, target, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "http://cairn.test"+target, strings.NewReader(body))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	if err := sigv4.Sign(r, who, who+"-secret", "us-east-1", "s3", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// TestExistingObjectTagOfCopySource checks a copy is decided on the tags
// of the source version it names.
func TestExistingObjectTagOfCopySource(t *testing.T) {
	s, _ := testServer(t)
	pol := `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::vsrc/*",
	  "Condition":{"StringEquals":{"s3:ExistingObjectTag/security":"public"}}}]}`
	for _, st := range []struct{ who, method, target, body string }{
		{"alice", "PUT", "/vsrc", ""},
		{"alice", "PUT", "/vsrc?versioning", `<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`},
		{"alice", "PUT", "/vsrc?policy", pol},
		{"bob", "PUT", "/vdst", ""},
	} {
		if w := serveAs(t, s, st.who, st.method, st.target, st.body, nil); w.Code/100 != 2 {
			t.Fatalf("%s %s: %d %s", st.method, st.target, w.Code, w.Body)
		}
	}
	v1 := serveAs(t, s, "alice", "PUT", "/vsrc/k", "one", map[string]string{"x-amz-tagging": "security=public"}).Header().Get("x-amz-version-id")
	v2 := serveAs(t, s, "alice", "PUT", "/vsrc/k", "two", map[string]string{"x-amz-tagging": "security=private"}).Header().Get("x-amz-version-id")
	if v1 == "" || v2 == "" || v1 == v2 {
		t.Fatalf("versions %q %q", v1, v2)
	}
	for i, tc := range []struct {
		source string
		status int
	}{
		{"/vsrc/k?versionId=" + v1, 200},
		{"/vsrc/k?versionId=" + v2, 403},
		{"/vsrc/k", 403},
	} {
		if w := serveAs(t, s, "bob", "PUT", "/vdst/copy", "", map[string]string{"x-amz-copy-source": tc.source}); w.Code != tc.status {
			t.Errorf("%d: copy of %s: %d, want %d: %s", i, tc.source, w.Code, tc.status, w.Body)
		}
	}
}
