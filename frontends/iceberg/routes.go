package iceberg

import (
	"net/http"
	"strings"
)

// route is one operation of the face. path is the spec's path after the
// base URI ("/v1/{prefix}/namespaces/{namespace}"), or for admin routes
// the path after AdminPath ("/{name}").
type route struct {
	method string
	path   string
	op     string // the spec's operationId, for logs and metrics
	action Action
	// idempotent routes honour Idempotency-Key.
	idempotent bool
	// jsonBody routes take a JSON body (400 when it is malformed).
	jsonBody bool
	// public routes need no credentials (the token endpoint).
	public bool
	// admin routes live under AdminPath and are for the root user only.
	admin bool
	// advertise lists the route in the config's endpoints.
	advertise bool
	handle    func(*Server, *request) (reply, error)
	segs      []string
}

// routeTable lists every route, built once per Server.
func routeTable() []*route {
	const (
		ns    = "/v1/{prefix}/namespaces"
		one   = ns + "/{namespace}"
		table = one + "/tables/{table}"
		view  = one + "/views/{view}"
	)
	rt := []*route{
		{method: "GET", path: "/v1/config", op: "getConfig", action: ActionRead, handle: (*Server).getConfig},
		{method: "POST", path: "/v1/oauth/tokens", op: "getToken", public: true, handle: (*Server).getToken},
		{method: "POST", path: TokenKeysPath, op: "rotateTokenKey", handle: (*Server).rotateTokenKey}, // root only

		{method: "GET", path: ns, op: "listNamespaces", action: ActionRead, advertise: true, handle: (*Server).listNamespaces},
		{method: "POST", path: ns, op: "createNamespace", action: ActionWrite, advertise: true, idempotent: true, jsonBody: true, handle: (*Server).createNamespace},
		{method: "GET", path: one, op: "loadNamespaceMetadata", action: ActionRead, advertise: true, handle: (*Server).loadNamespace},
		{method: "HEAD", path: one, op: "namespaceExists", action: ActionRead, advertise: true, handle: (*Server).namespaceExists},
		{method: "DELETE", path: one, op: "dropNamespace", action: ActionWrite, advertise: true, idempotent: true, handle: (*Server).dropNamespace},
		{method: "POST", path: one + "/properties", op: "updateProperties", action: ActionWrite, advertise: true, idempotent: true, jsonBody: true, handle: (*Server).updateProperties},

		{method: "GET", path: one + "/tables", op: "listTables", action: ActionRead, advertise: true, handle: (*Server).listTables},
		{method: "POST", path: one + "/tables", op: "createTable", action: ActionWrite, advertise: true, idempotent: true, jsonBody: true, handle: (*Server).createTable},
		{method: "GET", path: table, op: "loadTable", action: ActionRead, advertise: true, handle: (*Server).loadTable},
		{method: "HEAD", path: table, op: "tableExists", action: ActionRead, advertise: true, handle: (*Server).tableExists},
		{method: "POST", path: table, op: "updateTable", action: ActionWrite, advertise: true, idempotent: true, jsonBody: true, handle: (*Server).updateTable},
		{method: "DELETE", path: table, op: "dropTable", action: ActionWrite, advertise: true, idempotent: true, handle: (*Server).dropTable},
		{method: "POST", path: one + "/register", op: "registerTable", action: ActionWrite, advertise: true, idempotent: true, jsonBody: true, handle: (*Server).registerTable},
		{method: "POST", path: table + "/sign", op: "signRequest", action: ActionRead, jsonBody: true, handle: (*Server).signTable},
		{method: "GET", path: table + "/credentials", op: "loadCredentials", action: ActionRead, advertise: true, handle: (*Server).loadCredentials},
		{method: "POST", path: table + "/metrics", op: "reportMetrics", action: ActionRead, advertise: true, jsonBody: true, handle: (*Server).reportMetrics},
		{method: "POST", path: "/v1/{prefix}/tables/rename", op: "renameTable", action: ActionWrite, advertise: true, idempotent: true, jsonBody: true, handle: (*Server).renameTable},
		{method: "POST", path: "/v1/{prefix}/transactions/commit", op: "commitTransaction", action: ActionWrite, advertise: true, idempotent: true, jsonBody: true, handle: (*Server).commitTransaction},

		{method: "GET", path: one + "/views", op: "listViews", action: ActionRead, advertise: true, handle: (*Server).listViews},
		{method: "POST", path: one + "/views", op: "createView", action: ActionWrite, advertise: true, idempotent: true, jsonBody: true, handle: (*Server).createView},
		{method: "GET", path: view, op: "loadView", action: ActionRead, advertise: true, handle: (*Server).loadView},
		{method: "HEAD", path: view, op: "viewExists", action: ActionRead, advertise: true, handle: (*Server).viewExists},
		{method: "POST", path: view, op: "replaceView", action: ActionWrite, advertise: true, idempotent: true, jsonBody: true, handle: (*Server).replaceView},
		{method: "DELETE", path: view, op: "dropView", action: ActionWrite, advertise: true, idempotent: true, handle: (*Server).dropView},
		{method: "POST", path: "/v1/{prefix}/views/rename", op: "renameView", action: ActionWrite, advertise: true, idempotent: true, jsonBody: true, handle: (*Server).renameView},

		{method: "GET", path: "", op: "listTableBuckets", admin: true, handle: (*Server).listTableBuckets},
		{method: "PUT", path: "/{name}", op: "createTableBucket", admin: true, handle: (*Server).createTableBucket},
		{method: "DELETE", path: "/{name}", op: "deleteTableBucket", admin: true, handle: (*Server).deleteTableBucket},
	}
	rt = append(rt, maintenanceRoutes(table)...)
	rt = append(rt, cutoverRoutes()...)
	for _, r := range rt {
		r.segs, _ = splitPath(strings.TrimPrefix(r.path, "/"))
	}
	return rt
}

