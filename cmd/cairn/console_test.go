package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/frontends/console"
)

// consoleClient is a browser-like client of the console: a cookie jar,
// and the CSRF header on the calls that want it.
type consoleClient struct {
	t    *testing.T
	srv  *httptest.Server
	http *http.Client
}

func startConsole(t *testing.T) *consoleClient {
	t.Helper()
	srv := startServer(t)
	h, err := withConsole(srv.Config.Handler, "us-east-1", false, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &consoleClient{t: t, srv: srv, http: &http.Client{Jar: jar}}
}

// capi is the console API URL the UI sends for target (s3, iceberg or
// admin), rest (the escaped path after it) and query, as api.js apiURL
// builds it: rest in the cairn-path parameter.
func capi(target, rest, query string) string {
	u := "/console/api/" + target + "?" + console.PathParam + "=" + url.QueryEscape(rest)
	if query != "" {
		u += "&" + query
	}
	return u
}

// do sends a request (with the CSRF header when csrf is set) and returns
// the status and body.
func (c *consoleClient) do(method, path, body string, csrf bool, hdr ...string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.srv.URL+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if csrf {
		req.Header.Set(console.CSRFHeader, "1")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if strings.Contains(string(b), "rootsecret") {
		c.t.Fatalf("%s %s: the answer holds the secret: %s", method, path, b)
	}
	return resp.StatusCode, string(b)
}

func TestConsoleSession(t *testing.T) {
	c := startConsole(t)
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   string
		csrf   bool
		hdr    []string
		want   int
		substr string
	}{
		{"page", "GET", "/console/", "", false, nil, 200, "<title>Cairn console</title>"},
		{"module", "GET", "/console/js/app.js", "", false, nil, 200, "route"},
		{"api before sign-in", "GET", "/console/api/s3/", "", false, nil, 401, "not signed in"},
		{"sign-in without the CSRF header", "POST", "/console/api/session", `{"access_key":"rootkey","secret_key":"rootsecret"}`, false, nil, 403, console.CSRFHeader},
		{"sign-in from another origin", "POST", "/console/api/session", `{"access_key":"rootkey","secret_key":"rootsecret"}`, true, []string{"Origin", "http://evil.example"}, 403, "origin"},
		{"wrong secret", "POST", "/console/api/session", `{"access_key":"rootkey","secret_key":"nope"}`, true, nil, 401, "sign-in refused"},
		{"unknown key", "POST", "/console/api/session", `{"access_key":"who","secret_key":"nope"}`, true, nil, 401, "sign-in refused"},
		{"not JSON", "POST", "/console/api/session", `access_key=rootkey`, true, nil, 400, "not JSON"},
		{"sign-in", "POST", "/console/api/session", `{"access_key":"rootkey","secret_key":"rootsecret"}`, true, nil, 200, `"root":true`},
		{"session", "GET", "/console/api/session", "", false, nil, 200, `"access_key":"rootkey"`},
		{"create bucket without the CSRF header", "PUT", capi("s3", "/photos", ""), "", false, nil, 403, console.CSRFHeader},
		{"create bucket", "PUT", capi("s3", "/photos", ""), "", true, nil, 200, ""},
		{"put an object with an awkward key", "PUT", capi("s3", "/photos/a%20b/%C3%BC+c%2Fd.txt", ""), "hello console", true, []string{"Content-Type", "text/plain"}, 200, ""},
		{"get it back", "GET", capi("s3", "/photos/a%20b/%C3%BC+c%2Fd.txt", ""), "", false, nil, 200, "hello console"},
		{"list by prefix", "GET", capi("s3", "/photos", "list-type=2&prefix=a%20b/&delimiter=/"), "", false, nil, 200, "<Prefix>a b/ü+c/</Prefix>"},
		{"list under it", "GET", capi("s3", "/photos", "list-type=2&prefix=a%20b/%C3%BC%2Bc/"), "", false, nil, 200, "<Key>a b/ü+c/d.txt</Key>"},
		// Dot segments of a key are the key's: x/../victim is not victim.
		{"put victim", "PUT", capi("s3", "/photos/victim", ""), "the victim", true, nil, 200, ""},
		{"put x/../victim", "PUT", capi("s3", "/photos/x/../victim", ""), "the dot key", true, nil, 200, ""},
		{"delete x/../victim", "DELETE", capi("s3", "/photos/x/../victim", ""), "", true, nil, 204, ""},
		{"victim is still there", "GET", capi("s3", "/photos/victim", ""), "", false, nil, 200, "the victim"},
		{"x/../victim is gone", "GET", capi("s3", "/photos/x/../victim", ""), "", false, nil, 404, "NoSuchKey"},
		{"a key in the URL path is refused", "DELETE", "/console/api/s3/photos/victim", "", true, nil, 400, console.PathParam},
		{"a key in the path and the parameter is refused", "GET", "/console/api/s3/photos?" + console.PathParam + "=%2Fphotos%2Fvictim", "", false, nil, 400, console.PathParam},
		{"a sandboxed document's call is refused", "PUT", capi("admin", "/users/evil", ""), `{"secret_key":"evilsecret1"}`, true, []string{"Origin", "null", "Sec-Fetch-Site", "cross-site"}, 403, "Sec-Fetch-Site"},
		{"Origin null is refused", "PUT", capi("admin", "/users/evil", ""), `{"secret_key":"evilsecret1"}`, true, []string{"Origin", "null"}, 403, "origin"},
		{"S3 errors pass through", "GET", capi("s3", "/photos/missing", ""), "", false, nil, 404, "<Code>NoSuchKey</Code>"},
		{"create a table bucket", "PUT", capi("admin", "/table-buckets/lake-one", ""), "", true, nil, 200, `"name":"lake-one"`},
		{"create a namespace (hashed JSON body)", "POST", capi("iceberg", "/v1/lake-one/namespaces", ""), `{"namespace":["ns"],"properties":{}}`, true, []string{"Content-Type", "application/json"}, 200, `"namespace":["ns"]`},
		{"list namespaces", "GET", capi("iceberg", "/v1/lake-one/namespaces", ""), "", false, nil, 200, `[["ns"]]`},
		{"users", "GET", capi("admin", "/users", ""), "", false, nil, 200, `"users"`},
		{"unknown API", "GET", "/console/api/nope", "", false, nil, 404, "no console API"},
		{"sign out", "DELETE", "/console/api/session", "", true, nil, 204, ""},
		{"api after sign-out", "GET", "/console/api/s3/", "", false, nil, 401, "not signed in"},
	} {
		status, body := c.do(tc.method, tc.path, tc.body, tc.csrf, tc.hdr...)
		if status != tc.want || !strings.Contains(body, tc.substr) {
			t.Errorf("%s: %s %s = %d %q, want %d containing %q", tc.name, tc.method, tc.path, status, body, tc.want, tc.substr)
		}
		if tc.name == "users" && strings.Contains(body, `"evil"`) {
			t.Errorf("the refused calls created user evil: %s", body)
		}
	}
}

// TestConsoleSignedConsoleBucket: a signed S3 request to a bucket named
// "console" reaches S3, not the console.
func TestConsoleSignedConsoleBucket(t *testing.T) {
	c := startConsole(t)
	req, err := http.NewRequest(http.MethodPut, c.srv.URL+"/console", nil)
	if err != nil {
		t.Fatal(err)
	}
	sdkSign(t, req, nil, "s3", "rootsecret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("signed CreateBucket console: %d %s", resp.StatusCode, b)
	}
	status, body := c.do("GET", "/console/", "", false)
	if status != http.StatusOK || !strings.Contains(body, "Cairn console") {
		t.Fatalf("GET /console/ after creating bucket console: %d %q", status, body)
	}
}

// TestConsoleUserPolicy: the console acts as the signed-in user, so a
// readonly user reads but cannot write, and is not root.
func TestConsoleUserPolicy(t *testing.T) {
	root := startConsole(t)
	for _, step := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/console/api/session", `{"access_key":"rootkey","secret_key":"rootsecret"}`, 200},
		{"PUT", capi("s3", "/shared", ""), "", 200},
		{"PUT", capi("s3", "/shared/hello.txt", ""), "hi", 200},
		{"PUT", capi("admin", "/users/reader", ""), `{"secret_key":"readersecret","policy":"readonly"}`, 200},
	} {
		if status, body := root.do(step.method, step.path, step.body, true); status != step.want {
			t.Fatalf("root %s %s: %d %s", step.method, step.path, status, body)
		}
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	reader := &consoleClient{t: t, srv: root.srv, http: &http.Client{Jar: jar}}
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
		substr                   string
	}{
		{"sign-in", "POST", "/console/api/session", `{"access_key":"reader","secret_key":"readersecret"}`, 200, `"root":false`},
		// ListBuckets lists the buckets one owns, as on S3; the UI opens
		// others by name.
		{"list buckets", "GET", "/console/api/s3/", "", 200, "<Owner><ID>reader</ID>"},
		{"list a bucket", "GET", capi("s3", "/shared", "list-type=2"), "", 200, "<Key>hello.txt</Key>"},
		{"read", "GET", capi("s3", "/shared/hello.txt", ""), "", 200, "hi"},
		{"write refused", "PUT", capi("s3", "/shared/new.txt", ""), "no", 403, "<Code>AccessDenied</Code>"},
		{"delete refused", "DELETE", capi("s3", "/shared/hello.txt", ""), "", 403, "<Code>AccessDenied</Code>"},
		{"users refused", "GET", capi("admin", "/users", ""), "", 403, "AccessDenied"},
		{"table buckets refused", "GET", capi("admin", "/table-buckets", ""), "", 403, "root user only"},
	} {
		status, body := reader.do(tc.method, tc.path, tc.body, true)
		if status != tc.want || !strings.Contains(body, tc.substr) {
			t.Errorf("reader %s: %s %s = %d %q, want %d containing %q", tc.name, tc.method, tc.path, status, body, tc.want, tc.substr)
		}
	}
}
