package iceberg

import (
	"net/http"

	"github.com/cairnstore/cairn/catalog"
)

// The maintenance operations: put and get a table's and a table bucket's
// configuration, and a table's job status (conversions in
// s3tables_maintenance.go).

// putMaintenance decodes a put's body and configures job {type} of the
// table id (nil: of the table bucket), one of allowed.
func (t *s3Tables) putMaintenance(req *request, id *catalog.Ident, allowed []catalog.JobKind, instead string) (reply, error) {
	k, err := s3tJobKind(req.param("type"), allowed, instead)
	if err != nil {
		return reply{}, err
	}
	var in s3tPutMaintenanceRequest
	if err := s3tDecode(req.body, &in); err != nil {
		return reply{}, err
	}
	if in.Value == nil {
		return reply{}, badRequest(`value is required: {"value": {"status": "enabled", "settings": {"%s": {...}}}}`, k)
	}
	c, err := s3tJobConfig(k, *in.Value)
	if err != nil {
		return reply{}, err
	}
	if err := t.s.opt.Catalog.SetMaintenance(req.Context(), req.warehouse, id, k, c); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

func (t *s3Tables) putTableMaintenance(req *request) (reply, error) {
	id, err := pathTable(req)
	if err != nil {
		return reply{}, err
	}
	return t.putMaintenance(req, &id, s3tTableJobs(), "PutTableBucketMaintenanceConfiguration, as it is configured per table bucket")
}

func (t *s3Tables) putBucketMaintenance(req *request) (reply, error) {
	return t.putMaintenance(req, nil, s3tBucketJobs(), "PutTableMaintenanceConfiguration, as it is configured per table")
}

// tableMaintenance loads the path's table (for its ARN) and its
// maintenance.
func (t *s3Tables) tableMaintenance(req *request) (s3tLoaded, catalog.Maintenance, error) {
	id, err := pathTable(req)
	if err != nil {
		return s3tLoaded{}, catalog.Maintenance{}, err
	}
	l, err := t.load(req, id)
	if err != nil {
		return s3tLoaded{}, catalog.Maintenance{}, err
	}
	m, err := t.s.opt.Catalog.Maintenance(req.Context(), req.warehouse, &id)
	return l, m, err
}

func (t *s3Tables) getTableMaintenance(req *request) (reply, error) {
	l, m, err := t.tableMaintenance(req)
	if err != nil {
		return reply{}, err
	}
	out := s3tTableMaintenanceResponse{TableARN: t.tableARN(l.wh, l.tableID()), Configuration: map[string]s3tMaintenanceValue{}}
	for _, k := range s3tTableJobs() {
		out.Configuration[string(k)] = s3tMaintenanceValueOf(k, m.Effective[k])
	}
	return reply{status: http.StatusOK, body: out}, nil
}

func (t *s3Tables) getBucketMaintenance(req *request) (reply, error) {
	m, err := t.s.opt.Catalog.Maintenance(req.Context(), req.warehouse, nil)
	if err != nil {
		return reply{}, err
	}
	out := s3tBucketMaintenanceResponse{TableBucketARN: t.bucketARN(req.warehouse), Configuration: map[string]s3tMaintenanceValue{}}
	for _, k := range s3tBucketJobs() {
		out.Configuration[string(k)] = s3tMaintenanceValueOf(k, m.Effective[k])
	}
	return reply{status: http.StatusOK, body: out}, nil
}

func (t *s3Tables) getJobStatus(req *request) (reply, error) {
	l, m, err := t.tableMaintenance(req)
	if err != nil {
		return reply{}, err
	}
	out := s3tJobStatusResponse{TableARN: t.tableARN(l.wh, l.tableID()), Status: map[string]s3tJobStatus{}}
	for _, k := range catalog.JobKinds() {
		out.Status[string(k)] = s3tJobStatusOf(m.Status[k])
	}
	return reply{status: http.StatusOK, body: out}, nil
}
