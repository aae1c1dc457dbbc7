package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/view"
	"github.com/google/uuid"
)

// createViewRequest is the spec's CreateViewRequest.
type createViewRequest struct {
	Name        string            `json:"name"`
	Location    string            `json:"location"`
	Schema      *iceberg.Schema   `json:"schema"`
	ViewVersion *view.Version     `json:"view-version"`
	Properties  map[string]string `json:"properties"`
}

// commitViewRequest is the spec's CommitViewRequest.
type commitViewRequest struct {
	Identifier   *Ident            `json:"identifier"`
	Requirements view.Requirements `json:"requirements"`
	Updates      view.Updates      `json:"updates"`
}

func (s *Service) viewResult(loc string, meta []byte) ViewResult {
	return ViewResult{MetadataLocation: loc, Metadata: meta, Config: s.fileIOConfig(), ETag: etag(loc)}
}

// ListViews implements Catalog.
func (s *Service) ListViews(ctx context.Context, wh string, ns []string, pageToken string, pageSize int) ([]Ident, string, error) {
	return s.listIdents(ctx, wh, KindView, ns, pageToken, pageSize)
}

// CreateView implements Catalog.
func (s *Service) CreateView(ctx context.Context, wh string, ns []string, body []byte) (ViewResult, error) {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return ViewResult{}, err
	}
	defer release()
	var req createViewRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return ViewResult{}, fmt.Errorf("%w: create view request: %w", ErrBadRequest, err)
	}
	id := Ident{Namespace: ns, Name: req.Name}
	if err := validIdent(id); err != nil {
		return ViewResult{}, err
	}
	if req.Schema == nil || req.ViewVersion == nil {
		return ViewResult{}, fmt.Errorf("%w: create view request needs schema and view-version", ErrBadRequest)
	}
	loc, err := s.prepareCreate(ctx, wh, id, req.Location)
	if err != nil {
		return ViewResult{}, err
	}
	if req.ViewVersion.TimestampMS == 0 {
		req.ViewVersion.TimestampMS = s.now().UnixMilli()
	}
	md, err := buildView(func() (view.Metadata, error) {
		return view.NewMetadataWithUUID(req.ViewVersion, req.Schema, loc, iceberg.Properties(maps.Clone(req.Properties)), uuid.Nil)
	})
	if err != nil {
		return ViewResult{}, err
	}
	data, err := json.Marshal(md)
	if err != nil {
		return ViewResult{}, fmt.Errorf("catalog: encode view metadata: %w", err)
	}
	metaLoc, err := s.publishNew(ctx, wh, KindView, id, loc, data)
	if err != nil {
		return ViewResult{}, err
	}
	// Tables and views share one identifier space: a table created
	// concurrently under the same name makes this create lose.
	if _, err := s.b.Get(ctx, wh, KindTable, identKey(id)); err == nil {
		_ = s.b.Delete(ctx, wh, KindView, identKey(id), AnyVersion)
		return ViewResult{}, fmt.Errorf("%w: table %s", ErrAlreadyExists, id)
	}
	s.indexLocation(ctx, wh, KindView, id, "", loc)
	return s.viewResult(metaLoc, data), nil
}

// buildView runs a view metadata constructor, turning its errors and
// panics into ErrBadRequest.
func buildView(fn func() (view.Metadata, error)) (md view.Metadata, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: invalid view: %v", ErrBadRequest, r)
		}
	}()
	md, err = fn()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return md, nil
}

// LoadView implements Catalog.
func (s *Service) LoadView(ctx context.Context, wh string, id Ident) (ViewResult, error) {
	p, _, err := s.loadPointer(ctx, wh, KindView, id)
	if err != nil {
		return ViewResult{}, err
	}
	data, err := s.readMetadata(ctx, wh, p.MetadataLocation)
	if err != nil {
		return ViewResult{}, err
	}
	return s.viewResult(p.MetadataLocation, data), nil
}

// ViewExists implements Catalog.
func (s *Service) ViewExists(ctx context.Context, wh string, id Ident) (bool, error) {
	return s.exists(ctx, wh, KindView, id)
}

