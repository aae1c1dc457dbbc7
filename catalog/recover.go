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
	if rep.Committed+rep.Abandoned > 0 {
		s.log.Info().Int("committed", rep.Committed).Int("abandoned", rep.Abandoned).Msg("recovered staged commits")
	}
	return rep, nil
}

// recoverWarehouse resolves the staged commits of one warehouse.
func (s *Service) recoverWarehouse(ctx context.Context, wh string, rep *RecoverReport) error {
	staged, err := s.StagedCommits(ctx, wh)
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
// committed or abandoned), skipping those this Service is running.
func (s *Service) StagedCommits(ctx context.Context, wh string) ([]StagedCommit, error) {
	var out []StagedCommit
	err := s.walk(ctx, wh, KindCommit, func(r Record) error {
		var c commitRec
		if err := json.Unmarshal(r.Value, &c); err != nil {
			return fmt.Errorf("catalog: corrupt %s record %q: %w", KindCommit, r.Key, err)
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

// recoverOne resolves one staged commit by looking at the pointer.
func (s *Service) recoverOne(ctx context.Context, wh string, c StagedCommit, rep *RecoverReport) error {
	var p pointerRec
	_, err := s.getJSON(ctx, wh, c.Kind, identKey(c.Ident), &p)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("catalog: recover %s: %w", c.ID, err)
	}
	if err == nil && (p.MetadataLocation == c.To || s.inMetadataLog(ctx, wh, p.MetadataLocation, c.To)) {
		s.resolve(ctx, wh, c.rec, c.version, commitCommitted)
		rep.Committed++
		return nil
	}
	s.resolve(ctx, wh, c.rec, c.version, commitAbandoned)
	rep.Abandoned++
	return nil
}

// inMetadataLog reports whether the metadata file at cur lists loc in its
// metadata-log: the commit to loc succeeded and later ones followed.
func (s *Service) inMetadataLog(ctx context.Context, wh, cur, loc string) bool {
	data, err := s.readMetadata(ctx, wh, cur)
	if err != nil {
		return false
	}
	var m struct {
		Log []struct {
			File string `json:"metadata-file"`
		} `json:"metadata-log"`
	}
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	for _, e := range m.Log {
		if e.File == loc {
			return true
		}
	}
	return false
}
