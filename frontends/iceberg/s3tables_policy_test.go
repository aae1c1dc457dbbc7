package iceberg

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// seedS3Tables makes namespace sales and table sales.orders (table-uuid
// ...0001) in table bucket wh of the fake.
func seedS3Tables(t *testing.T, e *s3tEnv) {
	t.Helper()
	for _, r := range []struct{ method, target, body string }{
		{"PUT", "/namespaces/" + arnOf("wh"), `{"namespace":["sales"]}`},
		{"PUT", "/tables/" + arnOf("wh") + "/sales", `{"name":"orders","format":"ICEBERG"}`},
	} {
		if w := e.call("writer", r.method, r.target, r.body); w.Code != 200 {
			t.Fatalf("%s %s: %d %s", r.method, r.target, w.Code, w.Body)
		}
	}
}

// TestS3TablesPolicyOperations runs the six policy operations in order
// against the fake: each row is a request, the status and exception it
// must answer, and the policy the fake then keeps for its target.
func TestS3TablesPolicyOperations(t *testing.T) {
	e := newS3TEnv(t)
	seedS3Tables(t, e)
	const (
		whARN    = "arn:aws:s3tables:us-east-1:000000000000:bucket/wh"
		tableARN = whARN + "/table/00000000-0000-0000-0000-000000000001"
		doc      = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable","Resource":"*"}]}`
		doc2     = `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3tables:*","Resource":"*"}]}`
	)
	bucket, table := "/buckets/"+arnOf("wh")+"/policy", "/tables/"+arnOf("wh")+"/sales/orders/policy"
	put := func(d string) string { return `{"resourcePolicy":` + strconv.Quote(d) + `}` }
	for _, tc := range []struct {
		name, user, method, target, body string
		status                           int
		typ                              string // the exception; "" for success
		body2                            string // the resourcePolicy answered by a GET
		keptBucket, keptTable            string // the fake's policies afterwards: doc, or "" for none
	}{
		{"get bucket policy: none", "writer", "GET", bucket, "", 404, "NotFoundException", "", "", ""},
		{"put bucket policy reader", "reader", "PUT", bucket, put(doc), 403, "ForbiddenException", "", "", ""},
		{"put bucket policy unknown user", "nobody", "PUT", bucket, put(doc), 403, "ForbiddenException", "", "", ""},
		{"put bucket policy", "writer", "PUT", bucket, put(doc), 200, "", "", doc, ""},
		{"put bucket policy malformed", "writer", "PUT", bucket, put(`{"Statement":`), 400, "BadRequestException", "", doc, ""},
		{"put bucket policy too large", "writer", "PUT", bucket, put(strings.Repeat(" ", catalog.MaxPolicySize) + doc), 400, "BadRequestException", "", doc, ""},
		{"put bucket policy without one", "writer", "PUT", bucket, `{}`, 400, "BadRequestException", "", doc, ""},
		{"put bucket policy bad JSON", "writer", "PUT", bucket, `{"resourcePolicy":`, 400, "BadRequestException", "", doc, ""},
		{"get bucket policy reader", "reader", "GET", bucket, "", 403, "ForbiddenException", "", doc, ""},
		{"get bucket policy", "writer", "GET", bucket, "", 200, "", doc, doc, ""},
		{"replace bucket policy", "writer", "PUT", bucket, put(doc2), 200, "", "", doc2, ""},
		{"get replaced bucket policy", "writer", "GET", bucket, "", 200, "", doc2, doc2, ""},
		{"delete bucket policy reader", "reader", "DELETE", bucket, "", 403, "ForbiddenException", "", doc2, ""},
		{"delete bucket policy", "writer", "DELETE", bucket, "", 204, "", "", "", ""},
		{"delete bucket policy again", "writer", "DELETE", bucket, "", 204, "", "", "", ""},
		{"get deleted bucket policy", "writer", "GET", bucket, "", 404, "NotFoundException", "", "", ""},
		{"missing bucket", "writer", "GET", "/buckets/" + arnOf("nope") + "/policy", "", 404, "NotFoundException", "", "", ""},
		{"bucket policy by a table's ARN", "writer", "GET", "/buckets/" + sdkEscape(tableARN) + "/policy", "", 400, "BadRequestException", "", "", ""},

		{"get table policy: none", "writer", "GET", table, "", 404, "NotFoundException", "", "", ""},
		{"put table policy reader", "reader", "PUT", table, put(doc), 403, "ForbiddenException", "", "", ""},
		{"put table policy", "writer", "PUT", table, put(doc), 200, "", "", "", doc},
		{"put table policy malformed", "writer", "PUT", table, put(`[]`), 400, "BadRequestException", "", "", doc},
		{"get table policy reader", "reader", "GET", table, "", 403, "ForbiddenException", "", "", doc},
		{"get table policy", "writer", "GET", table, "", 200, "", doc, "", doc},
		{"table policy of a missing table", "writer", "GET", "/tables/" + arnOf("wh") + "/sales/nope/policy", "", 404, "NotFoundException", "", "", doc},
		{"put table policy of a missing table", "writer", "PUT", "/tables/" + arnOf("wh") + "/sales/nope/policy", put(doc), 404, "NotFoundException", "", "", doc},
		{"delete table policy reader", "reader", "DELETE", table, "", 403, "ForbiddenException", "", "", doc},
		{"delete table policy", "writer", "DELETE", table, "", 204, "", "", "", ""},
		{"get deleted table policy", "writer", "GET", table, "", 404, "NotFoundException", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e.call(tc.user, tc.method, tc.target, tc.body)
			if w.Code != tc.status {
				t.Fatalf("%s %s: %d %s, want %d", tc.method, tc.target, w.Code, w.Body, tc.status)
			}
			if got := w.Header().Get("X-Amzn-Errortype"); got != tc.typ {
				t.Fatalf("x-amzn-ErrorType %q, want %q (body %s)", got, tc.typ, w.Body)
			}
			if tc.typ != "" && jsonOf(t, w)["message"] == "" {
				t.Error("an error without a message")
			}
			if tc.method == "GET" && tc.status == 200 {
				if got := jsonOf(t, w)["resourcePolicy"]; got != tc.body2 {
					t.Errorf("resourcePolicy %v, want %s", got, tc.body2)
				}
			}
			if tc.method == "PUT" && tc.status == 200 && w.Body.Len() != 0 {
				t.Errorf("a put answers a body: %s", w.Body)
			}
			e.cat.mu.Lock()
			defer e.cat.mu.Unlock()
			orders := catalog.Ident{Namespace: []string{"sales"}, Name: "orders"}
			for _, k := range []struct {
				key, want, arn string
			}{{policyKey("wh", nil), tc.keptBucket, whARN}, {policyKey("wh", &orders), tc.keptTable, tableARN}} {
				p, ok := e.cat.policies[k.key]
				if p.doc != k.want || ok != (k.want != "") {
					t.Errorf("the fake keeps %q for %s, want %q", p.doc, k.key, k.want)
				}
				if ok && p.arn != k.arn {
					t.Errorf("the policy of %s was put with ARN %q, want %q", k.key, p.arn, k.arn)
				}
			}
		})
	}
}

