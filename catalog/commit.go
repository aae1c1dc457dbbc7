package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// swap is one change of a table or view pointer, whose new metadata file
// has just been written.
type swap struct {
	kind Kind
	id   Ident
	// fromVersion is the pointer record's version read at the start; ""
	// when the commit creates the entry.
	fromVersion string
	from        string // the metadata location before ("" on create)
	next        pointerRec
}

// errSwapConflict: the pointer moved (or the entry appeared) under the
// commit; nothing was applied and the new metadata file was removed.
var errSwapConflict = errors.New("pointer changed under the commit")

// flip runs the commit protocol once the new metadata file is written:
//
//  1. record a staged commit (KindCommit, state staged);
//  2. flip the pointer with a conditional Put (ifVersion = fromVersion);
//  3. mark the commit committed.
//
// On a SnapshotBacking (durable-strong) the staged record is left out
// (flipPointers). Otherwise a crash after 1 leaves the staged entry for
// Recover; the pointer is
// always on the old or the new file, both of which exist. A conflict at 2
// marks the entry abandoned, removes the new file and returns
// errSwapConflict. Any other failure at 2 is ErrCommitStateUnknown. It
// returns the pointer's new version.
func (s *Service) flip(ctx context.Context, wh string, sw swap) (string, error) {
	if h := s.opt.Hooks.AfterMetadataWrite; h != nil {
		if err := h(ctx, sw.id, sw.next.MetadataLocation); err != nil {
			return "", fmt.Errorf("%w: stopped after metadata write: %w", ErrCommitStateUnknown, err)
		}
	}
	if s.snapshot {
		vers, err := s.flipPointers(ctx, wh, []swap{sw})
		if err != nil {
			return "", err
		}
		return vers[0], nil
	}
	now := s.now().UTC()
	c := commitRec{
		ID: fmt.Sprintf("%016x-%s", now.UnixNano(), uuid.NewString()), Kind: sw.kind, Ident: sw.id,
		FromVersion: sw.fromVersion, From: sw.from, To: sw.next.MetadataLocation,
		State: commitStaged, Created: now, Updated: now,
	}
	s.mu.Lock()
	s.inflight[c.ID] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, c.ID)
		s.mu.Unlock()
	}()
	cver, err := s.putJSON(ctx, wh, KindCommit, c.ID, c, "")
	if err != nil {
		s.removeOrphan(ctx, wh, sw.next.MetadataLocation)
		return "", fmt.Errorf("catalog: stage commit of %s: %w", sw.id, err)
	}
	if h := s.opt.Hooks.BeforePointerFlip; h != nil {
		if err := h(ctx, sw.id, sw.next.MetadataLocation); err != nil {
			return "", fmt.Errorf("%w: stopped before pointer flip: %w", ErrCommitStateUnknown, err)
		}
	}
	sw.next.Updated = now
	ver, err := s.putJSON(ctx, wh, sw.kind, identKey(sw.id), sw.next, sw.fromVersion)
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
		s.resolve(ctx, wh, c, cver, commitAbandoned)
		return "", fmt.Errorf("%w: %s: %w", errSwapConflict, sw.id, err)
	}
	if err != nil {
		return "", fmt.Errorf("%w: flip %s: %w", ErrCommitStateUnknown, sw.id, err)
	}
	s.resolve(ctx, wh, c, cver, commitCommitted)
	s.log.Debug().Str("warehouse", wh).Stringer("ident", sw.id).Str("metadata", sw.next.MetadataLocation).Msg("commit")
	return ver, nil
}

// resolve ends a staged commit, committed or abandoned: an abandoned
// commit's metadata file is removed, then the entry is deleted, so the
// commit log holds only commits in flight (the table's metadata-log is its
// history) and a durable-strong snapshot does not grow with every commit.
// Failures are logged: the entry stays staged and Recover resolves it
// later.
func (s *Service) resolve(ctx context.Context, wh string, c commitRec, ver, state string) {
	if state == commitAbandoned {
		s.removeOrphan(ctx, wh, c.To)
	}
	if err := s.b.Delete(ctx, wh, KindCommit, c.ID, ver); err != nil && !errors.Is(err, ErrNotFound) {
		s.log.Warn().Err(err).Str("warehouse", wh).Str("commit", c.ID).Str("state", state).Msg("resolving commit")
	}
}

// removeOrphan deletes a metadata file no pointer refers to.
func (s *Service) removeOrphan(ctx context.Context, wh, loc string) {
	if err := s.deleteObject(ctx, wh, loc); err != nil {
		s.log.Warn().Err(err).Str("warehouse", wh).Str("metadata", loc).Msg("removing orphan metadata file")
	}
}

// flipPointers flips pointers in one PutBatch, with no staged record: a
// commit on a backing whose every write rewrites the whole warehouse
// (SnapshotBacking, durable-strong), where it costs one publish instead
// of three, and a multi-table transaction on either backing. A crash
// before it leaves only the new metadata files, which RecoverWarehouse
// removes (orphans.go); a conflict removes them and is errSwapConflict; a
// flip whose outcome is unknown is ErrCommitStateUnknown, every pointer
// being on its old file or all on their new ones.
func (s *Service) flipPointers(ctx context.Context, wh string, swaps []swap) ([]string, error) {
	now := s.now().UTC()
	puts := make([]BatchPut, len(swaps))
	for i, sw := range swaps {
		if h := s.opt.Hooks.BeforePointerFlip; h != nil {
			if err := h(ctx, sw.id, sw.next.MetadataLocation); err != nil {
				return nil, fmt.Errorf("%w: stopped before pointer flip: %w", ErrCommitStateUnknown, err)
			}
		}
		next := sw.next
		next.Updated = now
		value, err := json.Marshal(next)
		if err != nil {
			return nil, fmt.Errorf("catalog: encode pointer: %w", err)
		}
		puts[i] = BatchPut{Kind: sw.kind, Key: identKey(sw.id), Value: value, IfVersion: sw.fromVersion}
	}
	vers, err := s.batch.PutBatch(ctx, wh, puts)
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
		for _, sw := range swaps {
			s.removeOrphan(ctx, wh, sw.next.MetadataLocation)
		}
		return nil, fmt.Errorf("%w: %w", errSwapConflict, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: flip: %w", ErrCommitStateUnknown, err)
	}
	for _, sw := range swaps {
		s.log.Debug().Str("warehouse", wh).Stringer("ident", sw.id).Str("metadata", sw.next.MetadataLocation).Msg("commit")
	}
	return vers, nil
}
