package iceberg

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/cairnstore/cairn/internal/httpx"
)

// The AWS S3 Tables control plane (the "s3tables" service of the AWS
// SDKs, REST-JSON as botocore's service model s3tables 2018-05-10 defines
// it) over the same catalog as the Iceberg REST routes: a table bucket is
// a warehouse, a namespace is a one-level namespace, a table an Iceberg
// table. Requests are SigV4-signed for the service s3tables; cmd/ sends
// those whose path is not the Iceberg REST face's here. Errors are JSON
// {"message"} with the exception type in x-amzn-ErrorType
// (s3tables_errors.go).

// The defaults of S3TablesOptions.
const (
	DefaultS3TablesRegion  = "us-east-1"
	DefaultS3TablesAccount = "000000000000"
)

// S3TablesOptions configure the S3 Tables face (Server.S3Tables). Only
// cmd/ fills them.
type S3TablesOptions struct {
	// Region is the region in the ARNs the face answers; empty means
	// DefaultS3TablesRegion.
	Region string
	// AccountID is the account in the ARNs and the owner of every table
	// bucket, namespace and table: the one account of Cairn's users
	// (cmd/ passes frontends/s3/access.AccountID); empty means
	// DefaultS3TablesAccount.
	AccountID string
}

// s3Tables serves the S3 Tables API through a Server: its catalog,
// authentication, authorization, body limit, request ids, access log and
// metrics (the routes are labelled by AWS's operation names).
type s3Tables struct {
	s      *Server
	opt    S3TablesOptions
	routes []*s3tRoute
}

// S3Tables returns the handler of the AWS S3 Tables API. Its paths
// (/buckets, /namespaces/..., /tables/..., /get-table) are those of the
// API at the root of the endpoint; the caller routes to it the requests
// signed for the service s3tables.
func (s *Server) S3Tables(opt S3TablesOptions) http.Handler {
	return &s3Tables{s: s, opt: opt.withDefaults(), routes: s3tRoutes()}
}

// s3tRoute is one S3 Tables operation. The embedded route carries what
// the request log, the metrics and request.param read: method, path
// pattern, op (AWS's operation name), action and segments.
type s3tRoute struct {
	route
	// root routes are for the root user only (creating and deleting
	// table buckets); the others check action on the table bucket, when
	// set.
	root bool
	run  func(*s3Tables, *request) (reply, error)
}

