package s3

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/internal/httpx"
	"github.com/cairnstore/cairn/objstore"
)

// internalMarkers are texts of the store and the catalog's backing that
// stay in the server log and never reach a client.
var internalMarkers = []string{".cairn.sys", "record not found", "no such key:", "objectbacked:"}

// TestInvalidBucketNameSaysWhichRule creates buckets that break each
// naming rule on a real store and checks that the error XML says which
// rule and lists the rules.
func TestInvalidBucketNameSaysWhichRule(t *testing.T) {
	s, _ := testServer(t)
	for _, tc := range []struct {
		name, rule string
	}{
		{"ab", "3 to 63 characters"},
		{strings.Repeat("a", 64), "3 to 63 characters"},
		{"My_Bucket", "only lowercase letters, digits, dots and hyphens"},
		{"-abc", "begin and end with a letter or digit"},
		{"abc.", "begin and end with a letter or digit"},
		{"a..b", "two adjacent periods"},
		{"192.168.5.4", "IP address"},
		{"xn--abc", "must not start with xn--"},
		{"sthree-abc", "must not start with sthree-"},
		{"abc-s3alias", "must not end with -s3alias"},
		{"abc--ol-s3", "must not end with --ol-s3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("PUT", "http://cairn.test/"+tc.name, nil)
			signAs(t, r, "alice")
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			var e errorResponse
			if err := xml.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != 400 || e.Code != "InvalidBucketName" {
				t.Fatalf("PUT /%s: %d %s", tc.name, w.Code, w.Body)
			}
			for _, want := range []string{tc.rule, "3 to 63 lowercase letters", "-s3alias"} {
				if !strings.Contains(e.Message, want) {
					t.Errorf("message %q does not say %q", e.Message, want)
				}
			}
		})
	}
}

// TestErrorXMLKeepsTheChainInTheLog answers errors whose chains hold the
// store's internals and checks the XML message (the fix, no internal
// marker, the request id for a 500) and the access log line (the whole
// chain under the same request id).
func TestErrorXMLKeepsTheChainInTheLog(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		code      string
		want      []string
		requestID bool
	}{
		{"unknown", fmt.Errorf("objectbacked: read .cairn.sys/x: %w", errors.New("disk on fire")), "InternalError",
			[]string{"internal error", "server log"}, true},
		{"store internal", fmt.Errorf("%w: .cairn.sys/index: no such key: y", objstore.ErrInternal), "InternalError",
			[]string{"internal error", "server log"}, true},
		{"quorum", fmt.Errorf("%w: no such key: .cairn.sys/z: 1 of 3 drives", objstore.ErrQuorumLost), "SlowDown",
			[]string{"retry"}, false},
		{"bucket name", fmt.Errorf("%w: %q: must not start with xn--", objstore.ErrInvalidBucketName, "xn--a"), "InvalidBucketName",
			[]string{"must not start with xn--", "3 to 63"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logBuf bytes.Buffer
			s, _ := testServerWith(t, Options{Logger: zerolog.New(&logBuf)})
			hr := httptest.NewRequest("GET", "http://cairn.test/b/k", nil)
			req := &request{Request: hr, id: s.requestID(), bucket: "b", key: "k", api: "GetObject"}
			w := httptest.NewRecorder()
			rec := httpx.NewRecorder(w)
			s.writeError(rec, req, tc.err)
			s.logRequest(req, rec, time.Now(), tc.err)
			var e errorResponse
			if err := xml.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code != tc.code {
				t.Fatalf("answer %d %s, want %s", w.Code, w.Body, tc.code)
			}
			for _, m := range internalMarkers {
				if strings.Contains(e.Message, m) {
					t.Errorf("message %q holds %q", e.Message, m)
				}
			}
			for _, s := range tc.want {
				if !strings.Contains(e.Message, s) {
					t.Errorf("message %q does not say %q", e.Message, s)
				}
			}
			if got := strings.Contains(e.Message, "request id "+req.id); got != tc.requestID {
				t.Errorf("message %q names request id %s: %v, want %v", e.Message, req.id, got, tc.requestID)
			}
			log := logBuf.String()
			if !strings.Contains(log, `"rid":"`+req.id+`"`) || !strings.Contains(log, tc.err.Error()[:20]) {
				t.Errorf("log line %q lacks the request id %s or the error chain %q", log, req.id, tc.err)
			}
		})
	}
}
