package sigv2

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	miniosigner "github.com/minio/minio-go/v7/pkg/signer"
)

// startServer runs a net/http server that verifies every request and
// answers 204, or 403 with the error; bucket is the virtual host's bucket,
// the first label of a Host ending in ".s3.local".
func startServer(t *testing.T, v *Verifier) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bucket := ""
		if b, ok := strings.CutSuffix(r.Host, ".s3.local"); ok {
			bucket = b
		}
		if _, err := v.Verify(r, bucket); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func doRequest(t *testing.T, r *http.Request) (int, string) {
	t.Helper()
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	var b strings.Builder
	buf := make([]byte, 512)
	n, _ := res.Body.Read(buf)
	b.Write(buf[:n])
	return res.StatusCode, b.String()
}

// minio-go's V2 signer, over a real connection.
func TestMinioSignerV2(t *testing.T) {
	base := startServer(t, &Verifier{Secret: testSecret})
	for _, tc := range []struct {
		name, method, path, host string
		header                   map[string]string
	}{
		{name: "get", method: "GET", path: "/bucket/key"},
		{name: "odd key", method: "GET", path: "/bucket/a%20b/%2B%21%27%28%29%2A/%E2%82%AC?versionId=x%2By&list-type=2"},
		{name: "put with meta", method: "PUT", path: "/bucket/key", header: map[string]string{"Content-Type": "text/plain", "X-Amz-Meta-Colour": "blue"}},
		{name: "multipart part", method: "PUT", path: "/bucket/key?partNumber=1&uploadId=abc"},
		{name: "retention", method: "PUT", path: "/bucket/key?retention"},
		{name: "virtual-hosted", method: "GET", path: "/key?acl", host: "bucket.s3.local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.NewRequest(tc.method, base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Host = tc.host
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			signed := miniosigner.SignV2(*r, testAccessKey, testSecretKey, tc.host != "")
			if code, body := doRequest(t, signed); code != http.StatusNoContent {
				t.Fatalf("SignV2: %d %s", code, body)
			}
			r2, _ := http.NewRequest(tc.method, base+tc.path, nil)
			r2.Host = tc.host
			for k, v := range tc.header {
				r2.Header.Set(k, v)
			}
			pre := miniosigner.PreSignV2(*r2, testAccessKey, testSecretKey, 60, tc.host != "")
			if code, body := doRequest(t, pre); code != http.StatusNoContent {
				t.Fatalf("PreSignV2 %s: %d %s", pre.URL, code, body)
			}
			bad := miniosigner.SignV2(*r, testAccessKey, "wrong-secret", tc.host != "")
			if code, body := doRequest(t, bad); code != http.StatusForbidden || !strings.Contains(body, "signature does not match") {
				t.Fatalf("SignV2 with a wrong secret: %d %s", code, body)
			}
		})
	}
}
