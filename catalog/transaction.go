package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// CommitTransaction implements Catalog. One table change is a
// CommitTable. More need a BatchBacking (durable-strong): every change is
// validated and its metadata file written, then all pointers flip in one
// atomic write, so either every table moves or none does (a requirement
// that fails, or a table changed meanwhile, is ErrCommitFailed with
// nothing applied). The object backing answers ErrUnsupported for more
// than one change.
func (s *Service) CommitTransaction(ctx context.Context, wh string, body []byte) error {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	var req struct {
		TableChanges []json.RawMessage `json:"table-changes"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("%w: transaction request: %w", ErrBadRequest, err)
	}
	if len(req.TableChanges) == 0 {
		return fmt.Errorf("%w: transaction without table-changes", ErrBadRequest)
	}
	changes := make([]commitTableRequest, 0, len(req.TableChanges))
	seen := map[string]bool{}
	for i, raw := range req.TableChanges {
		c, err := decodeCommitRequest(raw)
		if err != nil {
			return err
		}
		if c.Identifier == nil {
			return fmt.Errorf("%w: table change %d has no identifier", ErrBadRequest, i)
		}
		if err := validIdent(*c.Identifier); err != nil {
			return err
		}
		k := identKey(*c.Identifier)
		if seen[k] {
			return fmt.Errorf("%w: table %s changes twice in one transaction", ErrBadRequest, *c.Identifier)
		}
		seen[k] = true
		changes = append(changes, c)
	}
	if len(changes) == 1 {
		_, err = s.commitTable(ctx, wh, *changes[0].Identifier, changes[0])
		return err
	}
	bb, ok := s.b.(BatchBacking)
	if !ok {
		return fmt.Errorf("%w: multi-table transactions (%d tables) need the durable-strong backing", ErrUnsupported, len(changes))
	}
	var prepared []preparedCommit
	abandon := func() {
		for _, pc := range prepared {
			if !pc.noop {
				s.removeOrphan(ctx, wh, pc.sw.next.MetadataLocation)
			}
		}
	}
	for _, c := range changes {
		pc, err := s.prepareCommit(ctx, wh, *c.Identifier, c)
		if err != nil {
			abandon()
			return err
		}
		prepared = append(prepared, pc)
	}
	var swaps []preparedCommit
	for _, pc := range prepared {
		if !pc.noop {
			swaps = append(swaps, pc)
		}
	}
	if len(swaps) == 0 {
		return nil
	}
	if err := s.flipAll(ctx, wh, bb, swaps); err != nil {
		return err
	}
	for _, pc := range swaps {
		pc.index(ctx, s, wh)
	}
	return nil
}

// flipAll is flipDirect for several tables: every pointer flips in one
// PutBatch, which lands whole or not at all. A conflict removes the new
// metadata files; a crash before the batch leaves them for
// RecoverWarehouse (orphans.go).
func (s *Service) flipAll(ctx context.Context, wh string, bb BatchBacking, swaps []preparedCommit) error {
	start, now := time.Now(), s.now().UTC()
	puts := make([]BatchPut, len(swaps))
	for i, pc := range swaps {
		sw := pc.sw
		if h := s.opt.Hooks.AfterMetadataWrite; h != nil {
			if err := h(ctx, sw.id, sw.next.MetadataLocation); err != nil {
				return fmt.Errorf("%w: stopped after metadata write: %w", ErrCommitStateUnknown, err)
			}
		}
		if h := s.opt.Hooks.BeforePointerFlip; h != nil {
			if err := h(ctx, sw.id, sw.next.MetadataLocation); err != nil {
				return fmt.Errorf("%w: stopped before pointer flip: %w", ErrCommitStateUnknown, err)
			}
		}
		next := sw.next
		next.Updated = now
		value, err := json.Marshal(next)
		if err != nil {
			return fmt.Errorf("catalog: encode pointer: %w", err)
		}
		puts[i] = BatchPut{Kind: sw.kind, Key: identKey(sw.id), Value: value, IfVersion: sw.fromVersion}
	}
	_, err := bb.PutBatch(ctx, wh, puts)
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
		for _, pc := range swaps {
			s.removeOrphan(ctx, wh, pc.sw.next.MetadataLocation)
		}
		return fmt.Errorf("%w: a table of the transaction changed since it was loaded; refresh and retry: %w", ErrCommitFailed, err)
	}
	if err != nil {
		return fmt.Errorf("%w: transaction flip: %w", ErrCommitStateUnknown, err)
	}
	s.log.Debug().Str("warehouse", wh).Int("tables", len(swaps)).Dur("took", time.Since(start)).Msg("transaction")
	return nil
}
