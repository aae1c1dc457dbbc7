package iceberg

import (
	"context"
	"fmt"
	"net/http"

	"github.com/cairnstore/cairn/catalog"
)

// Table maintenance, a Cairn extension of the REST catalog (S3 Tables'
// control plane has the same over its own API): the jobs of a warehouse
// (every table without settings of its own) or of a table, their last
// outcomes, and a run on demand.
//
//	GET  /v1/{prefix}/maintenance                                 the warehouse's settings
//	PUT  /v1/{prefix}/maintenance/{job}                           set one job's
//	GET  /v1/{prefix}/namespaces/{ns}/tables/{table}/maintenance  settings, effective settings, job status
//	PUT  /v1/{prefix}/namespaces/{ns}/tables/{table}/maintenance/{job}
//	POST /v1/{prefix}/namespaces/{ns}/tables/{table}/maintenance/run
//
// {job} is icebergCompaction, icebergSnapshotManagement or
// icebergUnreferencedFileRemoval; a PUT body is the job's settings, as
// GET shows them ({"enabled": true, "min-snapshots-to-keep": 10,
// "max-snapshot-age": "120h"}).

// Maintainer runs a table's maintenance now (catalog/maintain's Runner,
// given by cmd/).
type Maintainer interface {
	Run(ctx context.Context, wh string, id catalog.Ident) (catalog.Maintenance, error)
}

func maintenanceRoutes(table string) []*route {
	const wh = "/v1/{prefix}/maintenance"
	return []*route{
		{method: "GET", path: wh, op: "getWarehouseMaintenance", action: ActionRead, handle: (*Server).getMaintenance},
		{method: "PUT", path: wh + "/{job}", op: "setWarehouseMaintenance", action: ActionWrite, jsonBody: true, handle: (*Server).setMaintenance},
		{method: "GET", path: table + "/maintenance", op: "getTableMaintenance", action: ActionRead, handle: (*Server).getMaintenance},
		{method: "PUT", path: table + "/maintenance/{job}", op: "setTableMaintenance", action: ActionWrite, jsonBody: true, handle: (*Server).setMaintenance},
		{method: "POST", path: table + "/maintenance/run", op: "runTableMaintenance", action: ActionWrite, handle: (*Server).runMaintenance},
	}
}

// maintenanceTarget is the route's table, or nil for the warehouse's
// routes.
func (s *Server) maintenanceTarget(req *request) (*catalog.Ident, error) {
	if req.param("table") == "" {
		return nil, nil
	}
	id, err := s.ident(req, "table")
	if err != nil {
		return nil, err
	}
	return &id, nil
}

func (s *Server) getMaintenance(req *request) (reply, error) {
	id, err := s.maintenanceTarget(req)
	if err != nil {
		return reply{}, err
	}
	m, err := s.opt.Catalog.Maintenance(req.Context(), req.warehouse, id)
	if err != nil {
		return reply{}, maintenanceErr(err, id)
	}
	return reply{status: http.StatusOK, body: m}, nil
}

func (s *Server) setMaintenance(req *request) (reply, error) {
	id, err := s.maintenanceTarget(req)
	if err != nil {
		return reply{}, err
	}
	kind, err := catalog.ParseJobKind(req.param("job"))
	if err != nil {
		return reply{}, err
	}
	var cfg catalog.JobConfig
	if err := decodeBody(req, &cfg); err != nil {
		return reply{}, err
	}
	if err := s.opt.Catalog.SetMaintenance(req.Context(), req.warehouse, id, kind, cfg); err != nil {
		return reply{}, maintenanceErr(err, id)
	}
	return s.getMaintenance(req)
}

func (s *Server) runMaintenance(req *request) (reply, error) {
	if s.opt.Maintainer == nil {
		return reply{}, fmt.Errorf("%w: this server runs no table maintenance", catalog.ErrUnsupported)
	}
	id, err := s.ident(req, "table")
	if err != nil {
		return reply{}, err
	}
	m, err := s.opt.Maintainer.Run(req.Context(), req.warehouse, id)
	if err != nil {
		return reply{}, maintenanceErr(err, &id)
	}
	return reply{status: http.StatusOK, body: m}, nil
}

// maintenanceErr names the table a missing table or namespace error is
// about.
func maintenanceErr(err error, id *catalog.Ident) error {
	if id == nil {
		return err
	}
	return missingParent(err, catalog.ErrNoSuchTable, *id)
}
