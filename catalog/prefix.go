package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// prefixKey is the prefix-index key of a location: its object key with a
// trailing "/".
func prefixKey(wh, loc string) (string, error) {
	k, err := objectKeyOf(wh, loc)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(k, "/") + "/", nil
}

// indexLocation points the prefix index entry of newLoc at id, and drops
// the entry of oldLoc (when different and still pointing at id). Failures
// are logged: TableForLocation checks entries against the pointers, so a
// missing or stale entry costs a lookup miss, never a wrong answer.
func (s *Service) indexLocation(ctx context.Context, wh string, kind Kind, id Ident, oldLoc, newLoc string) {
	if oldLoc != "" && oldLoc != newLoc {
		s.unindexLocation(ctx, wh, id, oldLoc)
	}
	if newLoc == "" {
		return
	}
	k, err := prefixKey(wh, newLoc)
	if err == nil {
		var cur prefixRec
		if _, gerr := s.getJSON(ctx, wh, KindPrefix, k, &cur); gerr == nil && cur.Kind == kind && sameIdent(cur.Ident, id) {
			return // already indexed: most commits keep the location
		}
		_, err = s.putJSON(ctx, wh, KindPrefix, k, prefixRec{Ident: id, Kind: kind}, AnyVersion)
	}
	if err != nil {
		s.log.Warn().Err(err).Str("warehouse", wh).Stringer("ident", id).Msg("prefix index update")
	}
}

// unindexLocation drops the prefix index entry of loc when it names id.
func (s *Service) unindexLocation(ctx context.Context, wh string, id Ident, loc string) {
	k, err := prefixKey(wh, loc)
	if err != nil {
		return
	}
	var rec prefixRec
	ver, err := s.getJSON(ctx, wh, KindPrefix, k, &rec)
	if err != nil || !sameIdent(rec.Ident, id) {
		return
	}
	if err := s.b.Delete(ctx, wh, KindPrefix, k, ver); err != nil && !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) {
		s.log.Warn().Err(err).Str("warehouse", wh).Stringer("ident", id).Msg("prefix index delete")
	}
}

func sameIdent(a, b Ident) bool { return a.Name == b.Name && slices.Equal(a.Namespace, b.Namespace) }

// TableForLocation implements Catalog.
func (s *Service) TableForLocation(ctx context.Context, wh string, location string) (Ident, error) {
	if err := s.requireWarehouse(ctx, wh); err != nil {
		return Ident{}, err
	}
	key, err := objectKeyOf(wh, location)
	if err != nil {
		return Ident{}, err
	}
	// Longest prefix first: the deepest table location holding the key.
	for i := len(key); i > 0; i-- {
		if key[i-1] != '/' && i != len(key) {
			continue
		}
		cand := strings.TrimRight(key[:i], "/") + "/"
		var rec prefixRec
		if _, err := s.getJSON(ctx, wh, KindPrefix, cand, &rec); err != nil {
			if errors.Is(err, ErrNotFound) {
				continue
			}
			return Ident{}, err
		}
		kind := rec.Kind
		if kind == "" {
			kind = KindTable
		}
		p, _, err := s.loadPointer(ctx, wh, kind, rec.Ident)
		if err != nil {
			continue // stale entry
		}
		if pk, err := prefixKey(wh, p.Location); err == nil && pk == cand {
			return rec.Ident, nil
		}
	}
	return Ident{}, fmt.Errorf("%w: no table holds %s", ErrNoSuchTable, location)
}