// decodeViewCommit decodes a CommitViewRequest.
func decodeViewCommit(body []byte) (req commitViewRequest, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: view commit request: %v", ErrBadRequest, r)
		}
	}()
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return req, fmt.Errorf("%w: view commit request is not a JSON object", ErrBadRequest)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return req, fmt.Errorf("%w: empty view commit request", ErrBadRequest)
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return commitViewRequest{}, fmt.Errorf("%w: view commit request: %w", ErrBadRequest, err)
	}
	for _, r := range req.Requirements {
		if r == nil {
			return commitViewRequest{}, fmt.Errorf("%w: null requirement", ErrBadRequest)
		}
	}
	for _, u := range req.Updates {
		if u == nil {
			return commitViewRequest{}, fmt.Errorf("%w: null update", ErrBadRequest)
		}
	}
	return req, nil
}

// ReplaceView implements Catalog.
func (s *Service) ReplaceView(ctx context.Context, wh string, id Ident, body []byte) (ViewResult, error) {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return ViewResult{}, err
	}
	defer release()
	req, err := decodeViewCommit(body)
	if err != nil {
		return ViewResult{}, err
	}
	if err := checkIdentifier(req.Identifier, id); err != nil {
		return ViewResult{}, err
	}
	p, ver, err := s.loadPointer(ctx, wh, KindView, id)
	if err != nil {
		return ViewResult{}, err
	}
	data, err := s.readMetadata(ctx, wh, p.MetadataLocation)
	if err != nil {
		return ViewResult{}, err
	}
	cur, err := view.ParseMetadataBytes(data)
	if err != nil {
		return ViewResult{}, fmt.Errorf("catalog: corrupt view metadata %s: %w", p.MetadataLocation, err)
	}
	for _, r := range req.Requirements {
		if err := r.Validate(cur); err != nil {
			return ViewResult{}, fmt.Errorf("%w: %s: %w", ErrCommitFailed, id, err)
		}
	}
	next, err := buildView(func() (view.Metadata, error) {
		b, err := view.MetadataBuilderFromBase(cur)
		if err != nil {
			return nil, err
		}
		for _, u := range req.Updates {
			if err := u.Apply(b); err != nil {
				return nil, err
			}
		}
		return b.Build()
	})
	if err != nil {
		return ViewResult{}, err
	}
	loc := strings.TrimRight(next.Location(), "/")
	if _, err := objectKeyOf(wh, loc); err != nil {
		return ViewResult{}, err
	}
	if data, err = json.Marshal(next); err != nil {
		return ViewResult{}, fmt.Errorf("catalog: encode view metadata: %w", err)
	}
	metaLoc := nextMetadataLocation(loc, p.MetadataLocation)
	if err := s.writeMetadata(ctx, wh, metaLoc, data); err != nil {
		return ViewResult{}, err
	}
	_, err = s.flip(ctx, wh, swap{kind: KindView, id: id, fromVersion: ver, from: p.MetadataLocation,
		next: pointerRec{MetadataLocation: metaLoc, Location: loc}})
	if errors.Is(err, errSwapConflict) {
		s.log.Debug().Err(err).Str("warehouse", wh).Str("view", id.String()).Msg("commit lost the pointer race")
		return ViewResult{}, fmt.Errorf("%w: view %s changed since it was loaded; refresh and retry", ErrCommitFailed, id)
	}
	if err != nil {
		return ViewResult{}, err
	}
	if loc != p.Location {
		s.indexLocation(ctx, wh, KindView, id, p.Location, loc)
	}
	return s.viewResult(metaLoc, data), nil
}

// DropView implements Catalog.
func (s *Service) DropView(ctx context.Context, wh string, id Ident) error {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	_, err = s.drop(ctx, wh, KindView, id)
	return err
}

// RenameView implements Catalog.
func (s *Service) RenameView(ctx context.Context, wh string, from, to Ident) error {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	return s.rename(ctx, wh, KindView, from, to)
}
