package iceberg

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

func TestConfig(t *testing.T) {
	e := newEnv(t)
	w := e.must(200, "GET", "/iceberg/v1/config?warehouse=wh", "")
	var c catalogConfig
	if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	if c.Overrides["prefix"] != "wh" || c.Defaults["s3.endpoint"] == "" || c.IdempotencyLifetime != "PT30M" {
		t.Fatalf("config %+v", c)
	}
	for _, want := range []string{
		"GET /v1/{prefix}/namespaces", "HEAD /v1/{prefix}/namespaces/{namespace}",
		"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}", "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
		"POST /v1/{prefix}/tables/rename", "POST /v1/{prefix}/transactions/commit",
		"POST /v1/{prefix}/namespaces/{namespace}/register", "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
		"GET /v1/{prefix}/namespaces/{namespace}/views/{view}", "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
		"POST /v1/{prefix}/views/rename", "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
	} {
		if !slices.Contains(c.Endpoints, want) {
			t.Errorf("endpoints lack %q", want)
		}
	}
	// Every advertised endpoint is routed (a request on it is not a 404/405 of the router).
	for _, ep := range c.Endpoints {
		method, path, _ := strings.Cut(ep, " ")
		r := strings.NewReplacer("{prefix}", "wh", "{namespace}", "a", "{table}", "t", "{view}", "v").Replace(path)
		req := &request{Request: mustReq(method, "/iceberg"+r)}
		if err := e.s.resolve(req); err != nil || req.route.method+" "+req.route.path != ep {
			t.Errorf("%s: not routed: %v", ep, err)
		}
	}
}

func TestPaging(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		e.must(200, "POST", "/iceberg/v1/wh/namespaces", fmt.Sprintf(`{"namespace":["n%d"]}`, i))
	}
	for i := range 3 {
		e.must(200, "POST", "/iceberg/v1/wh/namespaces/n0/tables", fmt.Sprintf(`{"name":"t%d"}`, i))
	}
	// No pageToken: everything in one answer, no next-page-token.
	var all listNamespacesResponse
	_ = json.Unmarshal(e.must(200, "GET", "/iceberg/v1/wh/namespaces", "").Body.Bytes(), &all)
	if len(all.Namespaces) != 5 || all.NextPageToken != "" {
		t.Fatalf("unpaged: %+v", all)
	}
	// Pages of two, following next-page-token.
	var got []string
	token, pages := "", 0
	for {
		w := e.must(200, "GET", "/iceberg/v1/wh/namespaces?pageSize=2&pageToken="+url.QueryEscape(token), "")
		var p listNamespacesResponse
		_ = json.Unmarshal(w.Body.Bytes(), &p)
		if strings.Contains(w.Body.String(), "next-page-token") != (p.NextPageToken != "") {
			t.Fatalf("next-page-token present but empty: %s", w.Body)
		}
		for _, ns := range p.Namespaces {
			got = append(got, ns[0])
		}
		pages++
		if token = p.NextPageToken; token == "" {
			break
		}
	}
	if pages != 3 || strings.Join(got, ",") != "n0,n1,n2,n3,n4" {
		t.Fatalf("paged %d pages: %v", pages, got)
	}
	var tp listIdentifiersResponse
	_ = json.Unmarshal(e.must(200, "GET", "/iceberg/v1/wh/namespaces/n0/tables?pageToken=&pageSize=2", "").Body.Bytes(), &tp)
	if len(tp.Identifiers) != 2 || tp.NextPageToken == "" || tp.Identifiers[0].Namespace[0] != "n0" {
		t.Fatalf("tables page: %+v", tp)
	}
	for _, bad := range []string{"pageSize=-1", "pageSize=x", "pageSize=0"} {
		if w := e.do("reader", "GET", "/iceberg/v1/wh/namespaces/n0/tables?"+bad, ""); w.Code != 400 {
			t.Errorf("%s: %d", bad, w.Code)
		}
	}
	// An empty list is [] not null.
	w := e.must(200, "GET", "/iceberg/v1/wh/namespaces/n1/tables", "")
	if !strings.Contains(w.Body.String(), `"identifiers":[]`) {
		t.Errorf("empty list: %s", w.Body)
	}
}

