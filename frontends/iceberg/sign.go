package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairnstore/cairn/catalog"
)

// Remote signing (the Iceberg S3 signer protocol): a client that sends
// X-Iceberg-Access-Delegation: remote-signing with createTable or
// loadTable gets s3.remote-signing-enabled and the signer's address in
// the table's config; it then POSTs each S3 request it would make
// (method, uri, headers) to .../tables/{table}/sign and gets the headers
// that sign it. Only requests inside the table's location are signed
// (read-only ones unless the caller may write the warehouse); the
// RequestSigner (cmd/: temporary credentials of the S3 face's users
// scoped to the location, as vended ones are) signs them.

// RequestSigner signs S3 requests for a table's data.
type RequestSigner interface {
	// SignRequest returns the headers that sign an S3 request (method,
	// u, headers) for p with credentials limited to the objects of bucket
	// under prefix (read-only unless write), region as the client asks.
	SignRequest(ctx context.Context, p Principal, bucket, prefix string, write bool, region, method string, u *url.URL, headers http.Header) (http.Header, error)
}

type signRequest struct {
	Region  string              `json:"region"`
	URI     string              `json:"uri"`
	Method  string              `json:"method"`
	Headers map[string][]string `json:"headers"`
}

type signResponse struct {
	URI     string              `json:"uri"`
	Headers map[string][]string `json:"headers"`
}

// signingConfig is the table config that turns remote signing on, with
// the signer's address (the table-scoped path of the current spec, also
// where Iceberg's older clients send s3.signer.endpoint).
func signingConfig(req *request, res *catalog.TableResult, id catalog.Ident) {
	if res.Config == nil {
		res.Config = map[string]string{}
	}
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	base := Base
	if strings.HasPrefix(req.URL.Path, AliasBase+"/") {
		base = AliasBase
	}
	res.Config["s3.remote-signing-enabled"] = "true"
	res.Config["s3.signer.uri"] = scheme + "://" + req.Host + base
	res.Config["s3.signer.endpoint"] = "v1/" + url.PathEscape(req.warehouse) + "/namespaces/" +
		url.PathEscape(strings.Join(id.Namespace, "\x1f")) + "/tables/" + url.PathEscape(id.Name) + "/sign"
}

// signTable is POST .../tables/{table}/sign.
func (s *Server) signTable(req *request) (reply, error) {
	if s.opt.Signer == nil {
		return reply{}, fmt.Errorf("%w: this server signs no requests", catalog.ErrUnsupported)
	}
	id, err := s.ident(req, "table")
	if err != nil {
		return reply{}, err
	}
	sr, u, method, err := parseSignRequest(req.body)
	if err != nil {
		return reply{}, err
	}
	res, err := s.opt.Catalog.LoadTable(req.Context(), req.warehouse, id, "refs")
	if err != nil {
		return reply{}, missingParent(err, catalog.ErrNoSuchTable, id)
	}
	bucket, prefix, err := tableLocation(res)
	if err != nil {
		return reply{}, err
	}
	inside := insideLocation(u, method, bucket, prefix)
	if !inside {
		return reply{}, fmt.Errorf("%w: %s %s is outside the table's location s3://%s/%s; only requests for the table's files are signed", ErrForbidden, method, sr.URI, bucket, prefix)
	}
	write := s.opt.Authorizer == nil || s.opt.Authorizer.Authorize(req.principal, ActionWrite, req.warehouse)
	if !write && method != http.MethodGet && method != http.MethodHead {
		return reply{}, fmt.Errorf("%w: the caller may only read the table's files; %s is not signed", ErrForbidden, method)
	}
	h, err := s.opt.Signer.SignRequest(req.Context(), req.principal, bucket, prefix, write, sr.Region, method, u, http.Header(sr.Headers))
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: signResponse{URI: sr.URI, Headers: h}, header: noStore(nil)}, nil
}

// parseSignRequest decodes a sign request: an absolute URI and an S3
// method (upper-cased).
func parseSignRequest(body []byte) (signRequest, *url.URL, string, error) {
	var sr signRequest
	if err := json.Unmarshal(body, &sr); err != nil {
		return signRequest{}, nil, "", badRequest("sign request: %v", err)
	}
	u, err := url.Parse(sr.URI)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return signRequest{}, nil, "", badRequest("sign request: uri %q is not an absolute http(s) URL", sr.URI)
	}
	method := strings.ToUpper(sr.Method)
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete:
	default:
		return signRequest{}, nil, "", badRequest("sign request: method %q is not an S3 one", sr.Method)
	}
	return sr, u, method, nil
}

// insideLocation says whether an S3 request (path-style, as the catalog's
// config asks: /bucket/key, or a list /bucket?prefix=...) is for the
// objects of bucket under prefix.
func insideLocation(u *url.URL, method, bucket, prefix string) bool {
	b, key, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if b != bucket {
		return false
	}
	if key == "" {
		return method == http.MethodGet && strings.HasPrefix(u.Query().Get("prefix"), prefix)
	}
	return strings.HasPrefix(key, prefix)
}

// tableLocation splits a table's location into its bucket and key prefix
// (ending in "/").
func tableLocation(res catalog.TableResult) (bucket, prefix string, err error) {
	loc := res.Location()
	bucket, path, ok := strings.Cut(strings.TrimPrefix(loc, "s3://"), "/")
	if !strings.HasPrefix(loc, "s3://") || !ok || bucket == "" || strings.Trim(path, "/") == "" {
		return "", "", fmt.Errorf("%w: the table's location %q is not an s3:// path", catalog.ErrBadRequest, loc)
	}
	return bucket, strings.TrimSuffix(path, "/") + "/", nil
}

// resultIdent is the table a create or load answers for: the path's, or
// for a create the namespace's and the body's name.
func (s *Server) resultIdent(req *request, _ *catalog.TableResult) (catalog.Ident, error) {
	if req.param("table") != "" {
		return s.ident(req, "table")
	}
	ns, err := s.namespace(req)
	if err != nil {
		return catalog.Ident{}, err
	}
	var body struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(req.body, &body); err != nil || body.Name == "" {
		return catalog.Ident{}, badRequest("create request without a table name")
	}
	return catalog.Ident{Namespace: ns, Name: body.Name}, nil
}
