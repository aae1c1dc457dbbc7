package iceberg

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

// s3tEnv serves the S3 Tables API of a testEnv's Server.
type s3tEnv struct {
	*testEnv
	h http.Handler
}

func newS3TEnv(t *testing.T) *s3tEnv {
	t.Helper()
	e := newEnv(t)
	return &s3tEnv{testEnv: e, h: e.s.S3Tables(S3TablesOptions{})}
}

// arnOf is the ARN of table bucket name, percent-encoded as botocore
// puts it in a path.
func arnOf(name string) string {
	return sdkEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/" + name)
}

// sdkEscape percent-encodes a path parameter as the AWS SDKs do:
// everything but letters, digits and "-_.~".
func sdkEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// call sends a request as user (a fakeAuth key; "" sends none).
func (e *s3tEnv) call(user, method, target, body string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest(method, "http://cairn.test"+target, strings.NewReader(body))
	if user != "" {
		req.Header.Set("Authorization", "Test "+user)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	return w
}

// jsonOf decodes an answer's JSON body.
func jsonOf(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("body %q: %v", w.Body, err)
	}
	return m
}

// jsonAt walks a decoded JSON value by object keys and array indexes.
func jsonAt(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// wantJSON checks the values at paths of the answer: each row is a path whose
// last element is the value wanted.
func wantJSON(rows ...[]any) func(*testing.T, map[string]any) {
	return func(t *testing.T, m map[string]any) {
		t.Helper()
		for _, r := range rows {
			path, want := r[:len(r)-1], r[len(r)-1]
			if got := jsonAt(m, path...); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%v = %v, want %v (body %v)", path, got, want, m)
			}
		}
	}
}

// jp is a row of wantJSON.
func jp(v ...any) []any { return v }