// s3tRoutes lists the operations, built once per handler. Path
// parameters are named as in the service model.
func s3tRoutes() []*s3tRoute {
	const (
		bucket = "/buckets/{tableBucketARN}"
		nss    = "/namespaces/{tableBucketARN}"
		tables = "/tables/{tableBucketARN}"
		table  = tables + "/{namespace}/{name}"
	)
	op := func(method, path, name string, action Action, run func(*s3Tables, *request) (reply, error)) *s3tRoute {
		return &s3tRoute{route: route{method: method, path: path, op: name, action: action}, run: run}
	}
	root := func(r *s3tRoute) *s3tRoute { r.root = true; return r }
	rt := []*s3tRoute{
		root(op("PUT", "/buckets", "CreateTableBucket", "", (*s3Tables).createTableBucket)),
		op("GET", "/buckets", "ListTableBuckets", "", (*s3Tables).listTableBuckets), // filtered by ActionRead
		op("GET", bucket, "GetTableBucket", ActionRead, (*s3Tables).getTableBucket),
		root(op("DELETE", bucket, "DeleteTableBucket", "", (*s3Tables).deleteTableBucket)),
		op("GET", bucket+"/maintenance", "GetTableBucketMaintenanceConfiguration", ActionRead, (*s3Tables).getBucketMaintenance),
		op("PUT", bucket+"/maintenance/{type}", "PutTableBucketMaintenanceConfiguration", ActionWrite, (*s3Tables).putBucketMaintenance),

		op("PUT", nss, "CreateNamespace", ActionWrite, (*s3Tables).createNamespace),
		op("GET", nss, "ListNamespaces", ActionRead, (*s3Tables).listNamespaces),
		op("GET", nss+"/{namespace}", "GetNamespace", ActionRead, (*s3Tables).getNamespace),
		op("DELETE", nss+"/{namespace}", "DeleteNamespace", ActionWrite, (*s3Tables).deleteNamespace),

		op("PUT", tables+"/{namespace}", "CreateTable", ActionWrite, (*s3Tables).createTable),
		op("GET", tables, "ListTables", ActionRead, (*s3Tables).listTables),
		op("GET", "/get-table", "GetTable", ActionRead, (*s3Tables).getTable),
		op("DELETE", table, "DeleteTable", ActionWrite, (*s3Tables).deleteTable),
		op("PUT", table+"/rename", "RenameTable", ActionWrite, (*s3Tables).renameTable),
		op("GET", table+"/metadata-location", "GetTableMetadataLocation", ActionRead, (*s3Tables).getMetadataLocation),
		op("PUT", table+"/metadata-location", "UpdateTableMetadataLocation", ActionWrite, (*s3Tables).updateMetadataLocation),
		op("GET", table+"/maintenance", "GetTableMaintenanceConfiguration", ActionRead, (*s3Tables).getTableMaintenance),
		op("PUT", table+"/maintenance/{type}", "PutTableMaintenanceConfiguration", ActionWrite, (*s3Tables).putTableMaintenance),
		op("GET", table+"/maintenance-job-status", "GetTableMaintenanceJobStatus", ActionRead, (*s3Tables).getJobStatus),

		// A policy is read, put and deleted with write access
		// (s3tables_policy.go).
		op("PUT", bucket+"/policy", "PutTableBucketPolicy", ActionWrite, (*s3Tables).putPolicy),
		op("GET", bucket+"/policy", "GetTableBucketPolicy", ActionWrite, (*s3Tables).getPolicy),
		op("DELETE", bucket+"/policy", "DeleteTableBucketPolicy", ActionWrite, (*s3Tables).deletePolicy),
		op("PUT", table+"/policy", "PutTablePolicy", ActionWrite, (*s3Tables).putPolicy),
		op("GET", table+"/policy", "GetTablePolicy", ActionWrite, (*s3Tables).getPolicy),
		op("DELETE", table+"/policy", "DeleteTablePolicy", ActionWrite, (*s3Tables).deletePolicy),
	}
	for _, u := range s3tUnsupported() {
		rt = append(rt, op(u.method, u.path, u.op, "", s3tRefuse(u.op, u.why)))
	}
	for _, r := range rt {
		r.segs, _ = splitPath(strings.TrimPrefix(r.path, "/"))
	}
	return rt
}

// s3tUnsupportedOp is an operation of the service model that Cairn
// answers with MethodNotAllowedException and why.
type s3tUnsupportedOp struct {
	method, path, op, why string
}

// s3tUnsupported lists the operations of the model that have a reason to
// be refused worth telling; other paths get NotFoundException.
func s3tUnsupported() []s3tUnsupportedOp {
	const (
		bucket     = "/buckets/{tableBucketARN}"
		table      = "/tables/{tableBucketARN}/{namespace}/{name}"
		encryption = "encryption settings are not supported through S3 Tables: set the default encryption of the table bucket's S3 bucket " +
			"with the S3 API's PutBucketEncryption instead"
		tags = "tags are not supported on table buckets and tables"
	)
	return []s3tUnsupportedOp{
		{"GET", bucket + "/encryption", "GetTableBucketEncryption", encryption},
		{"PUT", bucket + "/encryption", "PutTableBucketEncryption", encryption},
		{"DELETE", bucket + "/encryption", "DeleteTableBucketEncryption", encryption},
		{"GET", table + "/encryption", "GetTableEncryption", encryption},
		{"GET", "/tag/{resourceArn}", "ListTagsForResource", tags},
		{"POST", "/tag/{resourceArn}", "TagResource", tags},
		{"DELETE", "/tag/{resourceArn}", "UntagResource", tags},
	}
}

// s3tRefuse answers an operation Cairn does not serve.
func s3tRefuse(op, why string) func(*s3Tables, *request) (reply, error) {
	return func(*s3Tables, *request) (reply, error) {
		return reply{}, apiErr(http.StatusMethodNotAllowed, "MethodNotAllowedException", "%s: %s", op, why)
	}
}

