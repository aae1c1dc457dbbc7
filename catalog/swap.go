package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// SwapMetadataLocation implements Catalog: S3 Tables'
// UpdateTableMetadataLocation, where the engine wrote the new metadata
// file itself. The pointer moves with one conditional write on the
// version read, so a concurrent commit either lands first (and this one
// is ErrCommitFailed) or after. The file must be a table metadata file in
// the warehouse's bucket of the same table (its table-uuid); nothing is
// deleted on failure, the file being the engine's.
func (s *Service) SwapMetadataLocation(ctx context.Context, wh string, id Ident, versionToken, metadataLocation string) (_ TableResult, err error) {
	defer func() { s.stats.count(err) }()
	release, err := s.enter(ctx, wh)
	if err != nil {
		return TableResult{}, err
	}
	defer release()
	if err := validIdent(id); err != nil {
		return TableResult{}, err
	}
	p, ver, err := s.loadPointer(ctx, wh, KindTable, id)
	if err != nil {
		return TableResult{}, err
	}
	if versionToken != etag(p.MetadataLocation) {
		return TableResult{}, fmt.Errorf("%w: version token %q of %s is not its current one", ErrCommitFailed, versionToken, id)
	}
	if _, err := objectKeyOf(wh, metadataLocation); err != nil {
		return TableResult{}, err
	}
	cur, err := s.readMetadata(ctx, wh, p.MetadataLocation)
	if err != nil {
		return TableResult{}, err
	}
	curMD, err := table.ParseMetadataBytes(cur)
	if err != nil {
		return TableResult{}, fmt.Errorf("catalog: corrupt metadata %s: %w", p.MetadataLocation, err)
	}
	data, err := s.readMetadata(ctx, wh, metadataLocation)
	if errors.Is(err, ErrNotFound) {
		return TableResult{}, fmt.Errorf("%w: %w: write the metadata file first", ErrBadRequest, err)
	}
	if err != nil {
		return TableResult{}, err
	}
	md, err := table.ParseMetadataBytes(data)
	if err != nil {
		return TableResult{}, fmt.Errorf("%w: %s is not table metadata: %w", ErrBadRequest, metadataLocation, err)
	}
	if md.TableUUID() != curMD.TableUUID() {
		return TableResult{}, fmt.Errorf("%w: %s is the metadata of table %s, not of %s (%s)", ErrBadRequest, metadataLocation, md.TableUUID(), id, curMD.TableUUID())
	}
	if _, err := objectKeyOf(wh, md.Location()); err != nil {
		return TableResult{}, err
	}
	next := pointerRec{MetadataLocation: metadataLocation, Location: md.Location(), Updated: s.now().UTC()}
	if _, err := s.putJSON(ctx, wh, KindTable, identKey(id), next, ver); err != nil {
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
			return TableResult{}, fmt.Errorf("%w: table %s changed meanwhile", ErrCommitFailed, id)
		}
		return TableResult{}, err
	}
	if next.Location != p.Location {
		s.indexLocation(ctx, wh, KindTable, id, p.Location, next.Location)
	}
	return s.tableResult(metadataLocation, data), nil
}