// recordingAuth is a ResourceAuthorizer that records what it is asked
// and answers as fakeAuth, or refuses (deny) or fails (err).
type recordingAuth struct {
	fakeAuth
	mu   sync.Mutex
	got  []AccessRequest
	deny bool
	err  error
}

func (a *recordingAuth) AuthorizeRequest(_ context.Context, r AccessRequest) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, r)
	return !a.deny && a.Authorize(r.Principal, r.Action, r.Warehouse), a.err
}

// take returns what was asked since the last take.
func (a *recordingAuth) take() []AccessRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	got := a.got
	a.got = nil
	return got
}

// TestResourceAuthorizerRequests sends requests of both faces with a
// ResourceAuthorizer and checks what it is asked: the action, the S3
// Tables actions, the warehouse and the table the request names (by
// path, by renameTable's source, by GetTable's ARN).
func TestResourceAuthorizerRequests(t *testing.T) {
	e := newS3TEnv(t)
	ra := &recordingAuth{}
	srv, err := New(Options{Catalog: e.cat, Authenticator: fakeAuth{}, Authorizer: ra})
	if err != nil {
		t.Fatal(err)
	}
	e.s, e.h = srv, srv.S3Tables(S3TablesOptions{})
	seedS3Tables(t, e)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["a"]}`)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces/a/tables", `{"name":"t1","schema":{"type":"struct","fields":[]}}`)
	ra.take()

	orders := &catalog.Ident{Namespace: []string{"sales"}, Name: "orders"}
	t1 := &catalog.Ident{Namespace: []string{"a"}, Name: "t1"}
	tableARN := sdkEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/wh/table/00000000-0000-0000-0000-000000000001")
	type asked struct {
		action  Action
		actions []string
		table   *catalog.Ident
	}
	for _, tc := range []struct {
		name, user, method, target, body string
		s3tables                         bool // the S3 Tables API, else the Iceberg REST face
		status                           int
		want                             []asked
	}{
		{"iceberg list namespaces", "reader", "GET", "/iceberg/v1/wh/namespaces", "", false, 200,
			[]asked{{ActionRead, []string{"s3tables:ListNamespaces"}, nil}}},
		{"iceberg load table", "reader", "GET", "/iceberg/v1/wh/namespaces/a/tables/t1", "", false, 200,
			[]asked{{ActionRead, []string{"s3tables:GetTableMetadataLocation", "s3tables:GetTableData"}, t1}}},
		{"iceberg load table refused", "nobody", "GET", "/iceberg/v1/wh/namespaces/a/tables/t1", "", false, 403,
			[]asked{{ActionRead, []string{"s3tables:GetTableMetadataLocation", "s3tables:GetTableData"}, t1}}},
		{"iceberg commit", "writer", "POST", "/iceberg/v1/wh/namespaces/a/tables/t1", `{"requirements":[],"updates":[]}`, false, 200,
			[]asked{{ActionWrite, []string{"s3tables:UpdateTableMetadataLocation", "s3tables:PutTableData"}, t1}}},
		{"iceberg table maintenance", "reader", "GET", "/iceberg/v1/wh/namespaces/a/tables/t1/maintenance", "", false, 200,
			[]asked{{ActionRead, []string{"s3tables:GetTableMaintenanceConfiguration"}, t1}}},
		{"iceberg rename", "writer", "POST", "/iceberg/v1/wh/tables/rename",
			`{"source":{"namespace":["a"],"name":"t1"},"destination":{"namespace":["a"],"name":"t2"}}`, false, 204,
			[]asked{{ActionWrite, []string{"s3tables:RenameTable"}, t1}}},
		{"iceberg purge", "root", "DELETE", "/iceberg/v1/wh/namespaces/a/tables/t2?purgeRequested=true", "", false, 204,
			[]asked{{ActionWrite, []string{"s3tables:DeleteTable"}, &catalog.Ident{Namespace: []string{"a"}, Name: "t2"}},
				{ActionAdmin, []string{"s3tables:DeleteTable", "s3tables:PutTableData"}, &catalog.Ident{Namespace: []string{"a"}, Name: "t2"}}}},
		{"s3tables list tables", "reader", "GET", "/tables/" + arnOf("wh"), "", true, 200,
			[]asked{{ActionRead, []string{"s3tables:ListTables"}, nil}}},
		{"s3tables get table by name", "reader", "GET", "/get-table?tableBucketARN=" + arnOf("wh") + "&namespace=sales&name=orders", "", true, 200,
			[]asked{{ActionRead, []string{"s3tables:GetTable"}, orders}}},
		{"s3tables get table by ARN", "reader", "GET", "/get-table?tableArn=" + tableARN, "", true, 200,
			[]asked{{ActionRead, []string{"s3tables:GetTable"}, orders}}},
		{"s3tables get missing table by ARN", "reader", "GET", "/get-table?tableArn=" + sdkEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/wh/table/nope"), "", true, 404,
			[]asked{{ActionRead, []string{"s3tables:GetTable"}, nil}}},
		{"s3tables metadata location", "reader", "GET", "/tables/" + arnOf("wh") + "/sales/orders/metadata-location", "", true, 200,
			[]asked{{ActionRead, []string{"s3tables:GetTableMetadataLocation"}, orders}}},
		{"s3tables put table policy", "writer", "PUT", "/tables/" + arnOf("wh") + "/sales/orders/policy",
			`{"resourcePolicy":"{\"Statement\":[]}"}`, true, 200, []asked{{ActionWrite, []string{"s3tables:PutTablePolicy"}, orders}}},
		{"s3tables get bucket policy refused", "reader", "GET", "/buckets/" + arnOf("wh") + "/policy", "", true, 403,
			[]asked{{ActionWrite, []string{"s3tables:GetTableBucketPolicy"}, nil}}},
		{"s3tables create table bucket: root, not asked", "root", "PUT", "/buckets", `{"name":"lake"}`, true, 200, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w interface{ Result() *http.Response }
			if tc.s3tables {
				w = e.call(tc.user, tc.method, tc.target, tc.body)
			} else {
				w = e.do(tc.user, tc.method, tc.target, tc.body)
			}
			if got := w.Result().StatusCode; got != tc.status {
				t.Fatalf("%s %s: %d, want %d", tc.method, tc.target, got, tc.status)
			}
			got := ra.take()
			if len(got) != len(tc.want) {
				t.Fatalf("asked %+v, want %+v", got, tc.want)
			}
			for i, g := range got {
				w := tc.want[i]
				if g.Principal.AccessKey != tc.user || g.Warehouse != "wh" || g.Action != w.action ||
					!reflect.DeepEqual(g.TablesActions, w.actions) || !reflect.DeepEqual(g.Table, w.table) {
					t.Errorf("asked %+v, want %s %v on %v by %s in wh", g, w.action, w.actions, w.table, tc.user)
				}
			}
		})
	}

	// A refusal and a failure to decide.
	ra.deny = true
	if w := e.call("writer", "GET", "/tables/"+arnOf("wh"), ""); w.Code != 403 || !strings.Contains(w.Body.String(), "resource policy") {
		t.Errorf("refused: %d %s", w.Code, w.Body)
	}
	ra.deny, ra.err = false, errors.New("policy store on fire")
	if w := e.do("writer", "GET", "/iceberg/v1/wh/namespaces", ""); w.Code != 500 || strings.Contains(w.Body.String(), "fire") {
		t.Errorf("failed: %d %s", w.Code, w.Body)
	}
}

// TestIcebergTablesActions: every Iceberg REST route that checks read,
// write or admin performs S3 Tables actions (the operator's routes
// excepted), each an action of the S3 Tables API this face serves or
// one of the data actions; every S3 Tables route performs its own.
func TestIcebergTablesActions(t *testing.T) {
	operator := map[string]bool{"migrationPreflight": true, "recoveryReport": true, "catalogStatus": true}
	known := map[string]bool{tGetTableData: true, tPutTableData: true}
	for _, r := range s3tRoutes() {
		known["s3tables:"+r.op] = true
	}
	for _, r := range routeTable() {
		acts := icebergTablesActions(r.op)
		switch {
		case r.action == "" || r.action == ActionMigrate || operator[r.op]:
			if acts != nil {
				t.Errorf("%s (%s) is the operator's or checks no action, yet performs %v", r.op, r.action, acts)
			}
		case len(acts) == 0:
			t.Errorf("%s (%s) performs no S3 Tables action: map it in icebergTablesActions", r.op, r.action)
		}
		for _, a := range acts {
			if !known[a] {
				t.Errorf("%s performs %s, which is no S3 Tables action", r.op, a)
			}
		}
	}
	for _, a := range []Action{ActionRead, ActionWrite, ActionAdmin} {
		for _, x := range coarseTablesActions(a) {
			if !known[x] {
				t.Errorf("%s performs %s, which is no S3 Tables action", a, x)
			}
		}
	}
	if coarseTablesActions(ActionMigrate) != nil {
		t.Error("resource policies may grant migrate")
	}
}