func TestNamespaceSeparator(t *testing.T) {
	e := newEnv(t)
	e.s.opt.NamespaceSeparator = "."
	e.must(200, "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["a"]}`)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["a","b"]}`)
	for _, target := range []string{
		"/iceberg/v1/wh/namespaces/a%1Fb", "/iceberg/v1/wh/namespaces/a.b", "/_iceberg/v1/wh/namespaces/a%1fb",
	} {
		w := e.must(200, "GET", target, "")
		var ns namespaceResponse
		_ = json.Unmarshal(w.Body.Bytes(), &ns)
		if strings.Join(ns.Namespace, "/") != "a/b" {
			t.Errorf("%s: namespace %v", target, ns.Namespace)
		}
	}
	var l listNamespacesResponse
	_ = json.Unmarshal(e.must(200, "GET", "/iceberg/v1/wh/namespaces?parent=a", "").Body.Bytes(), &l)
	if len(l.Namespaces) != 1 || strings.Join(l.Namespaces[0], "/") != "a/b" {
		t.Errorf("children of a: %v", l.Namespaces)
	}
	c := e.must(200, "GET", "/iceberg/v1/config?warehouse=wh", "")
	if !strings.Contains(c.Body.String(), `"namespace-separator":"."`) {
		t.Errorf("separator not advertised: %s", c.Body)
	}
}

func TestDecodeNamespace(t *testing.T) {
	for _, tc := range []struct {
		in, sep string
		want    []string
		ok      bool
	}{
		{"a", UnitSeparator, []string{"a"}, true},
		{"a\x1fb\x1fc", UnitSeparator, []string{"a", "b", "c"}, true},
		{"a.b", UnitSeparator, []string{"a.b"}, true},
		{"a.b\x1fc", ".", []string{"a", "b", "c"}, true},
		{"TEST NS", UnitSeparator, []string{"TEST NS"}, true},
		{"a/b", UnitSeparator, []string{"a/b"}, true},
		{"", UnitSeparator, nil, false},
		{"a\x1f", UnitSeparator, nil, false},
		{"\x1fa", UnitSeparator, nil, false},
		{"a\x00b", UnitSeparator, nil, false},
		{"\xff", UnitSeparator, nil, false},
	} {
		got, err := decodeNamespace(tc.in, tc.sep)
		if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("decodeNamespace(%q, %q) = %q, %v", tc.in, tc.sep, got, err)
		}
		if err != nil && !errors.Is(err, errBadPath) {
			t.Errorf("%q: error %v does not wrap errBadPath", tc.in, err)
		}
	}
	// %2F inside a table name stays in the name.
	e := newEnv(t)
	req := &request{Request: mustReq("GET", "/iceberg/v1/wh/namespaces/a%2Fb/tables/t%2F1")}
	if err := e.s.resolve(req); err != nil || req.param("namespace") != "a/b" || req.param("table") != "t/1" {
		t.Fatalf("escaped slash: %v %q %q", err, req.param("namespace"), req.param("table"))
	}
}

func TestIdempotency(t *testing.T) {
	e := newEnv(t)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["a"]}`)
	create := `{"name":"t"}`
	key := "0190a8b2-7c4e-7d2a-9a1b-123456789abc"
	first := e.do("writer", "POST", "/iceberg/v1/wh/namespaces/a/tables", create, "Idempotency-Key", key)
	second := e.do("writer", "POST", "/iceberg/v1/wh/namespaces/a/tables", create, "Idempotency-Key", key)
	if first.Code != 200 || second.Code != 200 || first.Body.String() != second.Body.String() {
		t.Fatalf("replay: %d %s / %d %s", first.Code, first.Body, second.Code, second.Body)
	}
	if second.Header().Get("Idempotent-Replayed") != "true" || e.cat.calls["CreateTable"] != 1 {
		t.Fatalf("second create ran again (%d calls)", e.cat.calls["CreateTable"])
	}
	// Without the key the same body conflicts.
	if w := e.do("writer", "POST", "/iceberg/v1/wh/namespaces/a/tables", create); w.Code != 409 {
		t.Fatalf("without key: %d", w.Code)
	}
	// A deterministic 4xx is stored and replayed too.
	k2 := "0190a8b2-7c4e-7d2a-9a1b-000000000002"
	for range 2 {
		if w := e.do("writer", "DELETE", "/iceberg/v1/wh/namespaces/a/tables/nope", "", "Idempotency-Key", k2); w.Code != 404 || errorOf(t, w).Type != "NoSuchTableException" {
			t.Fatalf("404 replay: %d %s", w.Code, w.Body)
		}
	}
	if e.cat.calls["DropTable"] != 1 {
		t.Fatalf("DropTable ran %d times", e.cat.calls["DropTable"])
	}
	// A 5xx is never stored: the retry runs again.
	k3 := "0190a8b2-7c4e-7d2a-9a1b-000000000003"
	w := e.doFailing(fmt.Errorf("%w: store hiccup", catalog.ErrCommitStateUnknown), "POST", "/iceberg/v1/wh/namespaces/a/tables/t", `{"requirements":[],"updates":[]}`, "Idempotency-Key", k3)
	if w.Code != 500 || errorOf(t, w).Type != "CommitStateUnknownException" {
		t.Fatalf("unknown state: %d %s", w.Code, w.Body)
	}
	if w := e.do("writer", "POST", "/iceberg/v1/wh/namespaces/a/tables/t", `{"requirements":[],"updates":[]}`, "Idempotency-Key", k3); w.Code != 200 {
		t.Fatalf("retry after 5xx: %d %s", w.Code, w.Body)
	}
	// Keys are per warehouse, and a bad key is a 400.
	if w := e.do("writer", "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["b"]}`, "Idempotency-Key", "has space"); w.Code != 400 {
		t.Fatalf("bad key: %d", w.Code)
	}
}

