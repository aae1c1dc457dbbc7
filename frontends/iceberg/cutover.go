package iceberg

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/cairnstore/cairn/catalog"
)

// The catalog operations of a warehouse, beside the spec's routes, under
// both bases (/iceberg/v1 and /_iceberg/v1):
//
//	GET    /v1/{prefix}/catalog/migration   preflight          read
//	POST   /v1/{prefix}/catalog/migration   materialize        admin:MigrateTableCatalog
//	DELETE /v1/{prefix}/catalog/migration   cancel             admin:MigrateTableCatalog
//	GET    /v1/{prefix}/catalog/recovery    recovery dry run   read
//	POST   /v1/{prefix}/catalog/recovery    recovery           admin:MigrateTableCatalog
//	POST   /v1/{prefix}/catalog/backup      backup             admin:MigrateTableCatalog
//	POST   /v1/{prefix}/catalog/restore     restore            admin:MigrateTableCatalog
//	GET    /v1/{prefix}/catalog/status      status             read
//
// Migration is served by an object-backed server, backup and restore by a
// durable-strong one; the other mode answers 400 BadRequestException, as
// RustFS does. Answers are snake_case JSON (catalog/migration.go).

// Recovery runs a warehouse's commit recovery (*catalog.Service).
type Recovery interface {
	RecoverWarehouse(ctx context.Context, wh string, dryRun bool) (catalog.RecoveryReport, error)
}

// StatusReporter reports a warehouse's catalog status.
type StatusReporter interface {
	Status(ctx context.Context, wh string) (catalog.Status, error)
}

func cutoverRoutes() []*route {
	const c = "/v1/{prefix}/catalog"
	return []*route{
		{method: "GET", path: c + "/migration", op: "migrationPreflight", action: ActionRead, handle: (*Server).migrationPreflight},
		{method: "POST", path: c + "/migration", op: "migrationMaterialize", action: ActionMigrate, handle: (*Server).migrationMaterialize},
		{method: "DELETE", path: c + "/migration", op: "migrationCancel", action: ActionMigrate, handle: (*Server).migrationCancel},
		{method: "GET", path: c + "/recovery", op: "recoveryReport", action: ActionRead, handle: (*Server).recoveryReport},
		{method: "POST", path: c + "/recovery", op: "recoveryRun", action: ActionMigrate, handle: (*Server).recoveryRun},
		{method: "POST", path: c + "/backup", op: "catalogBackup", action: ActionMigrate, handle: (*Server).catalogBackup},
		{method: "POST", path: c + "/restore", op: "catalogRestore", action: ActionMigrate, jsonBody: true, handle: (*Server).catalogRestore},
		{method: "GET", path: c + "/status", op: "catalogStatus", action: ActionRead, handle: (*Server).catalogStatus},
	}
}

func (s *Server) cutover() (catalog.Cutover, error) {
	if s.opt.Cutover == nil {
		return nil, badRequest("catalog migration is served by an object-backed server; this one runs %s=%s", catalog.BackingConfigKey, catalog.BackingDurableStrong)
	}
	return s.opt.Cutover, nil
}

func ok(v any, err error) (reply, error) {
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: v}, nil
}

func (s *Server) migrationPreflight(req *request) (reply, error) {
	c, err := s.cutover()
	if err != nil {
		return reply{}, err
	}
	return ok(c.Preflight(req.Context(), req.warehouse))
}

func (s *Server) migrationMaterialize(req *request) (reply, error) {
	c, err := s.cutover()
	if err != nil {
		return reply{}, err
	}
	return ok(c.Materialize(req.Context(), req.warehouse))
}

func (s *Server) migrationCancel(req *request) (reply, error) {
	c, err := s.cutover()
	if err != nil {
		return reply{}, err
	}
	return ok(c.Cancel(req.Context(), req.warehouse))
}

func (s *Server) recovery() (Recovery, error) {
	if s.opt.Recovery == nil {
		return nil, apiErr(http.StatusNotImplemented, "UnsupportedOperationException", "catalog recovery is not configured")
	}
	return s.opt.Recovery, nil
}

func (s *Server) recoveryReport(req *request) (reply, error) {
	r, err := s.recovery()
	if err != nil {
		return reply{}, err
	}
	return ok(r.RecoverWarehouse(req.Context(), req.warehouse, true))
}

func (s *Server) recoveryRun(req *request) (reply, error) {
	r, err := s.recovery()
	if err != nil {
		return reply{}, err
	}
	return ok(r.RecoverWarehouse(req.Context(), req.warehouse, false))
}

func (s *Server) backups() (catalog.Backups, error) {
	if s.opt.Backups == nil {
		return nil, badRequest("catalog backup and restore are served by a durable-strong server; this one runs %s=%s", catalog.BackingConfigKey, catalog.BackingObject)
	}
	return s.opt.Backups, nil
}

func (s *Server) catalogBackup(req *request) (reply, error) {
	b, err := s.backups()
	if err != nil {
		return reply{}, err
	}
	return ok(b.Backup(req.Context(), req.warehouse))
}

func (s *Server) catalogRestore(req *request) (reply, error) {
	b, err := s.backups()
	if err != nil {
		return reply{}, err
	}
	var body catalog.RestoreRequest
	if err := decodeStrict(req, &body); err != nil {
		return reply{}, err
	}
	if body.BackupID == "" {
		return reply{}, badRequest("restore needs a backup-id")
	}
	return ok(b.Restore(req.Context(), req.warehouse, body))
}

func (s *Server) catalogStatus(req *request) (reply, error) {
	if s.opt.Status == nil {
		return reply{}, apiErr(http.StatusNotImplemented, "UnsupportedOperationException", "catalog status is not configured")
	}
	return ok(s.opt.Status.Status(req.Context(), req.warehouse))
}

// decodeStrict decodes the JSON body into v, refusing unknown fields and
// trailing data (400).
func decodeStrict(req *request, v any) error {
	dec := json.NewDecoder(bytes.NewReader(req.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("malformed %s request: %v", req.op, err)
	}
	if dec.More() {
		return badRequest("malformed %s request: trailing data", req.op)
	}
	return nil
}
