package sigv2

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// The credentials of the AWS documentation examples.
const (
	testAccessKey = "AKIAIOSFODNN7EXAMPLE"
	testSecretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

func testSecret(ak string) (string, bool) {
	if ak == testAccessKey {
		return testSecretKey, true
	}
	return "", false
}

func newTestVerifier(now time.Time) *Verifier {
	return &Verifier{Secret: testSecret, Now: func() time.Time { return now }}
}

// serverRequest builds r as a server receives it (RequestURI set).
func serverRequest(method, target string, header map[string]string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	return r
}

// asReceived turns a client request into what a server sees.
func asReceived(t *testing.T, c *http.Request) *http.Request {
	t.Helper()
	r := httptest.NewRequest(c.Method, c.URL.String(), nil)
	r.Header = c.Header.Clone()
	r.Host = c.URL.Host
	if c.Host != "" {
		r.Host = c.Host
	}
	return r
}

func wantErr(t *testing.T, got, want error) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Fatalf("unexpected error: %v", got)
	case want != nil && !errors.Is(got, want):
		t.Fatalf("error %v, want %v", got, want)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func decodeStd(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
