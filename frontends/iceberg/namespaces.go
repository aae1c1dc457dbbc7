package iceberg

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cairnstore/cairn/catalog"
)

// decodeBody decodes the JSON body into v (400 when it does not fit).
func decodeBody(req *request, v any) error {
	if err := json.Unmarshal(req.body, v); err != nil {
		return badRequest("malformed %s request: %v", req.op, err)
	}
	return nil
}

// namespace decodes the {namespace} path parameter.
func (s *Server) namespace(req *request) ([]string, error) {
	return decodeNamespace(req.param("namespace"), s.opt.NamespaceSeparator)
}

// ident returns the namespace and the {table} or {view} parameter.
func (s *Server) ident(req *request, kind string) (catalog.Ident, error) {
	ns, err := s.namespace(req)
	if err != nil {
		return catalog.Ident{}, err
	}
	name := req.param(kind)
	if err := checkName(name); err != nil {
		return catalog.Ident{}, fmt.Errorf("%s name: %w", kind, err)
	}
	return catalog.Ident{Namespace: ns, Name: name}, nil
}

// paging reads pageToken and pageSize. Without either, everything is
// listed (size 0); a pageToken alone, even empty, asks for paging with
// the default page size.
func paging(req *request) (token string, size int, err error) {
	q := req.URL.Query()
	token = q.Get("pageToken")
	if v := q.Get("pageSize"); v != "" {
		size, err = strconv.Atoi(v)
		if err != nil || size < 1 {
			return "", 0, badRequest("pageSize must be a positive integer, not %q", v)
		}
		return token, size, nil
	}
	if q.Has("pageToken") {
		return token, DefaultPageSize, nil
	}
	return token, 0, nil
}

func (s *Server) listNamespaces(req *request) (reply, error) {
	var parent []string
	if p := req.URL.Query().Get("parent"); p != "" {
		var err error
		if parent, err = decodeNamespace(p, s.opt.NamespaceSeparator); err != nil {
			return reply{}, err
		}
	}
	token, size, err := paging(req)
	if err != nil {
		return reply{}, err
	}
	list, next, err := s.opt.Catalog.ListNamespaces(req.Context(), req.warehouse, parent, token, size)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: listNamespacesResponse{NextPageToken: next, Namespaces: nonNil(list)}}, nil
}

func (s *Server) createNamespace(req *request) (reply, error) {
	var body createNamespaceRequest
	if err := decodeBody(req, &body); err != nil {
		return reply{}, err
	}
	if len(body.Namespace) == 0 {
		return reply{}, badRequest("namespace must name at least one level")
	}
	for i, l := range body.Namespace {
		if err := checkName(l); err != nil {
			return reply{}, fmt.Errorf("namespace level %d: %w", i, err)
		}
	}
	if body.Properties == nil {
		body.Properties = map[string]string{}
	}
	if err := s.opt.Catalog.CreateNamespace(req.Context(), req.warehouse, body.Namespace, body.Properties); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: namespaceResponse(body)}, nil
}

func (s *Server) loadNamespace(req *request) (reply, error) {
	ns, err := s.namespace(req)
	if err != nil {
		return reply{}, err
	}
	props, err := s.opt.Catalog.LoadNamespace(req.Context(), req.warehouse, ns)
	if err != nil {
		return reply{}, err
	}
	if props == nil {
		props = map[string]string{}
	}
	return reply{status: http.StatusOK, body: namespaceResponse{Namespace: ns, Properties: props}}, nil
}

func (s *Server) namespaceExists(req *request) (reply, error) {
	ns, err := s.namespace(req)
	if err != nil {
		return reply{}, err
	}
	ok, err := s.opt.Catalog.NamespaceExists(req.Context(), req.warehouse, ns)
	if err != nil {
		return reply{}, err
	}
	if !ok {
		return reply{}, fmt.Errorf("%w: %q", catalog.ErrNoSuchNamespace, encodeNamespace(ns))
	}
	return reply{status: http.StatusNoContent}, nil
}

func (s *Server) dropNamespace(req *request) (reply, error) {
	ns, err := s.namespace(req)
	if err != nil {
		return reply{}, err
	}
	if err := s.opt.Catalog.DropNamespace(req.Context(), req.warehouse, ns); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

func (s *Server) updateProperties(req *request) (reply, error) {
	ns, err := s.namespace(req)
	if err != nil {
		return reply{}, err
	}
	var body updatePropertiesRequest
	if err := decodeBody(req, &body); err != nil {
		return reply{}, err
	}
	updated, removed, missing, err := s.opt.Catalog.UpdateNamespaceProperties(req.Context(), req.warehouse, ns, body.Removals, body.Updates)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: updatePropertiesResponse{
		Updated: nonNil(updated), Removed: nonNil(removed), Missing: nonNil(missing),
	}}, nil
}