// TestS3TablesOperations runs every operation in order against the fake
// catalog (whose warehouse wh exists): each row is a request, the status
// and exception type it must answer, and checks of the answer.
func TestS3TablesOperations(t *testing.T) {
	e := newS3TEnv(t)
	const (
		uuid1    = "00000000-0000-0000-0000-000000000001"
		tableARN = "arn:aws:s3tables:us-east-1:000000000000:bucket/wh/table/" + uuid1
		whARN    = "arn:aws:s3tables:us-east-1:000000000000:bucket/wh"
	)
	wh, orders := "/buckets/"+arnOf("wh"), "/tables/"+arnOf("wh")+"/sales/orders"
	getTable := "/get-table?tableBucketARN=" + arnOf("wh") + "&namespace=sales&name="
	compaction := `{"value":{"status":"enabled","settings":{"icebergCompaction":{"targetFileSizeMB":128,"strategy":"binpack"}}}}`
	for _, tc := range []struct {
		name, user, method, target, body string
		status                           int
		typ                              string // the exception; "" for success
		check                            func(*testing.T, map[string]any)
	}{
		// table buckets
		{"create bucket", "root", "PUT", "/buckets", `{"name":"lake"}`, 200, "",
			wantJSON(jp("arn", "arn:aws:s3tables:us-east-1:000000000000:bucket/lake"))},
		{"create bucket not root", "writer", "PUT", "/buckets", `{"name":"lake2"}`, 403, "ForbiddenException", nil},
		{"create bucket twice", "root", "PUT", "/buckets", `{"name":"lake"}`, 409, "ConflictException", nil},
		{"create bucket bad name", "root", "PUT", "/buckets", `{"name":"bad_name!"}`, 400, "BadRequestException", nil},
		{"create bucket no name", "root", "PUT", "/buckets", `{}`, 400, "BadRequestException", nil},
		{"create bucket bad JSON", "root", "PUT", "/buckets", `{"name":`, 400, "BadRequestException", nil},
		{"create bucket encryption", "root", "PUT", "/buckets", `{"name":"enc","encryptionConfiguration":{"sseAlgorithm":"AES256"}}`, 400, "BadRequestException", nil},
		{"create bucket tags", "root", "PUT", "/buckets", `{"name":"tagged","tags":{"a":"b"}}`, 400, "BadRequestException", nil},
		{"create bucket storage class", "root", "PUT", "/buckets", `{"name":"std","storageClassConfiguration":{"storageClass":"STANDARD"}}`, 200, "", nil},
		{"list buckets", "reader", "GET", "/buckets", "", 200, "",
			wantJSON(jp("tableBuckets", 0, "name", "lake"), jp("tableBuckets", 1, "name", "std"), jp("tableBuckets", 2, "name", "wh"),
				jp("tableBuckets", 2, "arn", whARN), jp("tableBuckets", 2, "ownerAccountId", "000000000000"), jp("tableBuckets", 2, "type", "customer"),
				jp("continuationToken", nil))},
		{"list buckets page 1", "reader", "GET", "/buckets?maxBuckets=2", "", 200, "",
			wantJSON(jp("tableBuckets", 1, "name", "std"), jp("tableBuckets", 2, nil), jp("continuationToken", encodeListToken("std")))},
		{"list buckets page 2", "reader", "GET", "/buckets?maxBuckets=2&continuationToken=" + encodeListToken("std"), "", 200, "",
			wantJSON(jp("tableBuckets", 0, "name", "wh"), jp("tableBuckets", 1, nil), jp("continuationToken", nil))},
		{"list buckets prefix", "reader", "GET", "/buckets?prefix=la", "", 200, "", wantJSON(jp("tableBuckets", 0, "name", "lake"), jp("tableBuckets", 1, nil))},
		{"list buckets aws type", "reader", "GET", "/buckets?type=aws", "", 200, "", wantJSON(jp("tableBuckets", 0, nil))},
		{"list buckets bad type", "reader", "GET", "/buckets?type=mine", "", 400, "BadRequestException", nil},
		{"list buckets bad max", "reader", "GET", "/buckets?maxBuckets=0", "", 400, "BadRequestException", nil},
		{"list buckets bad token", "reader", "GET", "/buckets?continuationToken=%21%21", "", 400, "BadRequestException", nil},
		{"list buckets unauthorized user", "nobody", "GET", "/buckets", "", 200, "", wantJSON(jp("tableBuckets", 0, nil))},
		{"no credentials", "", "GET", "/buckets", "", 403, "ForbiddenException", nil},
		{"bad credentials", "unknown", "GET", "/buckets", "", 403, "ForbiddenException", nil},
		{"get bucket", "reader", "GET", wh, "", 200, "",
			wantJSON(jp("name", "wh"), jp("arn", whARN), jp("createdAt", "2023-11-14T22:13:20Z"))},
		{"get bucket unreadable", "nobody", "GET", wh, "", 403, "ForbiddenException", nil},
		{"get missing bucket", "root", "GET", "/buckets/" + arnOf("nope"), "", 404, "NotFoundException", nil},
		{"get bucket bad ARN", "reader", "GET", "/buckets/wh", "", 400, "BadRequestException", nil},
		{"get bucket by table ARN", "reader", "GET", "/buckets/" + url.QueryEscape(tableARN), "", 400, "BadRequestException", nil},
		{"delete bucket not root", "writer", "DELETE", "/buckets/" + arnOf("std"), "", 403, "ForbiddenException", nil},
		{"delete bucket", "root", "DELETE", "/buckets/" + arnOf("std"), "", 204, "", nil},
		// namespaces
		{"create namespace", "writer", "PUT", "/namespaces/" + arnOf("wh"), `{"namespace":["sales"]}`, 200, "",
			wantJSON(jp("tableBucketARN", whARN), jp("namespace", 0, "sales"))},
		{"create namespace reader", "reader", "PUT", "/namespaces/" + arnOf("wh"), `{"namespace":["x"]}`, 403, "ForbiddenException", nil},
		{"create namespace twice", "writer", "PUT", "/namespaces/" + arnOf("wh"), `{"namespace":["sales"]}`, 409, "ConflictException", nil},
		{"create namespace two levels", "writer", "PUT", "/namespaces/" + arnOf("wh"), `{"namespace":["a","b"]}`, 400, "BadRequestException", nil},
		{"create namespace empty", "writer", "PUT", "/namespaces/" + arnOf("wh"), `{"namespace":[""]}`, 400, "BadRequestException", nil},
		{"create namespace missing bucket", "writer", "PUT", "/namespaces/" + arnOf("nope"), `{"namespace":["x"]}`, 404, "NotFoundException", nil},
		{"list namespaces", "reader", "GET", "/namespaces/" + arnOf("wh"), "", 200, "",
			wantJSON(jp("namespaces", 0, "namespace", 0, "sales"), jp("namespaces", 0, "ownerAccountId", "000000000000"), jp("namespaces", 1, nil))},
		{"list namespaces prefix", "reader", "GET", "/namespaces/" + arnOf("wh") + "?prefix=x", "", 200, "", wantJSON(jp("namespaces", 0, nil))},
		{"get namespace", "reader", "GET", "/namespaces/" + arnOf("wh") + "/sales", "", 200, "",
			wantJSON(jp("namespace", 0, "sales"), jp("createdBy", "000000000000"))},
		{"get missing namespace", "reader", "GET", "/namespaces/" + arnOf("wh") + "/nope", "", 404, "NotFoundException", nil},
		// tables
		{"create table", "writer", "PUT", "/tables/" + arnOf("wh") + "/sales",
			`{"name":"orders","format":"ICEBERG","metadata":{"iceberg":{"schema":{"fields":[{"name":"id","type":"long","required":true}]}}}}`, 200, "",
			wantJSON(jp("tableARN", tableARN), jp("versionToken", "v0"))},
		{"create table twice", "writer", "PUT", "/tables/" + arnOf("wh") + "/sales", `{"name":"orders","format":"ICEBERG"}`, 409, "ConflictException", nil},
		{"create table other format", "writer", "PUT", "/tables/" + arnOf("wh") + "/sales", `{"name":"t","format":"PARQUET"}`, 400, "BadRequestException", nil},
		{"create table missing namespace", "writer", "PUT", "/tables/" + arnOf("wh") + "/nope", `{"name":"t","format":"ICEBERG"}`, 404, "NotFoundException", nil},
		{"get table", "reader", "GET", getTable + "orders", "", 200, "",
			wantJSON(jp("name", "orders"), jp("namespace", 0, "sales"), jp("tableARN", tableARN), jp("versionToken", "v0"), jp("format", "ICEBERG"),
				jp("metadataLocation", "s3://wh/t/metadata/00000.metadata.json"), jp("warehouseLocation", "s3://wh/t"),
				jp("createdAt", "2023-11-14T22:13:20Z"), jp("modifiedAt", "2023-11-14T22:13:20Z"), jp("type", "customer"))},
		{"get table by ARN", "reader", "GET", "/get-table?tableArn=" + url.QueryEscape(tableARN), "", 200, "", wantJSON(jp("name", "orders"))},
		{"get table by unknown ARN", "reader", "GET", "/get-table?tableArn=" + url.QueryEscape(whARN+"/table/nope"), "", 404, "NotFoundException", nil},
		{"get table by bucket ARN", "reader", "GET", "/get-table?tableArn=" + arnOf("wh"), "", 400, "BadRequestException", nil},
		{"get table both ways", "reader", "GET", getTable + "orders&tableArn=" + url.QueryEscape(tableARN), "", 400, "BadRequestException", nil},
		{"get table no name", "reader", "GET", "/get-table?tableBucketARN=" + arnOf("wh"), "", 400, "BadRequestException", nil},
		{"get missing table", "reader", "GET", getTable + "nope", "", 404, "NotFoundException", nil},
		{"get table unreadable", "nobody", "GET", getTable + "orders", "", 403, "ForbiddenException", nil},
		{"list tables", "reader", "GET", "/tables/" + arnOf("wh"), "", 200, "",
			wantJSON(jp("tables", 0, "name", "orders"), jp("tables", 0, "namespace", 0, "sales"), jp("tables", 0, "tableARN", tableARN), jp("tables", 1, nil))},
		{"list tables of namespace", "reader", "GET", "/tables/" + arnOf("wh") + "?namespace=sales&prefix=or", "", 200, "", wantJSON(jp("tables", 0, "name", "orders"))},
		{"list tables prefix", "reader", "GET", "/tables/" + arnOf("wh") + "?prefix=x", "", 200, "", wantJSON(jp("tables", 0, nil))},
		{"list tables missing namespace", "reader", "GET", "/tables/" + arnOf("wh") + "?namespace=nope", "", 404, "NotFoundException", nil},
		{"metadata location", "reader", "GET", orders + "/metadata-location", "", 200, "",
			wantJSON(jp("versionToken", "v0"), jp("metadataLocation", "s3://wh/t/metadata/00000.metadata.json"), jp("warehouseLocation", "s3://wh/t"))},
		{"update metadata location", "writer", "PUT", orders + "/metadata-location", `{"versionToken":"v0","metadataLocation":"s3://wh/t/metadata/00001.metadata.json"}`, 200, "",
			wantJSON(jp("versionToken", "v1"), jp("metadataLocation", "s3://wh/t/metadata/00001.metadata.json"), jp("name", "orders"), jp("namespace", 0, "sales"), jp("tableARN", tableARN))},
		{"update metadata location stale", "writer", "PUT", orders + "/metadata-location", `{"versionToken":"v7","metadataLocation":"s3://wh/t/m.json"}`, 409, "ConflictException", nil},
		{"update metadata location outside", "writer", "PUT", orders + "/metadata-location", `{"versionToken":"v0","metadataLocation":"s3://other/m.json"}`, 400, "BadRequestException", nil},
		{"update metadata location no token", "writer", "PUT", orders + "/metadata-location", `{"metadataLocation":"s3://wh/t/m.json"}`, 400, "BadRequestException", nil},
		{"update metadata location reader", "reader", "PUT", orders + "/metadata-location", `{"versionToken":"v0","metadataLocation":"s3://wh/t/m.json"}`, 403, "ForbiddenException", nil},
		// table maintenance
		{"put compaction", "writer", "PUT", orders + "/maintenance/icebergCompaction", compaction, 204, "", nil},
		{"put compaction reader", "reader", "PUT", orders + "/maintenance/icebergCompaction", compaction, 403, "ForbiddenException", nil},
		{"put compaction too big", "writer", "PUT", orders + "/maintenance/icebergCompaction",
			`{"value":{"status":"enabled","settings":{"icebergCompaction":{"targetFileSizeMB":1024}}}}`, 400, "BadRequestException", nil},
		{"put compaction missing table", "writer", "PUT", "/tables/" + arnOf("wh") + "/sales/nope/maintenance/icebergCompaction", compaction, 404, "NotFoundException", nil},
		{"put snapshots disabled", "writer", "PUT", orders + "/maintenance/icebergSnapshotManagement", `{"value":{"status":"disabled"}}`, 204, "", nil},
		{"put unknown job", "writer", "PUT", orders + "/maintenance/icebergSorting", compaction, 400, "BadRequestException", nil},
		{"put table unreferenced removal", "writer", "PUT", orders + "/maintenance/icebergUnreferencedFileRemoval", `{"value":{"status":"enabled"}}`, 400, "BadRequestException", nil},
		{"put other job's settings", "writer", "PUT", orders + "/maintenance/icebergSnapshotManagement", compaction, 400, "BadRequestException", nil},
		{"put no value", "writer", "PUT", orders + "/maintenance/icebergCompaction", `{}`, 400, "BadRequestException", nil},
		{"get table maintenance", "reader", "GET", orders + "/maintenance", "", 200, "",
			wantJSON(jp("tableARN", tableARN),
				jp("configuration", "icebergCompaction", "status", "enabled"),
				jp("configuration", "icebergCompaction", "settings", "icebergCompaction", "targetFileSizeMB", 128),
				jp("configuration", "icebergCompaction", "settings", "icebergCompaction", "strategy", "binpack"),
				jp("configuration", "icebergSnapshotManagement", "status", "disabled"),
				jp("configuration", "icebergSnapshotManagement", "settings", "icebergSnapshotManagement", "minSnapshotsToKeep", 1),
				jp("configuration", "icebergSnapshotManagement", "settings", "icebergSnapshotManagement", "maxSnapshotAgeHours", 120),
				jp("configuration", "icebergUnreferencedFileRemoval", nil))},
		// table bucket maintenance
		{"put bucket unreferenced removal", "writer", "PUT", wh + "/maintenance/icebergUnreferencedFileRemoval",
			`{"value":{"status":"enabled","settings":{"icebergUnreferencedFileRemoval":{"unreferencedDays":4,"nonCurrentDays":12}}}}`, 204, "", nil},
		{"put bucket compaction", "writer", "PUT", wh + "/maintenance/icebergCompaction", compaction, 400, "BadRequestException", nil},
		{"put bucket bad days", "writer", "PUT", wh + "/maintenance/icebergUnreferencedFileRemoval",
			`{"value":{"settings":{"icebergUnreferencedFileRemoval":{"unreferencedDays":0}}}}`, 400, "BadRequestException", nil},
		{"get bucket maintenance", "reader", "GET", wh + "/maintenance", "", 200, "",
			wantJSON(jp("tableBucketARN", whARN),
				jp("configuration", "icebergUnreferencedFileRemoval", "status", "enabled"),
				jp("configuration", "icebergUnreferencedFileRemoval", "settings", "icebergUnreferencedFileRemoval", "unreferencedDays", 4),
				jp("configuration", "icebergUnreferencedFileRemoval", "settings", "icebergUnreferencedFileRemoval", "nonCurrentDays", 12))},
		{"job status", "reader", "GET", orders + "/maintenance-job-status", "", 200, "",
			wantJSON(jp("tableARN", tableARN), jp("status", "icebergCompaction", "status", "Not_Yet_Run"),
				jp("status", "icebergSnapshotManagement", "status", "Disabled"),
				jp("status", "icebergUnreferencedFileRemoval", "status", "Not_Yet_Run"),
				jp("status", "icebergCompaction", "lastRunTimestamp", nil))},
		// unsupported and unknown
		{"bucket encryption", "reader", "GET", wh + "/encryption", "", 405, "MethodNotAllowedException", nil},
		{"tags", "reader", "GET", "/tag/" + url.QueryEscape(tableARN), "", 405, "MethodNotAllowedException", nil},
		{"unknown operation", "reader", "GET", wh + "/metrics", "", 404, "NotFoundException", nil},
		{"wrong method", "reader", "POST", "/buckets", "", 405, "MethodNotAllowedException", nil},
		// rename and delete
		{"rename stale token", "writer", "PUT", orders + "/rename", `{"newName":"orders2","versionToken":"old"}`, 409, "ConflictException", nil},
		{"rename nothing", "writer", "PUT", orders + "/rename", `{}`, 400, "BadRequestException", nil},
		{"rename", "writer", "PUT", orders + "/rename", `{"newName":"orders2","versionToken":"v0"}`, 204, "", nil},
		{"get renamed", "reader", "GET", getTable + "orders2", "", 200, "", wantJSON(jp("name", "orders2"), jp("tableARN", tableARN))},
		{"delete stale token", "writer", "DELETE", "/tables/" + arnOf("wh") + "/sales/orders2?versionToken=old", "", 409, "ConflictException", nil},
		{"delete table reader", "reader", "DELETE", "/tables/" + arnOf("wh") + "/sales/orders2", "", 403, "ForbiddenException", nil},
		{"delete table", "writer", "DELETE", "/tables/" + arnOf("wh") + "/sales/orders2?versionToken=v0", "", 204, "", nil},
		{"delete table again", "writer", "DELETE", "/tables/" + arnOf("wh") + "/sales/orders2", "", 404, "NotFoundException", nil},
		{"delete namespace", "writer", "DELETE", "/namespaces/" + arnOf("wh") + "/sales", "", 204, "", nil},
		{"delete missing namespace", "writer", "DELETE", "/namespaces/" + arnOf("wh") + "/sales", "", 404, "NotFoundException", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e.call(tc.user, tc.method, tc.target, tc.body)
			if w.Code != tc.status {
				t.Fatalf("%s %s: %d %s, want %d", tc.method, tc.target, w.Code, w.Body, tc.status)
			}
			if w.Header().Get("X-Amzn-Requestid") == "" {
				t.Error("no x-amzn-RequestId")
			}
			if got := w.Header().Get("X-Amzn-Errortype"); got != tc.typ {
				t.Fatalf("x-amzn-ErrorType %q, want %q (body %s)", got, tc.typ, w.Body)
			}
			if tc.typ != "" {
				if msg, _ := jsonOf(t, w)["message"].(string); msg == "" {
					t.Fatalf("error without a message: %s", w.Body)
				}
				return
			}
			if tc.check != nil {
				tc.check(t, jsonOf(t, w))
			}
		})
	}
}

