package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/cairnstore/cairn/objstore"
)

// commitTableRequest is the spec's CommitTableRequest.
type commitTableRequest struct {
	Identifier   *Ident             `json:"identifier"`
	Requirements table.Requirements `json:"requirements"`
	Updates      table.Updates      `json:"updates"`
}

// decodeCommitRequest decodes a CommitTableRequest; ErrBadRequest for
// malformed JSON, unknown requirement types and unknown update actions.
func decodeCommitRequest(body []byte) (req commitTableRequest, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: commit request: %v", ErrBadRequest, r)
		}
	}()
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return req, fmt.Errorf("%w: commit request is not a JSON object", ErrBadRequest)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return req, fmt.Errorf("%w: empty commit request", ErrBadRequest)
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return commitTableRequest{}, fmt.Errorf("%w: commit request: %w", ErrBadRequest, err)
	}
	for i, r := range req.Requirements {
		if r == nil {
			return commitTableRequest{}, fmt.Errorf("%w: requirement %d is null", ErrBadRequest, i)
		}
	}
	for i, u := range req.Updates {
		if u == nil {
			return commitTableRequest{}, fmt.Errorf("%w: update %d is null", ErrBadRequest, i)
		}
	}
	return req, nil
}

// hasAssertCreate reports whether the requirements hold assert-create.
func hasAssertCreate(reqs table.Requirements) bool {
	for _, r := range reqs {
		if r.GetType() == "assert-create" {
			return true
		}
	}
	return false
}

// checkIdentifier refuses a body identifier that differs from the path's.
func checkIdentifier(body *Ident, id Ident) error {
	if body != nil && (body.Name != "" || len(body.Namespace) > 0) && !sameIdent(*body, id) {
		return fmt.Errorf("%w: identifier %s in the body differs from %s", ErrBadRequest, *body, id)
	}
	return nil
}

// CommitTable implements Catalog.
func (s *Service) CommitTable(ctx context.Context, wh string, id Ident, body []byte) (res TableResult, err error) {
	defer func() { s.stats.count(err) }()
	release, err := s.enter(ctx, wh)
	if err != nil {
		return TableResult{}, err
	}
	defer release()
	req, err := decodeCommitRequest(body)
	if err != nil {
		return TableResult{}, err
	}
	if err := checkIdentifier(req.Identifier, id); err != nil {
		return TableResult{}, err
	}
	return s.commitTable(ctx, wh, id, req)
}

func (s *Service) commitTable(ctx context.Context, wh string, id Ident, req commitTableRequest) (TableResult, error) {
	pc, err := s.prepareCommit(ctx, wh, id, req)
	if err != nil || pc.noop {
		return pc.result, err
	}
	_, err = s.flip(ctx, wh, pc.sw)
	if errors.Is(err, errSwapConflict) {
		s.log.Debug().Err(err).Str("warehouse", wh).Str("table", id.String()).Msg("commit lost the pointer race")
		return TableResult{}, fmt.Errorf("%w: table %s changed since it was loaded; refresh and retry", ErrCommitFailed, id)
	}
	if err != nil {
		return TableResult{}, err
	}
	pc.index(ctx, s, wh)
	return pc.result, nil
}

// preparedCommit is a table commit whose new metadata file is written
// and whose pointer is still to flip.
type preparedCommit struct {
	id     Ident
	sw     swap
	oldLoc string // the table's location before
	result TableResult
	noop   bool // nothing to change: result is the current table
	// trimmed are the metadata files that left the metadata log with
	// this commit, deleted after the flip when the table sets
	// write.metadata.delete-after-commit.enabled.
	trimmed []string
}

// index updates the location prefix index after the flip, and deletes
// the metadata files trimmed from the log when the table asks for it.
func (pc preparedCommit) index(ctx context.Context, s *Service, wh string) {
	if pc.sw.next.Location != pc.oldLoc {
		s.indexLocation(ctx, wh, KindTable, pc.id, pc.oldLoc, pc.sw.next.Location)
	}
	for _, loc := range pc.trimmed {
		if err := s.deleteObject(ctx, wh, loc); err != nil && !errors.Is(err, objstore.ErrNoSuchKey) {
			s.log.Warn().Err(err).Str("warehouse", wh).Stringer("table", pc.id).Str("metadata", loc).Msg("deleting a metadata file trimmed from the log (the removal of unreferenced files takes it later)")
		}
	}
}

