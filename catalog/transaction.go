package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// CommitTransaction implements Catalog. One table change is a
// CommitTable. More need a BatchBacking (both backings are): every change
// is validated and its metadata file written, then all pointers flip in
// one atomic write (flipPointers), so either every table moves or none
// does (a requirement that fails, or a table changed meanwhile, is
// ErrCommitFailed with nothing applied). A crash before the flip leaves
// only the new metadata files, which recovery removes (orphans.go).
func (s *Service) CommitTransaction(ctx context.Context, wh string, body []byte) (err error) {
	defer func() { s.stats.count(err) }()
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
	if s.batch == nil {
		return fmt.Errorf("%w: multi-table transactions (%d tables) need a backing that writes several records at once", ErrUnsupported, len(changes))
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
	if err := s.flipAll(ctx, wh, swaps); err != nil {
		return err
	}
	for _, pc := range swaps {
		pc.index(ctx, s, wh)
	}
	return nil
}

// flipAll flips a transaction's tables together (flipPointers), once
// their metadata files are written.
func (s *Service) flipAll(ctx context.Context, wh string, prepared []preparedCommit) error {
	swaps := make([]swap, len(prepared))
	for i, pc := range prepared {
		if h := s.opt.Hooks.AfterMetadataWrite; h != nil {
			if err := h(ctx, pc.sw.id, pc.sw.next.MetadataLocation); err != nil {
				return fmt.Errorf("%w: stopped after metadata write: %w", ErrCommitStateUnknown, err)
			}
		}
		swaps[i] = pc.sw
	}
	_, err := s.flipPointers(ctx, wh, swaps)
	if errors.Is(err, errSwapConflict) {
		return fmt.Errorf("%w: a table of the transaction changed since it was loaded; refresh and retry: %w", ErrCommitFailed, err)
	}
	return err
}
