package iceberg

import (
	"fmt"
	"net/http"

	"github.com/cairnstore/cairn/catalog"
)

func (s *Server) listViews(req *request) (reply, error) {
	return s.listIdents(req, s.opt.Catalog.ListViews)
}

func (s *Server) createView(req *request) (reply, error) {
	ns, err := s.namespace(req)
	if err != nil {
		return reply{}, err
	}
	res, err := s.opt.Catalog.CreateView(req.Context(), req.warehouse, ns, req.body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: res, header: etag(res.ETag)}, nil
}

func (s *Server) loadView(req *request) (reply, error) {
	id, err := s.ident(req, "view")
	if err != nil {
		return reply{}, err
	}
	res, err := s.opt.Catalog.LoadView(req.Context(), req.warehouse, id)
	if err != nil {
		return reply{}, missingParent(err, catalog.ErrNoSuchView, id)
	}
	return reply{status: http.StatusOK, body: res, header: etag(res.ETag)}, nil
}

func (s *Server) viewExists(req *request) (reply, error) {
	id, err := s.ident(req, "view")
	if err != nil {
		return reply{}, err
	}
	ok, err := s.opt.Catalog.ViewExists(req.Context(), req.warehouse, id)
	if err != nil {
		return reply{}, err
	}
	if !ok {
		return reply{}, fmt.Errorf("%w: %s", catalog.ErrNoSuchView, id)
	}
	return reply{status: http.StatusNoContent}, nil
}

func (s *Server) replaceView(req *request) (reply, error) {
	id, err := s.ident(req, "view")
	if err != nil {
		return reply{}, err
	}
	res, err := s.opt.Catalog.ReplaceView(req.Context(), req.warehouse, id, req.body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: res, header: etag(res.ETag)}, nil
}

func (s *Server) dropView(req *request) (reply, error) {
	id, err := s.ident(req, "view")
	if err != nil {
		return reply{}, err
	}
	if err := s.opt.Catalog.DropView(req.Context(), req.warehouse, id); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

func (s *Server) renameView(req *request) (reply, error) {
	from, to, err := decodeRename(req)
	if err != nil {
		return reply{}, err
	}
	if err := s.opt.Catalog.RenameView(req.Context(), req.warehouse, from, to); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}
