package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// createTableRequest is the spec's CreateTableRequest.
type createTableRequest struct {
	Name          string                        `json:"name"`
	Location      string                        `json:"location"`
	Schema        *iceberg.Schema               `json:"schema"`
	PartitionSpec *iceberg.UnboundPartitionSpec `json:"partition-spec"`
	WriteOrder    *table.UnboundSortOrder       `json:"write-order"`
	StageCreate   bool                          `json:"stage-create"`
	Properties    map[string]string             `json:"properties"`
}

// noSuch is the not-found error of a kind.
func noSuch(kind Kind) error {
	if kind == KindView {
		return ErrNoSuchView
	}
	return ErrNoSuchTable
}

// loadPointer reads the pointer record of a table or view. When it is
// absent the answer is ErrNoSuchNamespace if the namespace is missing
// too, else ErrNoSuchTable / ErrNoSuchView.
func (s *Service) loadPointer(ctx context.Context, wh string, kind Kind, id Ident) (pointerRec, string, error) {
	var p pointerRec
	if err := validIdent(id); err != nil {
		return p, "", err
	}
	if err := s.requireWarehouse(ctx, wh); err != nil {
		return p, "", err
	}
	ver, err := s.getJSON(ctx, wh, kind, identKey(id), &p)
	if errors.Is(err, ErrNotFound) {
		if nerr := s.requireNamespace(ctx, wh, id.Namespace); nerr != nil {
			return p, "", nerr
		}
		return p, "", fmt.Errorf("%w: %s", noSuch(kind), id)
	}
	return p, ver, err
}

// exists reports whether a table or view exists.
func (s *Service) exists(ctx context.Context, wh string, kind Kind, id Ident) (bool, error) {
	_, _, err := s.loadPointer(ctx, wh, kind, id)
	if errors.Is(err, ErrNoSuchTable) || errors.Is(err, ErrNoSuchView) || errors.Is(err, ErrNoSuchNamespace) {
		return false, nil
	}
	return err == nil, err
}

// requireFree answers ErrAlreadyExists when a table or a view is named id.
func (s *Service) requireFree(ctx context.Context, wh string, id Ident) error {
	for _, k := range []Kind{KindTable, KindView} {
		if _, err := s.b.Get(ctx, wh, k, identKey(id)); err == nil {
			return fmt.Errorf("%w: %s %s", ErrAlreadyExists, k, id)
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	return nil
}

// etag tags a metadata location.
func etag(loc string) string {
	h := sha256.Sum256([]byte(loc))
	return hex.EncodeToString(h[:12])
}

// tableResult builds a TableResult.
func (s *Service) tableResult(loc string, meta []byte) TableResult {
	return TableResult{MetadataLocation: loc, Metadata: meta, Config: s.fileIOConfig(), ETag: etag(loc)}
}

// CreateTable implements Catalog.
func (s *Service) CreateTable(ctx context.Context, wh string, ns []string, body []byte) (TableResult, error) {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return TableResult{}, err
	}
	defer release()
	var req createTableRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return TableResult{}, fmt.Errorf("%w: create table request: %w", ErrBadRequest, err)
	}
	id := Ident{Namespace: ns, Name: req.Name}
	if err := validIdent(id); err != nil {
		return TableResult{}, err
	}
	if req.Schema == nil {
		return TableResult{}, fmt.Errorf("%w: create table request without schema", ErrBadRequest)
	}
	loc, err := s.prepareCreate(ctx, wh, id, req.Location)
	if err != nil {
		return TableResult{}, err
	}
	var spec *iceberg.PartitionSpec
	if req.PartitionSpec != nil {
		spec = &req.PartitionSpec.PartitionSpec
	}
	order := table.UnsortedSortOrder
	if req.WriteOrder != nil {
		order = req.WriteOrder.SortOrder
	}
	md, err := buildNewMetadata(req.Schema, spec, order, loc, req.Properties)
	if err != nil {
		return TableResult{}, err
	}
	data, err := json.Marshal(md)
	if err != nil {
		return TableResult{}, fmt.Errorf("catalog: encode metadata: %w", err)
	}
	if req.StageCreate {
		return s.tableResult("", data), nil
	}
	metaLoc, err := s.publishNew(ctx, wh, KindTable, id, loc, data)
	if err != nil {
		return TableResult{}, err
	}
	s.indexLocation(ctx, wh, KindTable, id, "", loc)
	return s.tableResult(metaLoc, data), nil
}