// doFailing sends a writer request during which CommitTable fails with err.
func (e *testEnv) doFailing(err error, method, target, body string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	e.s.opt.Catalog = failCommit{Catalog: e.cat, err: err}
	defer func() { e.s.opt.Catalog = e.cat }()
	return e.do("writer", method, target, body, hdr...)
}

func TestOAuth(t *testing.T) {
	e := newEnv(t)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["a"]}`)
	token := func(form string, hdr ...string) (int, tokenResponse, oauthError) {
		w := e.do("", "POST", "/iceberg/v1/oauth/tokens", form, append([]string{"Content-Type", "application/x-www-form-urlencoded"}, hdr...)...)
		var tr tokenResponse
		var oe oauthError
		_ = json.Unmarshal(w.Body.Bytes(), &tr)
		_ = json.Unmarshal(w.Body.Bytes(), &oe)
		return w.Code, tr, oe
	}
	code, tr, _ := token("grant_type=client_credentials&client_id=writer1&client_secret=secret-writer1&scope=catalog")
	if code != 200 || tr.AccessToken == "" || tr.TokenType != "bearer" || tr.ExpiresIn != 3600 || tr.Scope != "catalog" {
		t.Fatalf("token: %d %+v", code, tr)
	}
	bearer := func(tok string) int {
		return e.do("", "GET", "/iceberg/v1/wh/namespaces/a", "", "Authorization", "Bearer "+tok).Code
	}
	if c := bearer(tr.AccessToken); c != 200 {
		t.Fatalf("bearer: %d", c)
	}
	// The alias accepts it too, and the bearer is subject to policy.
	if w := e.do("", "POST", "/_iceberg/v1/wh/namespaces", `{"namespace":["z"]}`, "Authorization", "Bearer "+tr.AccessToken); w.Code != 200 {
		t.Fatalf("bearer write: %d %s", w.Code, w.Body)
	}
	// Basic auth client credentials.
	basic := base64.StdEncoding.EncodeToString([]byte("reader1:secret-reader1"))
	code, rt, _ := token("grant_type=client_credentials", "Authorization", "Basic "+basic)
	if code != 200 {
		t.Fatalf("basic: %d", code)
	}
	if w := e.do("", "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["y"]}`, "Authorization", "Bearer "+rt.AccessToken); w.Code != 403 {
		t.Fatalf("reader bearer write: %d", w.Code)
	}
	// Bad secret, bad grant, missing credentials.
	for _, tc := range []struct {
		form   string
		status int
		code   string
	}{
		{"grant_type=client_credentials&client_id=writer1&client_secret=wrong", 401, "invalid_client"},
		{"grant_type=client_credentials", 401, "invalid_client"},
		{"grant_type=password&client_id=writer1&client_secret=secret-writer1", 400, "unsupported_grant_type"},
		{"grant_type=%zz", 400, "invalid_request"},
	} {
		if code, _, oe := token(tc.form); code != tc.status || oe.Error != tc.code {
			t.Errorf("%s: %d %+v", tc.form, code, oe)
		}
	}
	// Tampered and expired tokens: 401 NotAuthorizedException.
	for _, bad := range []string{tr.AccessToken + "x", "x" + tr.AccessToken, "garbage", ""} {
		if c := bearer(bad); c != 401 {
			t.Errorf("token %q: %d", bad, c)
		}
	}
	e.now = e.now.Add(time.Hour)
	w := e.do("", "GET", "/iceberg/v1/wh/namespaces/a", "", "Authorization", "Bearer "+tr.AccessToken)
	if w.Code != 401 || errorOf(t, w).Type != "NotAuthorizedException" || !strings.Contains(errorOf(t, w).Message, "expired") {
		t.Fatalf("expired: %d %s", w.Code, w.Body)
	}
	// A token from another server (another key) is refused.
	other := newEnv(t)
	tok, _, _ := other.s.tokens.issue(context.Background(), Principal{AccessKey: "writer1"})
	if c := bearer(tok); c != 401 {
		t.Errorf("foreign token: %d", c)
	}
}

