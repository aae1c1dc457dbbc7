package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// listIdents lists the tables or views of a namespace.
func (s *Service) listIdents(ctx context.Context, wh string, kind Kind, ns []string, pageToken string, pageSize int) ([]Ident, string, error) {
	if err := s.requireNamespace(ctx, wh, ns); err != nil {
		return nil, "", err
	}
	after, err := decodeToken(pageToken)
	if err != nil {
		return nil, "", err
	}
	recs, more, err := s.b.List(ctx, wh, kind, ListOptions{Prefix: nsKey(ns) + tableSep, After: after, Limit: max(pageSize, 0), KeysOnly: true})
	if err != nil {
		return nil, "", err
	}
	ids := make([]Ident, 0, len(recs))
	for _, r := range recs {
		ids = append(ids, identFromKey(r.Key))
	}
	next := ""
	if more && len(recs) > 0 {
		next = encodeToken(recs[len(recs)-1].Key)
	}
	return ids, next, nil
}

// ListTables implements Catalog.
func (s *Service) ListTables(ctx context.Context, wh string, ns []string, pageToken string, pageSize int) ([]Ident, string, error) {
	return s.listIdents(ctx, wh, KindTable, ns, pageToken, pageSize)
}

// drop forgets a table or view, returning its last pointer.
func (s *Service) drop(ctx context.Context, wh string, kind Kind, id Ident) (pointerRec, error) {
	for {
		p, ver, err := s.loadPointer(ctx, wh, kind, id)
		if errors.Is(err, ErrQuarantined) {
			// Cleanup of a table/view collision: the colliding entry
			// cannot be read, only removed.
			if err := s.b.Delete(ctx, wh, kind, identKey(id), AnyVersion); err != nil {
				return p, err
			}
			s.log.Warn().Str("warehouse", wh).Stringer("ident", id).Str("kind", string(kind)).Msg("dropped a colliding identifier (quarantine cleanup)")
			return p, nil
		}
		if err != nil {
			return p, err
		}
		err = s.b.Delete(ctx, wh, kind, identKey(id), ver)
		if errors.Is(err, ErrConflict) {
			if err := ctx.Err(); err != nil {
				return p, err
			}
			continue // committed meanwhile: drop the newer pointer
		}
		if errors.Is(err, ErrNotFound) {
			return p, fmt.Errorf("%w: %s", noSuch(kind), id)
		}
		if err != nil {
			return p, err
		}
		s.unindexLocation(ctx, wh, id, p.Location)
		s.log.Info().Str("warehouse", wh).Stringer("ident", id).Str("kind", string(kind)).Msg("dropped")
		return p, nil
	}
}

// DropTable implements Catalog.
func (s *Service) DropTable(ctx context.Context, wh string, id Ident, purge bool) error {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	p, err := s.drop(ctx, wh, KindTable, id)
	if err != nil {
		return err
	}
	s.forgetTableRecords(ctx, wh, id, nil)
	if !purge {
		return nil
	}
	n, err := s.purgePrefix(ctx, wh, p.Location)
	s.log.Info().Str("warehouse", wh).Stringer("ident", id).Int("objects", n).Msg("purged")
	return err
}

// rename moves a table or view entry from one identifier to another.
func (s *Service) rename(ctx context.Context, wh string, kind Kind, from, to Ident) error {
	if err := validIdent(to); err != nil {
		return err
	}
	p, ver, err := s.loadPointer(ctx, wh, kind, from)
	if err != nil {
		return err
	}
	if err := s.requireNamespace(ctx, wh, to.Namespace); err != nil {
		return err
	}
	if err := s.requireFree(ctx, wh, to); err != nil {
		return err
	}
	if _, err := s.putJSON(ctx, wh, kind, identKey(to), p, ""); err != nil {
		if errors.Is(err, ErrConflict) {
			return fmt.Errorf("%w: %s", ErrAlreadyExists, to)
		}
		return err
	}
	if err := s.b.Delete(ctx, wh, kind, identKey(from), ver); err != nil {
		// The source moved or went: undo the copy.
		if derr := s.b.Delete(ctx, wh, kind, identKey(to), AnyVersion); derr != nil {
			s.log.Error().Err(derr).Stringer("ident", to).Msg("undoing rename")
		}
		if errors.Is(err, ErrConflict) {
			return fmt.Errorf("%w: %s changed during the rename", ErrCommitFailed, from)
		}
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("%w: %s", noSuch(kind), from)
		}
		return err
	}
	s.indexLocation(ctx, wh, kind, to, "", p.Location)
	return nil
}

// RenameTable implements Catalog.
func (s *Service) RenameTable(ctx context.Context, wh string, from, to Ident) error {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	if err := s.rename(ctx, wh, KindTable, from, to); err != nil {
		return err
	}
	s.forgetTableRecords(ctx, wh, from, &to)
	return nil
}

// RegisterTable implements Catalog.
func (s *Service) RegisterTable(ctx context.Context, wh string, ns []string, name, metadataLocation string, overwrite bool) (TableResult, error) {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return TableResult{}, err
	}
	defer release()
	id := Ident{Namespace: ns, Name: name}
	if err := validIdent(id); err != nil {
		return TableResult{}, err
	}
	if err := s.requireNamespace(ctx, wh, ns); err != nil {
		return TableResult{}, err
	}
	data, err := s.readMetadata(ctx, wh, metadataLocation)
	if errors.Is(err, ErrNotFound) {
		return TableResult{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if err != nil {
		return TableResult{}, err
	}
	md, err := table.ParseMetadataBytes(data)
	if err != nil {
		return TableResult{}, fmt.Errorf("%w: %s: %w", ErrBadRequest, metadataLocation, err)
	}
	if _, err := objectKeyOf(wh, md.Location()); err != nil {
		return TableResult{}, err
	}
	if _, err := s.b.Get(ctx, wh, KindView, identKey(id)); err == nil {
		return TableResult{}, fmt.Errorf("%w: view %s", ErrAlreadyExists, id)
	}
	var old pointerRec
	ver, err := s.getJSON(ctx, wh, KindTable, identKey(id), &old)
	switch {
	case errors.Is(err, ErrNotFound):
		ver = ""
	case err != nil:
		return TableResult{}, err
	case !overwrite:
		return TableResult{}, fmt.Errorf("%w: table %s", ErrAlreadyExists, id)
	}
	next := pointerRec{MetadataLocation: metadataLocation, Location: md.Location(), Updated: s.now().UTC()}
	if _, err := s.putJSON(ctx, wh, KindTable, identKey(id), next, ver); err != nil {
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
			return TableResult{}, fmt.Errorf("%w: table %s changed during the register", ErrAlreadyExists, id)
		}
		return TableResult{}, err
	}
	s.indexLocation(ctx, wh, KindTable, id, old.Location, next.Location)
	return s.tableResult(metadataLocation, data), nil
}
