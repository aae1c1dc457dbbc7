package iceberg

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

type testEnv struct {
	t   *testing.T
	s   *Server
	cat *fakeCatalog
	now time.Time
	reg *prometheus.Registry
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	e := &testEnv{t: t, cat: newFakeCatalog("wh"), now: time.Unix(1_800_000_000, 0)}
	e.reg = prometheus.NewRegistry()
	m, err := NewMetrics(e.reg)
	if err != nil {
		t.Fatal(err)
	}
	e.s, err = New(Options{
		Catalog: e.cat, Authenticator: fakeAuth{}, Authorizer: fakeAuth{},
		IdempotencyLifetime: "PT30M", TokenTTL: time.Hour, Now: func() time.Time { return e.now },
		Logger: zerolog.Nop(), Metrics: m,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// do sends a request as user (a fakeAuth key; "" sends no credentials).
func (e *testEnv) do(user, method, target, body string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://cairn.test"+target, r)
	if user != "" {
		req.Header.Set("Authorization", "Test "+user)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, req)
	return w
}

// must sends a request as writer and fails unless it answers want.
func (e *testEnv) must(want int, method, target, body string) *httptest.ResponseRecorder {
	e.t.Helper()
	w := e.do("writer", method, target, body)
	if w.Code != want {
		e.t.Fatalf("%s %s: %d %s, want %d", method, target, w.Code, w.Body, want)
	}
	return w
}

// seed creates namespaces a, a.b and "TEST NS" with table a.t1 and view a.v1.
func (e *testEnv) seed() {
	e.t.Helper()
	e.must(200, "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["a"],"properties":{"owner":"me"}}`)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["a","b"]}`)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["TEST NS"]}`)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces/a/tables", `{"name":"t1","schema":{"type":"struct","fields":[]}}`)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces/a/views", `{"name":"v1"}`)
}

func errorOf(t *testing.T, w *httptest.ResponseRecorder) errorModel {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body %q: %v", w.Body, err)
	}
	return e.Error
}

func TestStatusesAndErrors(t *testing.T) {
	e := newEnv(t)
	e.seed()
	for _, tc := range []struct {
		user, method, target, body string
		status                     int
		typ                        string // error type; "" for success
	}{
		// config
		{"reader", "GET", "/iceberg/v1/config?warehouse=wh", "", 200, ""},
		{"reader", "GET", "/_iceberg/v1/config?warehouse=arn:aws:s3tables:us-east-1:000000000000:bucket/wh", "", 200, ""},
		{"reader", "GET", "/iceberg/v1/config?warehouse=nope", "", 404, "NoSuchWarehouseException"},
		{"reader", "GET", "/iceberg/v1/config", "", 400, "BadRequestException"},
		// unknown prefix, route and method
		{"reader", "GET", "/iceberg/v1/nope/namespaces", "", 404, "NoSuchWarehouseException"},
		{"reader", "GET", "/iceberg/v1/wh/nothing", "", 404, "NotFoundException"},
		{"reader", "PUT", "/iceberg/v1/wh/namespaces", "", 405, "MethodNotAllowedException"},
		// namespaces
		{"reader", "GET", "/iceberg/v1/wh/namespaces", "", 200, ""},
		{"reader", "GET", "/iceberg/v1/wh/namespaces?parent=a", "", 200, ""},
		{"reader", "GET", "/iceberg/v1/wh/namespaces?parent=zz", "", 404, "NoSuchNamespaceException"},
		{"reader", "GET", "/iceberg/v1/wh/namespaces?pageSize=0", "", 400, "BadRequestException"},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a", "", 200, ""},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a%1Fb", "", 200, ""},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/TEST%20NS", "", 200, ""},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/zz", "", 404, "NoSuchNamespaceException"},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a%1F", "", 400, "BadRequestException"},
		{"reader", "HEAD", "/iceberg/v1/wh/namespaces/a", "", 204, ""},
		{"reader", "HEAD", "/iceberg/v1/wh/namespaces/zz", "", 404, ""},
		{"writer", "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["a"]}`, 409, "AlreadyExistsException"},
		{"writer", "POST", "/iceberg/v1/wh/namespaces", `{"namespace":[]}`, 400, "BadRequestException"},
		{"writer", "POST", "/iceberg/v1/wh/namespaces", `{"namespace":`, 400, "BadRequestException"},
		{"writer", "POST", "/iceberg/v1/wh/namespaces", `{"namespace":"a"}`, 400, "BadRequestException"},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/properties", `{"removals":["x"],"updates":{"x":"1"}}`, 422, "UnprocessableEntityException"},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/properties", `{"removals":["gone"],"updates":{"k":"v"}}`, 200, ""},
		{"writer", "DELETE", "/iceberg/v1/wh/namespaces/a", "", 409, "NamespaceNotEmptyException"},
		{"writer", "DELETE", "/iceberg/v1/wh/namespaces/zz", "", 404, "NoSuchNamespaceException"},
		// tables
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a/tables", "", 200, ""},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/zz/tables", "", 404, "NoSuchNamespaceException"},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a/tables/t1", "", 200, ""},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a/tables/t1?snapshots=refs", "", 200, ""},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a/tables/t1?snapshots=some", "", 400, "BadRequestException"},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a/tables/nope", "", 404, "NoSuchTableException"},
		{"reader", "HEAD", "/iceberg/v1/wh/namespaces/a/tables/t1", "", 204, ""},
		{"reader", "HEAD", "/iceberg/v1/wh/namespaces/a/tables/nope", "", 404, ""},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/tables", `{"name":"t1"}`, 409, "AlreadyExistsException"},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/tables", `{"name":`, 400, "BadRequestException"},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/tables/t1", `{"requirements":[],"updates":[]}`, 200, ""},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/tables/t1", `{"requirements":[{"type":"assert-fail"}],"updates":[]}`, 409, "CommitFailedException"},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/tables/t1", `not json`, 400, "BadRequestException"},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/tables/t1/metrics", `{"report-type":"scan-report"}`, 204, ""},
		{"reader", "POST", "/iceberg/v1/wh/namespaces/a/tables/t1/metrics", `{"report-type":"scan-report"}`, 204, ""},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/register", `{"name":"r1","metadata-location":"s3://wh/x/metadata/1.metadata.json"}`, 200, ""},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/register", `{"name":"r2"}`, 400, "BadRequestException"},
		{"writer", "POST", "/iceberg/v1/wh/tables/rename", `{"source":{"namespace":["a"],"name":"r1"},"destination":{"namespace":["a","b"],"name":"r2"}}`, 204, ""},
		{"writer", "POST", "/iceberg/v1/wh/tables/rename", `{"source":{"namespace":["a"],"name":"r1"}}`, 400, "BadRequestException"},
		{"writer", "POST", "/iceberg/v1/wh/tables/rename", `{"source":{"namespace":["a"],"name":"nope"},"destination":{"namespace":["a"],"name":"x"}}`, 404, "NoSuchTableException"},
		{"writer", "POST", "/iceberg/v1/wh/transactions/commit", `{"table-changes":[]}`, 406, "UnsupportedOperationException"},
		{"writer", "DELETE", "/iceberg/v1/wh/namespaces/a%1Fb/tables/r2?purgeRequested=maybe", "", 400, "BadRequestException"},
		{"writer", "DELETE", "/iceberg/v1/wh/namespaces/a%1Fb/tables/r2?purgeRequested=true", "", 403, "ForbiddenException"},
		{"root", "DELETE", "/iceberg/v1/wh/namespaces/a%1Fb/tables/r2?purgeRequested=true", "", 204, ""},
		{"writer", "DELETE", "/iceberg/v1/wh/namespaces/a/tables/nope", "", 404, "NoSuchTableException"},
		// views
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a/views", "", 200, ""},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a/views/v1", "", 200, ""},
		{"reader", "HEAD", "/iceberg/v1/wh/namespaces/a/views/v1", "", 204, ""},
		{"reader", "HEAD", "/iceberg/v1/wh/namespaces/a/views/nope", "", 404, ""},
		{"reader", "GET", "/iceberg/v1/wh/namespaces/a/views/nope", "", 404, "NoSuchViewException"},
		{"writer", "POST", "/iceberg/v1/wh/namespaces/a/views/v1", `{"requirements":[],"updates":[]}`, 200, ""},
		{"writer", "POST", "/iceberg/v1/wh/views/rename", `{"source":{"namespace":["a"],"name":"v1"},"destination":{"namespace":["a"],"name":"v2"}}`, 204, ""},
		{"writer", "DELETE", "/iceberg/v1/wh/namespaces/a/views/v2", "", 204, ""},
		{"writer", "DELETE", "/iceberg/v1/wh/namespaces/a/views/v2", "", 404, "NoSuchViewException"},
		// auth
		{"", "GET", "/iceberg/v1/wh/namespaces", "", 401, "NotAuthorizedException"},
		{"unknown", "GET", "/iceberg/v1/wh/namespaces", "", 401, "NotAuthorizedException"},
		{"nobody", "GET", "/iceberg/v1/wh/namespaces", "", 403, "ForbiddenException"},
		{"reader", "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["r"]}`, 403, "ForbiddenException"},
		{"reader", "DELETE", "/iceberg/v1/wh/namespaces/a/tables/t1", "", 403, "ForbiddenException"},
		// admin
		{"writer", "GET", "/_cairn/admin/v1/table-buckets", "", 403, "ForbiddenException"},
		{"root", "GET", "/_cairn/admin/v1/table-buckets", "", 200, ""},
		{"root", "PUT", "/_cairn/admin/v1/table-buckets/wh2", "", 200, ""},
		{"root", "PUT", "/_cairn/admin/v1/table-buckets/wh2", "", 409, "AlreadyExistsException"},
		{"root", "PUT", "/_cairn/admin/v1/table-buckets/bad_name!", "", 400, "BadRequestException"},
		{"root", "DELETE", "/_cairn/admin/v1/table-buckets/wh2", "", 204, ""},
		{"root", "DELETE", "/_cairn/admin/v1/table-buckets/wh2", "", 404, "NoSuchWarehouseException"},
		{"root", "POST", "/_cairn/admin/v1/table-buckets", "", 405, "MethodNotAllowedException"},
	} {
		name := fmt.Sprintf("%s %s %s", tc.user, tc.method, tc.target)
		w := e.do(tc.user, tc.method, tc.target, tc.body)
		if w.Code != tc.status {
			t.Errorf("%s: status %d (%s), want %d", name, w.Code, w.Body, tc.status)
			continue
		}
		if tc.method == "HEAD" || w.Code == 204 {
			if w.Body.Len() != 0 {
				t.Errorf("%s: body %q on a %d/HEAD answer", name, w.Body, w.Code)
			}
			continue
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", name, ct)
		}
		if tc.typ == "" {
			continue
		}
		em := errorOf(t, w)
		if em.Type != tc.typ || em.Code != tc.status || em.Message == "" {
			t.Errorf("%s: error %+v, want type %s code %d and a message", name, em, tc.typ, tc.status)
		}
		if w.Header().Get("X-Request-Id") == "" {
			t.Errorf("%s: no request id", name)
		}
	}
	if v := counter(t, e.reg, "cairn_iceberg_requests_total", "loadTable", "404"); v != 1 {
		t.Errorf("loadTable 404 counted %v times, want 1", v)
	}
}