// TestS3TablesJobStatus: a job's last outcome (as catalog/maintain
// records it) is answered with its time and failure.
func TestS3TablesJobStatus(t *testing.T) {
	e := newS3TEnv(t)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["ns"]}`)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces/ns/tables", `{"name":"t"}`)
	target := "/tables/" + arnOf("wh") + "/ns/t"
	if w := e.call("writer", "PUT", target+"/maintenance/icebergSnapshotManagement", `{"value":{"status":"enabled"}}`); w.Code != 204 {
		t.Fatalf("put: %d %s", w.Code, w.Body)
	}
	ran := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e.cat.status[idKey("wh", catalog.Ident{Namespace: []string{"ns"}, Name: "t"})] = map[catalog.JobKind]catalog.JobStatus{
		catalog.JobSnapshots: {Status: catalog.JobFailed, LastRun: ran, Failure: "the store is full"},
	}
	w := e.call("reader", "GET", target+"/maintenance-job-status", "")
	if w.Code != 200 {
		t.Fatalf("status: %d %s", w.Code, w.Body)
	}
	wantJSON(jp("status", "icebergSnapshotManagement", "status", "Failed"),
		jp("status", "icebergSnapshotManagement", "lastRunTimestamp", "2026-01-02T03:04:05Z"),
		jp("status", "icebergSnapshotManagement", "failureMessage", "the store is full"),
		jp("status", "icebergCompaction", "status", "Disabled"))(t, jsonOf(t, w))
}

// TestS3TablesErrorTypes: every catalog sentinel answers one of the S3
// Tables exceptions, never the internal error but for an unknown commit
// state, and an error of the catalog keeps the catalog's words.
func TestS3TablesErrorTypes(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		typ    string
	}{
		{catalog.ErrNoSuchWarehouse, 404, "NotFoundException"},
		{catalog.ErrNoSuchNamespace, 404, "NotFoundException"},
		{catalog.ErrNoSuchTable, 404, "NotFoundException"},
		{catalog.ErrNoSuchView, 404, "NotFoundException"},
		{catalog.ErrAlreadyExists, 409, "ConflictException"},
		{catalog.ErrNamespaceNotEmpty, 409, "ConflictException"},
		{catalog.ErrCommitFailed, 409, "ConflictException"},
		{catalog.ErrCommitStateUnknown, 500, "InternalServerErrorException"},
		{catalog.ErrBadRequest, 400, "BadRequestException"},
		{catalog.ErrUnprocessable, 400, "BadRequestException"},
		{catalog.ErrUnsupported, 400, "BadRequestException"},
		{catalog.ErrFenced, 409, "ConflictException"},
		{catalog.ErrMigrationConflict, 409, "ConflictException"},
		{catalog.ErrQuarantined, 503, "ServiceUnavailableException"},
		{catalog.ErrUnavailable, 503, "ServiceUnavailableException"},
		{catalog.ErrNoSuchPolicy, 404, "NotFoundException"},
		{catalog.ErrNotFound, 404, "NotFoundException"},
		{catalog.ErrConflict, 409, "ConflictException"},
		{ErrUnauthenticated, 403, "ForbiddenException"},
		{ErrForbidden, 403, "ForbiddenException"},
		{errBadPath, 400, "BadRequestException"},
		{apiErr(http.StatusRequestEntityTooLarge, "BadRequestException", "too big"), 400, "BadRequestException"},
		{fmt.Errorf("disk on fire"), 500, "InternalServerErrorException"},
	} {
		got := s3tError(fmt.Errorf("wrapped: %w", tc.err), "RID1")
		if got.Status != tc.status || got.Type != tc.typ || got.Message == "" {
			t.Errorf("%v: %d %s %q, want %d %s", tc.err, got.Status, got.Type, got.Message, tc.status, tc.typ)
		}
	}
	if got := s3tError(fmt.Errorf("%w: ns.t", catalog.ErrNoSuchTable), "RID1"); !strings.Contains(got.Message, "ns.t") || !strings.Contains(got.Message, "create the table first") {
		t.Errorf("message %q does not keep the catalog's words and what to do", got.Message)
	}
	if got := s3tError(fmt.Errorf("disk on fire"), "RID1"); strings.Contains(got.Message, "fire") || !strings.Contains(got.Message, "RID1") {
		t.Errorf("an internal error's message %q leaks its cause or lacks the request id", got.Message)
	}
	// Every sentinel of package catalog is in the table above.
	listed := map[string]bool{}
	for _, n := range []string{"ErrNoSuchWarehouse", "ErrNoSuchNamespace", "ErrNoSuchTable", "ErrNoSuchView", "ErrAlreadyExists",
		"ErrNamespaceNotEmpty", "ErrCommitFailed", "ErrCommitStateUnknown", "ErrBadRequest", "ErrUnprocessable", "ErrUnsupported",
		"ErrFenced", "ErrMigrationConflict", "ErrQuarantined", "ErrUnavailable", "ErrNoSuchPolicy", "ErrNotFound", "ErrConflict"} {
		listed[n] = true
	}
	for _, n := range sentinelNames(t, "../../catalog") {
		if !listed[n] {
			t.Errorf("catalog.%s is new: list it in this test with the S3 Tables exception it answers", n)
		}
	}
}

// TestS3TablesRequestLog: the operations are counted in the face's
// metrics under AWS's operation names.
func TestS3TablesRequestLog(t *testing.T) {
	e := newS3TEnv(t)
	e.call("reader", "GET", "/buckets", "")
	e.call("reader", "GET", "/buckets/"+arnOf("nope"), "")
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "cairn_iceberg_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var route, status string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "route":
					route = l.GetValue()
				case "status":
					status = l.GetValue()
				}
			}
			seen[route+" "+status] = true
		}
	}
	for _, want := range []string{"ListTableBuckets 200", "GetTableBucket 404"} {
		if !seen[want] {
			t.Errorf("no metric for %s (have %v)", want, seen)
		}
	}
}

// TestS3TablesBodyLimit: a body over MaxBody is refused before the
// operation runs.
func TestS3TablesBodyLimit(t *testing.T) {
	e := newS3TEnv(t)
	w := e.call("root", "PUT", "/buckets", `{"name":"`+strings.Repeat("a", DefaultMaxBody)+`"}`)
	if w.Code != 400 || w.Header().Get("X-Amzn-Errortype") != "BadRequestException" || e.cat.calls["CreateWarehouse"] != 0 {
		t.Fatalf("answer %d %s, CreateWarehouse called %d times", w.Code, w.Header().Get("X-Amzn-Errortype"), e.cat.calls["CreateWarehouse"])
	}
}