// trimmedMetadata lists the metadata files of cur's log (and cur's own
// file, curLoc) that next's log no longer holds, when next sets
// write.metadata.delete-after-commit.enabled; the log itself is trimmed
// to write.metadata.previous-versions-max by iceberg-go's builder.
func trimmedMetadata(cur, next table.Metadata, curLoc string) []string {
	if cur == nil || !next.Properties().GetBool(table.MetadataDeleteAfterCommitEnabledKey, table.MetadataDeleteAfterCommitEnabledDefault) {
		return nil
	}
	kept := map[string]bool{}
	for e := range next.PreviousFiles() {
		kept[e.MetadataFile] = true
	}
	var out []string
	for e := range cur.PreviousFiles() {
		if !kept[e.MetadataFile] {
			out = append(out, e.MetadataFile)
		}
	}
	if curLoc != "" && !kept[curLoc] {
		out = append(out, curLoc)
	}
	return out
}

// prepareCommit validates a table commit against the current metadata,
// applies its updates and writes the new metadata file; the caller flips
// the pointer (or removes the file).
func (s *Service) prepareCommit(ctx context.Context, wh string, id Ident, req commitTableRequest) (preparedCommit, error) {
	create := hasAssertCreate(req.Requirements)
	p, ver, err := s.loadPointer(ctx, wh, KindTable, id)
	switch {
	case errors.Is(err, ErrNoSuchTable) && create:
		if err := s.requireFree(ctx, wh, id); err != nil {
			return preparedCommit{}, err
		}
	case err != nil:
		return preparedCommit{}, err
	}
	var cur table.Metadata
	if ver != "" {
		data, err := s.readMetadata(ctx, wh, p.MetadataLocation)
		if err != nil {
			return preparedCommit{}, err
		}
		if cur, err = table.ParseMetadataBytes(data); err != nil {
			return preparedCommit{}, fmt.Errorf("catalog: corrupt metadata %s: %w", p.MetadataLocation, err)
		}
		if len(req.Updates) == 0 && len(req.Requirements) == 0 {
			return preparedCommit{id: id, noop: true, result: s.tableResult(p.MetadataLocation, data)}, nil
		}
	}
	for _, r := range req.Requirements {
		if err := r.Validate(cur); err != nil {
			return preparedCommit{}, fmt.Errorf("%w: %s: %w", ErrCommitFailed, id, err)
		}
	}
	next, err := applyUpdates(cur, p.MetadataLocation, req.Updates, defaultLocation(wh, id))
	if err != nil {
		return preparedCommit{}, err
	}
	loc := strings.TrimRight(next.Location(), "/")
	if _, err := objectKeyOf(wh, loc); err != nil {
		return preparedCommit{}, err
	}
	data, err := json.Marshal(next)
	if err != nil {
		return preparedCommit{}, fmt.Errorf("catalog: encode metadata: %w", err)
	}
	metaLoc := nextMetadataLocation(loc, p.MetadataLocation)
	if err := s.writeMetadata(ctx, wh, metaLoc, data); err != nil {
		return preparedCommit{}, err
	}
	return preparedCommit{
		id:      id,
		sw:      swap{kind: KindTable, id: id, fromVersion: ver, from: p.MetadataLocation, next: pointerRec{MetadataLocation: metaLoc, Location: loc}},
		oldLoc:  p.Location,
		result:  s.tableResult(metaLoc, data),
		trimmed: trimmedMetadata(cur, next, p.MetadataLocation),
	}, nil
}

// applyUpdates builds the next metadata from cur (nil: a table being
// created, located at defLoc unless an update sets a location).
func applyUpdates(cur table.Metadata, curLoc string, updates table.Updates, defLoc string) (md table.Metadata, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: applying updates: %v", ErrBadRequest, r)
		}
	}()
	base := cur
	if base == nil {
		curLoc = ""
		if base, err = table.NewMetadata(iceberg.NewSchema(0), nil, table.UnsortedSortOrder, "", nil); err != nil {
			return nil, fmt.Errorf("catalog: empty base metadata: %w", err)
		}
		if !setsLocation(updates) {
			updates = append(append(table.Updates(nil), updates...), table.NewSetLocationUpdate(defLoc))
		}
	}
	md, err = table.UpdateTableMetadata(base, updates, curLoc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return md, nil
}

func setsLocation(updates table.Updates) bool {
	for _, u := range updates {
		if u.Action() == table.UpdateSetLocation {
			return true
		}
	}
	return false
}
