package iceberg

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzSignRequest: a sign request from a client is decoded or refused
// without a panic; an accepted one has an absolute http(s) URI and an S3
// method; and only requests for keys under the table's prefix of its
// bucket (or a list whose prefix is under it) count as inside.
func FuzzSignRequest(f *testing.F) {
	f.Add(`{"region":"us-east-1","uri":"http://h:9000/wh/ns/t/data/a.parquet","method":"PUT","headers":{"x-amz-content-sha256":["UNSIGNED-PAYLOAD"]}}`)
	f.Add(`{"uri":"http://h/wh?list-type=2&prefix=ns/t/","method":"get"}`)
	f.Add(`{"uri":"http://h/wh/ns/t2/x","method":"DELETE"}`)
	f.Add(`{"uri":"/relative","method":"PUT"}`)
	f.Add(`{"uri":"http://h/wh/ns/t/x","method":"PATCH"}`)
	f.Fuzz(func(t *testing.T, body string) {
		_, u, method, err := parseSignRequest([]byte(body))
		if err != nil {
			return
		}
		if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			t.Fatalf("accepted uri %v", u)
		}
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete:
		default:
			t.Fatalf("accepted method %q", method)
		}
		if insideLocation(u, method, "wh", "ns/t/") {
			b, key, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
			if b != "wh" || (key != "" && !strings.HasPrefix(key, "ns/t/")) || (key == "" && !strings.HasPrefix(u.Query().Get("prefix"), "ns/t/")) {
				t.Fatalf("%s %v counted inside ns/t/ of wh", method, u)
			}
		}
	})
}
