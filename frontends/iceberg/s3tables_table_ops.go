package iceberg

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/cairnstore/cairn/catalog"
)

// The operations on one table beside loading it: delete, rename, its
// metadata location. A versionToken, where the operation takes one, is
// checked against the table's current one before the catalog acts: a
// stale one answers ConflictException. For delete and rename the check
// and the act are two steps (the catalog drops and renames
// unconditionally): a commit landing between them goes unnoticed, and the
// table is dropped or renamed as it then is; nothing is lost by a rename,
// and a drop keeps the files. UpdateTableMetadataLocation is one
// compare-and-swap in the catalog (SwapMetadataLocation).

// checkVersion answers ConflictException when token is set and is not
// the table's current versionToken.
func (t *s3Tables) checkVersion(req *request, id catalog.Ident, token string) error {
	if token == "" {
		return nil
	}
	l, err := t.load(req, id)
	if err != nil {
		return err
	}
	if l.res.ETag != token {
		return apiErr(http.StatusConflict, "ConflictException",
			"versionToken %q is not the current one of table %s: it changed since; get the table again (GetTable) and retry with its versionToken", clipQuoted(token), id)
	}
	return nil
}

func (t *s3Tables) deleteTable(req *request) (reply, error) {
	id, err := pathTable(req)
	if err != nil {
		return reply{}, err
	}
	if err := t.checkVersion(req, id, req.URL.Query().Get("versionToken")); err != nil {
		return reply{}, err
	}
	if err := t.s.opt.Catalog.DropTable(req.Context(), req.warehouse, id, false); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

func (t *s3Tables) renameTable(req *request) (reply, error) {
	from, err := pathTable(req)
	if err != nil {
		return reply{}, err
	}
	var in s3tRenameRequest
	if err := s3tDecode(req.body, &in); err != nil {
		return reply{}, err
	}
	if in.NewName == "" && in.NewNamespaceName == "" {
		return reply{}, badRequest("give newName, newNamespaceName or both")
	}
	to := catalog.Ident{Namespace: from.Namespace, Name: from.Name}
	if in.NewNamespaceName != "" {
		if to.Namespace, err = oneLevel("newNamespaceName", in.NewNamespaceName); err != nil {
			return reply{}, err
		}
	}
	if in.NewName != "" {
		if err := checkName(in.NewName); err != nil {
			return reply{}, badRequest("newName %q: give a non-empty name without control characters", clipQuoted(in.NewName))
		}
		to.Name = in.NewName
	}
	if err := t.checkVersion(req, from, in.VersionToken); err != nil {
		return reply{}, err
	}
	if err := t.s.opt.Catalog.RenameTable(req.Context(), req.warehouse, from, to); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

func (t *s3Tables) getMetadataLocation(req *request) (reply, error) {
	id, err := pathTable(req)
	if err != nil {
		return reply{}, err
	}
	l, err := t.load(req, id)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: s3tMetadataLocationResponse{
		VersionToken: l.res.ETag, MetadataLocation: l.res.MetadataLocation, WarehouseLocation: l.info.Location}}, nil
}

// updateMetadataLocation points the table at a metadata file the engine
// wrote, if versionToken is still the table's.
func (t *s3Tables) updateMetadataLocation(req *request) (reply, error) {
	id, err := pathTable(req)
	if err != nil {
		return reply{}, err
	}
	var in s3tUpdateMetadataLocationRequest
	if err := s3tDecode(req.body, &in); err != nil {
		return reply{}, err
	}
	if in.VersionToken == "" || in.MetadataLocation == "" {
		return reply{}, badRequest("give versionToken (GetTable's or GetTableMetadataLocation's) and metadataLocation (the new metadata file, s3://BUCKET/...)")
	}
	res, err := t.s.opt.Catalog.SwapMetadataLocation(req.Context(), req.warehouse, id, in.VersionToken, in.MetadataLocation)
	if err != nil {
		return reply{}, missingParent(err, catalog.ErrNoSuchTable, id)
	}
	l := s3tLoaded{wh: req.warehouse, id: id, res: res}
	if err := json.Unmarshal(res.Metadata, &l.info); err != nil {
		return reply{}, fmt.Errorf("table %s: reading its metadata: %w", id, err)
	}
	return reply{status: http.StatusOK, body: s3tUpdateMetadataLocationResponse{
		Name: id.Name, TableARN: t.tableARN(l.wh, l.tableID()), Namespace: id.Namespace,
		VersionToken: res.ETag, MetadataLocation: res.MetadataLocation}}, nil
}