// prepareCreate checks what a new table or view needs besides its own
// request: its namespace exists and its name is free in the shared
// identifier space. It returns its location: reqLoc, or the default one,
// which must lie in the warehouse.
func (s *Service) prepareCreate(ctx context.Context, wh string, id Ident, reqLoc string) (string, error) {
	if err := s.requireNamespace(ctx, wh, id.Namespace); err != nil {
		return "", err
	}
	if err := s.requireFree(ctx, wh, id); err != nil {
		return "", err
	}
	loc := strings.TrimRight(reqLoc, "/")
	if loc == "" {
		loc = defaultLocation(wh, id)
	}
	if _, err := objectKeyOf(wh, loc); err != nil {
		return "", err
	}
	return loc, nil
}

// publishNew writes the first metadata file of a new table or view and
// points its record at it; ErrAlreadyExists when the name was taken
// meanwhile. It returns the metadata file's location.
func (s *Service) publishNew(ctx context.Context, wh string, kind Kind, id Ident, loc string, data []byte) (string, error) {
	metaLoc := metadataFileLocation(loc, 0)
	if err := s.writeMetadata(ctx, wh, metaLoc, data); err != nil {
		return "", err
	}
	_, err := s.flip(ctx, wh, swap{kind: kind, id: id, next: pointerRec{MetadataLocation: metaLoc, Location: loc}})
	if errors.Is(err, errSwapConflict) {
		return "", fmt.Errorf("%w: %s %s", ErrAlreadyExists, kindNoun(kind), id)
	}
	return metaLoc, err
}

// kindNoun names a table or view record kind in messages.
func kindNoun(k Kind) string {
	if k == KindView {
		return "view"
	}
	return "table"
}

// buildNewMetadata builds a new table's metadata (fresh field ids).
func buildNewMetadata(sc *iceberg.Schema, spec *iceberg.PartitionSpec, order table.SortOrder, loc string, props map[string]string) (md table.Metadata, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: invalid table definition: %v", ErrBadRequest, r)
		}
	}()
	md, err = table.NewMetadataWithUUID(sc, spec, order, loc, iceberg.Properties(maps.Clone(props)), uuid.Nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return md, nil
}

// LoadTable implements Catalog.
func (s *Service) LoadTable(ctx context.Context, wh string, id Ident, snapshots string) (TableResult, error) {
	if snapshots != "" && snapshots != "all" && snapshots != "refs" {
		return TableResult{}, fmt.Errorf("%w: snapshots=%q (want all or refs)", ErrBadRequest, snapshots)
	}
	p, _, err := s.loadPointer(ctx, wh, KindTable, id)
	if err != nil {
		return TableResult{}, err
	}
	data, err := s.readMetadata(ctx, wh, p.MetadataLocation)
	if err != nil {
		return TableResult{}, err
	}
	if snapshots == "refs" {
		if data, err = refsOnly(data); err != nil {
			return TableResult{}, err
		}
	}
	return s.tableResult(p.MetadataLocation, data), nil
}

// refsOnly keeps the snapshots some ref points to.
func refsOnly(data []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("catalog: corrupt metadata: %w", err)
	}
	var refs map[string]struct {
		SnapshotID int64 `json:"snapshot-id"`
	}
	var snaps []json.RawMessage
	if err := json.Unmarshal(m["refs"], &refs); err != nil && m["refs"] != nil {
		return nil, fmt.Errorf("catalog: corrupt metadata refs: %w", err)
	}
	if err := json.Unmarshal(m["snapshots"], &snaps); err != nil && m["snapshots"] != nil {
		return nil, fmt.Errorf("catalog: corrupt metadata snapshots: %w", err)
	}
	keep := map[int64]bool{}
	for _, r := range refs {
		keep[r.SnapshotID] = true
	}
	out := []json.RawMessage{}
	for _, sn := range snaps {
		var h struct {
			SnapshotID int64 `json:"snapshot-id"`
		}
		if json.Unmarshal(sn, &h) == nil && keep[h.SnapshotID] {
			out = append(out, sn)
		}
	}
	if m["snapshots"] == nil {
		return data, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	m["snapshots"] = b
	return json.Marshal(m)
}

// TableExists implements Catalog.
func (s *Service) TableExists(ctx context.Context, wh string, id Ident) (bool, error) {
	return s.exists(ctx, wh, KindTable, id)
}
