package iceberg

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/catalog"
)

func (s *Server) listTables(req *request) (reply, error) {
	return s.listIdents(req, s.opt.Catalog.ListTables)
}

// listIdents serves listTables and listViews.
func (s *Server) listIdents(req *request, list func(ctx context.Context, wh string, ns []string, token string, size int) ([]catalog.Ident, string, error)) (reply, error) {
	ns, err := s.namespace(req)
	if err != nil {
		return reply{}, err
	}
	token, size, err := paging(req)
	if err != nil {
		return reply{}, err
	}
	ids, next, err := list(req.Context(), req.warehouse, ns, token, size)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: listIdentifiersResponse{NextPageToken: next, Identifiers: nonNil(ids)}}, nil
}

func (s *Server) createTable(req *request) (reply, error) {
	ns, err := s.namespace(req)
	if err != nil {
		return reply{}, err
	}
	res, err := s.opt.Catalog.CreateTable(req.Context(), req.warehouse, ns, req.body)
	if err != nil {
		return reply{}, err
	}
	if r, ok, err := s.delegate(req, &res); ok || err != nil {
		return r, err
	}
	return reply{status: http.StatusOK, body: res, header: etag(res.ETag)}, nil
}

func (s *Server) loadTable(req *request) (reply, error) {
	id, err := s.ident(req, "table")
	if err != nil {
		return reply{}, err
	}
	snapshots := req.URL.Query().Get("snapshots")
	if snapshots != "" && snapshots != "all" && snapshots != "refs" {
		return reply{}, badRequest("snapshots must be all or refs, not %q", snapshots)
	}
	res, err := s.opt.Catalog.LoadTable(req.Context(), req.warehouse, id, snapshots)
	if err != nil {
		return reply{}, missingParent(err, catalog.ErrNoSuchTable, id)
	}
	// Credentials are fresh at every load: no 304, no caching.
	if r, ok, err := s.delegate(req, &res); ok || err != nil {
		return r, err
	}
	if res.ETag != "" && req.Header.Get("If-None-Match") == quoted(res.ETag) {
		return reply{status: http.StatusNotModified, header: etag(res.ETag)}, nil
	}
	return reply{status: http.StatusOK, body: res, header: etag(res.ETag)}, nil
}

// missingParent answers a load of id whose namespace does not exist as
// the load of a missing table or view (notFound), as Iceberg's own
// catalogs do and as the REST spec lists for loadTable and loadView.
// Iceberg's Java clients rely on it: a name such as db.orders.snapshots
// is first loaded as table snapshots in namespace db.orders, and only a
// NoSuchTableException makes them load it as the metadata table of
// db.orders (a NoSuchNamespaceException ends the query).
func missingParent(err, notFound error, id catalog.Ident) error {
	if errors.Is(err, catalog.ErrNoSuchNamespace) {
		return fmt.Errorf("%w: %s (no namespace %s)", notFound, id, strings.Join(id.Namespace, "."))
	}
	return err
}

func (s *Server) tableExists(req *request) (reply, error) {
	id, err := s.ident(req, "table")
	if err != nil {
		return reply{}, err
	}
	ok, err := s.opt.Catalog.TableExists(req.Context(), req.warehouse, id)
	if err != nil {
		return reply{}, err
	}
	if !ok {
		return reply{}, fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, id)
	}
	return reply{status: http.StatusNoContent}, nil
}

func (s *Server) updateTable(req *request) (reply, error) {
	id, err := s.ident(req, "table")
	if err != nil {
		return reply{}, err
	}
	res, err := s.opt.Catalog.CommitTable(req.Context(), req.warehouse, id, req.body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: res, header: etag(res.ETag)}, nil
}

func (s *Server) dropTable(req *request) (reply, error) {
	id, err := s.ident(req, "table")
	if err != nil {
		return reply{}, err
	}
	purge := false
	if v := req.URL.Query().Get("purgeRequested"); v != "" {
		if purge, err = strconv.ParseBool(v); err != nil {
			return reply{}, badRequest("purgeRequested must be true or false, not %q", v)
		}
	}
	if purge {
		if err := s.authorize(req, ActionAdmin); err != nil {
			return reply{}, err
		}
	}
	if err := s.opt.Catalog.DropTable(req.Context(), req.warehouse, id, purge); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

func (s *Server) registerTable(req *request) (reply, error) {
	ns, err := s.namespace(req)
	if err != nil {
		return reply{}, err
	}
	var body registerTableRequest
	if err := decodeBody(req, &body); err != nil {
		return reply{}, err
	}
	if err := checkName(body.Name); err != nil {
		return reply{}, fmt.Errorf("table name: %w", err)
	}
	if body.MetadataLocation == "" {
		return reply{}, badRequest("metadata-location is required")
	}
	res, err := s.opt.Catalog.RegisterTable(req.Context(), req.warehouse, ns, body.Name, body.MetadataLocation, body.Overwrite)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: res, header: etag(res.ETag)}, nil
}

func (s *Server) reportMetrics(req *request) (reply, error) {
	id, err := s.ident(req, "table")
	if err != nil {
		return reply{}, err
	}
	if err := s.opt.Catalog.ReportMetrics(req.Context(), req.warehouse, id, req.body); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

func (s *Server) renameTable(req *request) (reply, error) {
	from, to, err := decodeRename(req)
	if err != nil {
		return reply{}, err
	}
	if err := s.opt.Catalog.RenameTable(req.Context(), req.warehouse, from, to); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

// decodeRename decodes and checks a RenameTableRequest.
func decodeRename(req *request) (from, to catalog.Ident, err error) {
	var body renameRequest
	if err := decodeBody(req, &body); err != nil {
		return from, to, err
	}
	if body.Source == nil || body.Destination == nil {
		return from, to, badRequest("source and destination are required")
	}
	for _, id := range []*catalog.Ident{body.Source, body.Destination} {
		if err := checkIdent(*id); err != nil {
			return from, to, err
		}
	}
	return *body.Source, *body.Destination, nil
}

// checkIdent validates a TableIdentifier from a body.
func checkIdent(id catalog.Ident) error {
	if len(id.Namespace) == 0 {
		return badRequest("identifier %q has no namespace", id.Name)
	}
	for _, l := range append(append([]string(nil), id.Namespace...), id.Name) {
		if err := checkName(l); err != nil {
			return fmt.Errorf("identifier %s: %w", id, err)
		}
	}
	return nil
}

func (s *Server) commitTransaction(req *request) (reply, error) {
	if err := s.opt.Catalog.CommitTransaction(req.Context(), req.warehouse, req.body); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

// etag returns the ETag header of a metadata location tag.
func etag(tag string) http.Header {
	if tag == "" {
		return nil
	}
	return http.Header{"Etag": {quoted(tag)}}
}

func quoted(tag string) string { return `"` + tag + `"` }