// endpoints is the config's endpoints list: "<VERB> <path>" of every
// advertised route.
func endpoints(rt []*route) []string {
	var out []string
	for _, r := range rt {
		if r.advertise {
			out = append(out, r.method+" "+r.path)
		}
	}
	return out
}

// resolve finds the route of req, its signing service and its path
// parameters. The path is split while still escaped.
func (s *Server) resolve(req *request) error {
	p := req.URL.EscapedPath()
	var rest string
	admin := false
	switch {
	case strings.HasPrefix(p, Base+"/v1/"):
		req.service, rest = "s3", strings.TrimPrefix(p, Base)
	case strings.HasPrefix(p, AliasBase+"/v1/"):
		req.service, rest = "s3tables", strings.TrimPrefix(p, AliasBase)
	case p == AdminPath || strings.HasPrefix(p, AdminPath+"/"):
		req.service, rest, admin = "s3", strings.TrimPrefix(p, AdminPath), true
	default:
		return apiErr(http.StatusNotFound, "NotFoundException", "no Iceberg REST route at %s", p)
	}
	segs, err := splitPath(strings.TrimPrefix(rest, "/"))
	if err != nil {
		return err
	}
	pathMatched := false
	for _, r := range s.routes {
		if r.admin != admin || !matchSegs(r.segs, segs) {
			continue
		}
		if r.method != req.Method {
			pathMatched = true
			continue
		}
		req.route, req.op, req.segs = r, r.op, segs
		for i, ps := range r.segs {
			if ps == "{prefix}" {
				req.warehouse = segs[i]
			}
		}
		if r.op == "getConfig" {
			req.warehouse = warehouseName(req.URL.Query().Get("warehouse"))
		}
		return nil
	}
	if pathMatched {
		return apiErr(http.StatusMethodNotAllowed, "MethodNotAllowedException", "%s is not allowed on %s", req.Method, p)
	}
	return apiErr(http.StatusNotFound, "NotFoundException", "no Iceberg REST route at %s", p)
}

// matchSegs matches decoded path segments against a pattern whose
// {name} segments match any non-empty segment.
func matchSegs(pattern, segs []string) bool {
	if len(pattern) != len(segs) {
		return false
	}
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") {
			if segs[i] == "" {
				return false
			}
		} else if p != segs[i] {
			return false
		}
	}
	return true
}

// param returns the path parameter name ("namespace", "table", ...).
func (req *request) param(name string) string {
	for i, p := range req.route.segs {
		if p == "{"+name+"}" {
			return req.segs[i]
		}
	}
	return ""
}

// warehouseName accepts a table bucket name or an S3 Tables-style ARN
// (arn:aws:s3tables:region:account:bucket/NAME).
func warehouseName(w string) string {
	if strings.HasPrefix(w, "arn:") {
		if _, name, ok := strings.Cut(w, ":bucket/"); ok {
			return name
		}
	}
	return w
}