// ServeHTTP implements http.Handler.
func (t *s3Tables) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := t.s.opt.Now()
	rw := httpx.NewRecorder(w)
	req := &request{Request: r, id: t.s.nextRequestID(), op: "unknown", service: "s3tables"}
	rw.Header().Set("X-Request-Id", req.id)
	rw.Header().Set("X-Amzn-Requestid", req.id)
	status, out, err := t.serve(req)
	t.s.write(rw, req, status, out)
	t.s.logRequest(req, rw, start, err)
}

// serve runs req: route, body, authentication, the table bucket it names,
// authorization, then the operation; it returns the status and encoded
// body to send.
func (t *s3Tables) serve(req *request) (int, []byte, error) {
	rt, err := t.resolve(req)
	if err != nil {
		return t.encodeError(req, err)
	}
	if err := t.s.readBody(req); err != nil {
		return t.encodeError(req, err)
	}
	if req.principal, err = t.s.authenticate(req); err != nil {
		return t.encodeError(req, err)
	}
	if req.warehouse, err = s3tWarehouse(req); err != nil {
		return t.encodeError(req, err)
	}
	switch {
	case rt.root && !req.principal.Root:
		return t.encodeError(req, fmt.Errorf("%w: %s is for the root user only: sign the request with the root credentials", ErrForbidden, rt.op))
	case rt.action != "":
		req.table, req.tablesActions = t.routeTable(req), []string{"s3tables:" + rt.op}
		if err := t.s.authorize(req, rt.action); err != nil {
			return t.encodeError(req, err)
		}
	}
	rep, err := rt.run(t, req)
	if err != nil {
		return t.encodeError(req, err)
	}
	req.header = rep.header
	if rep.body == nil {
		return rep.status, nil, nil
	}
	out, err := json.Marshal(rep.body)
	if err != nil {
		return t.encodeError(req, fmt.Errorf("encoding the answer: %w", err))
	}
	return rep.status, out, nil
}

// resolve finds the operation of req from its escaped path, split before
// decoding so that an ARN's %2F stays inside its segment.
func (t *s3Tables) resolve(req *request) (*s3tRoute, error) {
	p := req.URL.EscapedPath()
	segs, err := splitPath(strings.TrimPrefix(p, "/"))
	if err != nil {
		return nil, err
	}
	pathMatched := false
	for _, r := range t.routes {
		if !matchSegs(r.segs, segs) {
			continue
		}
		if r.method != req.Method {
			pathMatched = true
			continue
		}
		req.route, req.op, req.segs = &r.route, r.op, segs
		return r, nil
	}
	if pathMatched {
		return nil, apiErr(http.StatusMethodNotAllowed, "MethodNotAllowedException", "%s is not allowed on %s", req.Method, p)
	}
	return nil, apiErr(http.StatusNotFound, "NotFoundException",
		"no S3 Tables operation that Cairn serves is at %s %s; docs/s3tables.md lists those it serves", req.Method, p)
}

// s3tWarehouse returns the table bucket req names: the tableBucketARN
// path parameter, or GetTable's query; "" for the operations on no one
// bucket (CreateTableBucket, ListTableBuckets, tags).
func s3tWarehouse(req *request) (string, error) {
	if a := req.param("tableBucketARN"); a != "" {
		return parseBucketARN(a)
	}
	if req.op == "GetTable" {
		q, err := parseGetTableQuery(req.URL.Query())
		return q.bucket, err
	}
	return "", nil
}

// encodeError renders err as S3 Tables does: {"message"} with the type in
// x-amzn-ErrorType.
func (t *s3Tables) encodeError(req *request, err error) (int, []byte, error) {
	e := s3tError(err, req.id)
	req.retryAfter = e.RetryAfter
	req.header = http.Header{"X-Amzn-Errortype": []string{e.Type}}
	out, _ := json.Marshal(s3tErrorBody{Message: e.Message})
	return e.Status, out, err
}

// s3tDecode decodes a request body into v; an empty body is {}.
func s3tDecode(body []byte, v any) error {
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("the request body is not the JSON the operation takes: %v", err)
	}
	return nil
}