func TestErrorTableCoversCatalogSentinels(t *testing.T) {
	names := sentinelNames(t, "../../catalog")
	if len(names) == 0 {
		t.Fatal("no sentinels found in catalog")
	}
	known := map[string]error{
		"ErrNoSuchWarehouse": catalog.ErrNoSuchWarehouse, "ErrNoSuchNamespace": catalog.ErrNoSuchNamespace,
		"ErrNoSuchTable": catalog.ErrNoSuchTable, "ErrNoSuchView": catalog.ErrNoSuchView,
		"ErrAlreadyExists": catalog.ErrAlreadyExists, "ErrNamespaceNotEmpty": catalog.ErrNamespaceNotEmpty,
		"ErrCommitFailed": catalog.ErrCommitFailed, "ErrCommitStateUnknown": catalog.ErrCommitStateUnknown,
		"ErrBadRequest": catalog.ErrBadRequest, "ErrUnprocessable": catalog.ErrUnprocessable,
		"ErrUnsupported": catalog.ErrUnsupported, "ErrFenced": catalog.ErrFenced, "ErrMigrationConflict": catalog.ErrMigrationConflict, "ErrQuarantined": catalog.ErrQuarantined, "ErrUnavailable": catalog.ErrUnavailable,
		"ErrNoSuchPolicy": catalog.ErrNoSuchPolicy, "ErrNotFound": catalog.ErrNotFound, "ErrConflict": catalog.ErrConflict,
	}
	for _, name := range names {
		err, ok := known[name]
		if !ok {
			t.Errorf("catalog.%s is new: list it in this test and map it in errors.go", name)
			continue
		}
		api := toAPIError(fmt.Errorf("wrapped: %w", err), "RID1")
		if api.Status == 500 && name != "ErrCommitStateUnknown" || api.Type == "InternalServerError" {
			t.Errorf("catalog.%s maps to the internal error fallback", name)
		}
	}
	if api := toAPIError(fmt.Errorf("%w: %w", catalog.ErrCommitStateUnknown, catalog.ErrCommitFailed), "RID1"); api.Status != 500 {
		t.Errorf("state unknown wrapping commit failed answers %d: it must never be a 409", api.Status)
	}
	if api := toAPIError(errors.New("boom"), "RID1"); api.Status != 500 || strings.Contains(api.Message, "boom") || !strings.Contains(api.Message, "request id RID1") {
		t.Errorf("unknown error: %+v", api)
	}
	if api := toAPIError(fmt.Errorf("%w: warehouse w is fenced by migration m-1", catalog.ErrFenced), "RID1"); api.Status != 409 || !strings.Contains(api.Message, "m-1") {
		t.Errorf("fenced answers %d %q: want 409 naming the migration", api.Status, api.Message)
	}
}

func FuzzPath(f *testing.F) {
	for _, s := range []string{"/iceberg/v1/wh/namespaces/a%1Fb/tables/t", "/_iceberg/v1/wh/namespaces/%zz", "/iceberg/v1/config",
		"/iceberg/v1/wh/namespaces/a%2F%1F%1F/views/v", "/iceberg/v1//namespaces", "/_cairn/admin/v1/table-buckets/x"} {
		f.Add(s, ".")
	}
	s, err := New(Options{Catalog: newFakeCatalog("wh")})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path, sep string) {
		u, err := url.Parse("http://cairn.test" + path)
		if err != nil || !strings.HasPrefix(u.EscapedPath(), "/") {
			return
		}
		req := &request{Request: mustReq("GET", "/")}
		req.URL = u
		if err := s.resolve(req); err != nil {
			return
		}
		ns := req.param("namespace")
		if ns == "" {
			return
		}
		levels, err := decodeNamespace(ns, sep)
		if err != nil {
			return
		}
		for _, l := range levels {
			if l == "" || strings.Contains(l, UnitSeparator) || (sep != "" && strings.Contains(l, sep)) {
				t.Fatalf("level %q of %q (sep %q)", l, ns, sep)
			}
		}
		if sep == UnitSeparator || sep == "" {
			if encodeNamespace(levels) != ns {
				t.Fatalf("round trip %q -> %q", ns, encodeNamespace(levels))
			}
		}
	})
}

// failCommit is a Catalog whose CommitTable fails with err.
type failCommit struct {
	Catalog
	err error
}

func (f failCommit) CommitTable(ctx context.Context, wh string, id catalog.Ident, body []byte) (catalog.TableResult, error) {
	return catalog.TableResult{}, f.err
}

func mustReq(method, target string) *http.Request {
	return httptest.NewRequest(method, "http://cairn.test"+target, nil)
}

// sentinelNames parses a package directory for `ErrX = errors.New(...)`.
func sentinelNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i < len(vs.Values) && name.IsExported() && strings.HasPrefix(name.Name, "Err") {
					if call, ok := vs.Values[i].(*ast.CallExpr); ok {
						if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" {
							names = append(names, name.Name)
						}
					}
				}
			}
			return true
		})
	}
	return names
}
