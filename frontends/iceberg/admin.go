package iceberg

import (
	"fmt"
	"net/http"
)

// The table-bucket admin API, for `cairn admin table-bucket`; signed like
// any request and for the root user only:
//
//	GET    /_cairn/admin/v1/table-buckets       -> {"table_buckets":[{name, created}]}
//	PUT    /_cairn/admin/v1/table-buckets/NAME  -> {name, created}
//	DELETE /_cairn/admin/v1/table-buckets/NAME  -> 204
//
// Errors use the Iceberg error JSON.

func requireRoot(req *request) error {
	if !req.principal.Root {
		return fmt.Errorf("%w: the table-bucket admin API is for the root user only", ErrForbidden)
	}
	return nil
}

func (s *Server) listTableBuckets(req *request) (reply, error) {
	if err := requireRoot(req); err != nil {
		return reply{}, err
	}
	list, err := s.opt.Catalog.ListWarehouses(req.Context())
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: tableBucketsResponse{TableBuckets: nonNil(list)}}, nil
}

func (s *Server) createTableBucket(req *request) (reply, error) {
	if err := requireRoot(req); err != nil {
		return reply{}, err
	}
	req.warehouse = req.param("name")
	wh, err := s.opt.Catalog.CreateWarehouse(req.Context(), req.warehouse)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: wh}, nil
}

func (s *Server) deleteTableBucket(req *request) (reply, error) {
	if err := requireRoot(req); err != nil {
		return reply{}, err
	}
	req.warehouse = req.param("name")
	if err := s.opt.Catalog.DeleteWarehouse(req.Context(), req.warehouse); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}