// counter reads one sample of a counter vector labelled route, status.
func counter(t *testing.T, reg *prometheus.Registry, name, route, status string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["route"] == route && labels["status"] == status {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestLoadInMissingNamespace: loading a table or view whose namespace does
// not exist answers NoSuchTable/NoSuchView, not NoSuchNamespace. Spark's
// Iceberg catalog loads cairn.db.orders.snapshots as table snapshots in
// namespace db.orders first, and falls back to the metadata table of
// db.orders only on a NoSuchTableException.
func TestLoadInMissingNamespace(t *testing.T) {
	e := newEnv(t)
	e.seed()
	for _, tc := range []struct {
		target, typ string
	}{
		{"/iceberg/v1/wh/namespaces/a%1Ft1/tables/snapshots", "NoSuchTableException"},
		{"/iceberg/v1/wh/namespaces/zz/tables/t1", "NoSuchTableException"},
		{"/iceberg/v1/wh/namespaces/a%1Fv1/views/history", "NoSuchViewException"},
		{"/iceberg/v1/wh/namespaces/zz/views/v1", "NoSuchViewException"},
		// The namespace's own calls still say which namespace is missing.
		{"/iceberg/v1/wh/namespaces/zz", "NoSuchNamespaceException"},
		{"/iceberg/v1/wh/namespaces/zz/tables", "NoSuchNamespaceException"},
	} {
		w := e.do("reader", "GET", tc.target, "")
		if w.Code != 404 {
			t.Errorf("GET %s: status %d (%s), want 404", tc.target, w.Code, w.Body)
			continue
		}
		if em := errorOf(t, w); em.Type != tc.typ || em.Message == "" {
			t.Errorf("GET %s: error %+v, want type %s and a message", tc.target, em, tc.typ)
		}
	}
}
