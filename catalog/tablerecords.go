package catalog

import (
	"context"
	"errors"
)

// tableRecordKinds are the kinds of per-table records beside the pointer
// (a table's maintenance and its resource policy), keyed by TableKey.
func tableRecordKinds() []Kind { return []Kind{KindMaintenance, KindPolicy} }

// forgetTableRecords drops a table's own records after a drop (to nil),
// or moves them to its new identifier after a rename, so that a table
// made later under the old name does not get them. Best effort: a
// leftover record is logged.
func (s *Service) forgetTableRecords(ctx context.Context, wh string, from Ident, to *Ident) {
	for _, kind := range tableRecordKinds() {
		s.moveTableRecord(ctx, wh, kind, from, to)
	}
}

// moveTableRecord moves (to set) or drops one per-table record.
func (s *Service) moveTableRecord(ctx context.Context, wh string, kind Kind, from Ident, to *Ident) {
	rec, err := s.b.Get(ctx, wh, kind, identKey(from))
	if errors.Is(err, ErrNotFound) {
		return
	}
	log := func(err error, id Ident, what string) {
		s.log.Warn().Err(err).Str("warehouse", wh).Stringer("ident", id).Str("kind", string(kind)).Msg(what + " the table's record")
	}
	if err != nil {
		log(err, from, "reading")
		return
	}
	if to != nil {
		if _, err := s.b.Put(ctx, wh, kind, identKey(*to), rec.Value, AnyVersion); err != nil {
			log(err, *to, "moving")
			return
		}
	}
	if err := s.b.Delete(ctx, wh, kind, identKey(from), rec.Version); err != nil && !errors.Is(err, ErrNotFound) {
		log(err, from, "dropping")
	}
}
