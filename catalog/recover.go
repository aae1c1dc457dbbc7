package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// RecoverReport counts what Recover did.
type RecoverReport struct {
	Committed int // staged commits whose pointer had flipped
	Abandoned int // staged commits whose pointer had not
	// ManualReview counts the staged commits left staged because recovery
	// could not tell (classifyStaged): nothing of theirs was deleted.
	ManualReview int
}

// Recover implements Catalog.
func (s *Service) Recover(ctx context.Context) error {
	_, err := s.RecoverReport(ctx)
	return err
}

// RecoverReport is Recover returning its counts.
func (s *Service) RecoverReport(ctx context.Context) (RecoverReport, error) {
	var rep RecoverReport
	whs, err := s.ListWarehouses(ctx)
	if err != nil {
		return rep, err
	}
	for _, w := range whs {
		release, err := s.enter(ctx, w.Name)
		if errors.Is(err, ErrFenced) {
			// A fenced warehouse has no staged commits (the cutover
			// drained and checked it) and must not change.
			s.log.Info().Err(err).Str("warehouse", w.Name).Msg("staged commits not recovered: warehouse fenced")
			continue
		}
		if err != nil {
			return rep, err
		}
		err = s.recoverWarehouse(ctx, w.Name, &rep)
		release()
		if err != nil {
			return rep, err
		}
	}
	if rep.Committed+rep.Abandoned+rep.ManualReview > 0 {
		s.log.Info().Int("committed", rep.Committed).Int("abandoned", rep.Abandoned).Int("manual_review", rep.ManualReview).Msg("recovered staged commits")
	}
	return rep, nil
}

// recoverWarehouse resolves the staged commits of one warehouse.
func (s *Service) recoverWarehouse(ctx context.Context, wh string, rep *RecoverReport) error {
	// An undecodable commit record is a manual-review finding of
	// RecoverWarehouse too: left alone, logged, the others go on.
	staged, err := s.stagedCommits(ctx, wh, func(key string, err error) error {
		rep.ManualReview++
		s.log.Error().Err(err).Str("warehouse", wh).Str("commit", key).Str("action", operatorAction(wh)).
			Msg("undecodable commit record left for manual review")
		return nil
	})
	if errors.Is(err, ErrUnavailable) {
		// Not served (a damaged snapshot): nothing to recover until an
		// operator restores it; the others go on.
		s.log.Error().Err(err).Str("warehouse", wh).Msg("staged commits not recovered: warehouse not served")
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range staged {
		if err := s.recoverOne(ctx, wh, c, rep); err != nil {
			return err
		}
	}
	return nil
}

// StagedCommit describes a commit left staged.
type StagedCommit struct {
	ID       string
	Kind     Kind
	Ident    Ident
	From, To string // metadata locations before and after
	version  string
	rec      commitRec
}

// StagedCommits lists the commits of a warehouse still staged (not marked
// committed or abandoned), skipping those this Service is running. An
// undecodable commit record is an error.
func (s *Service) StagedCommits(ctx context.Context, wh string) ([]StagedCommit, error) {
	return s.stagedCommits(ctx, wh, func(key string, err error) error {
		return fmt.Errorf("catalog: corrupt %s record %q: %w", KindCommit, key, err)
	})
}

// stagedCommits is StagedCommits calling onBad for every undecodable
// commit record; an error of onBad stops the walk.
func (s *Service) stagedCommits(ctx context.Context, wh string, onBad func(key string, err error) error) ([]StagedCommit, error) {
	var out []StagedCommit
	err := s.walk(ctx, wh, KindCommit, func(r Record) error {
		var c commitRec
		if err := json.Unmarshal(r.Value, &c); err != nil {
			return onBad(r.Key, err)
		}
		s.mu.Lock()
		running := s.inflight[c.ID]
		s.mu.Unlock()
		if c.State == commitStaged && !running {
			out = append(out, StagedCommit{ID: c.ID, Kind: c.Kind, Ident: c.Ident, From: c.From, To: c.To, version: r.Version, rec: c})
		}
		return nil
	})
	return out, err
}

// recoverOne resolves one staged commit by its pointer (classifyStaged,
// the rule RecoverWarehouse follows too). A commit recovery cannot decide
// stays staged, nothing deleted, and is logged once with what the
// operator runs next.
func (s *Service) recoverOne(ctx context.Context, wh string, c StagedCommit, rep *RecoverReport) error {
	ptr, err := s.lookupPointer(ctx, wh, c.Kind, c.Ident)
	if err != nil {
		return fmt.Errorf("catalog: recover %s: %w", c.ID, err)
	}
	v, err := s.classify(ctx, wh, c.rec, ptr)
	if err != nil {
		return fmt.Errorf("catalog: recover %s: %w", c.ID, err)
	}
	switch v.outcome {
	case stagedCommitted:
		s.resolve(ctx, wh, c.rec, c.version, commitCommitted)
		rep.Committed++
	case stagedAbandoned:
		s.resolve(ctx, wh, c.rec, c.version, commitAbandoned)
		rep.Abandoned++
	default:
		rep.ManualReview++
		s.log.Error().Str("warehouse", wh).Str("commit", c.ID).Stringer("ident", c.Ident).Str("to", c.To).Str("reason", v.reason).
			Str("action", operatorAction(wh)).
			Msg("staged commit left for manual review: nothing deleted")
	}
	return nil
}

// lookupPointer reads the pointer record of a table or view for
// classifyStaged. Only a backing failure is an error; an absent record
// and an undecodable one are facts for the classifier.
func (s *Service) lookupPointer(ctx context.Context, wh string, kind Kind, id Ident) (pointerSeen, error) {
	rec, err := s.b.Get(ctx, wh, kind, identKey(id))
	if errors.Is(err, ErrNotFound) {
		return pointerSeen{}, nil
	}
	if err != nil {
		return pointerSeen{}, err
	}
	ptr := pointerSeen{found: true}
	if err := json.Unmarshal(rec.Value, &ptr.p); err != nil {
		ptr.decodeErr = err
	}
	return ptr, nil
}

// operatorAction is what the log of a manual-review finding tells the
// operator to run (docs/operations/cutover-runbook.md, "Preflight and
// recovery").
func operatorAction(wh string) string {
	return "run `cairn admin catalog recover " + wh + " --dry-run` to see why, fix the table with Iceberg tooling " +
		"(for example re-register it from a good metadata file), then `cairn admin catalog recover " + wh + "`"
}
