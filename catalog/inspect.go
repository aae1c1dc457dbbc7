package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Inspection is what a cutover preflight needs to know about one
// warehouse's records: counts, and the recovery findings (a dry run of
// RecoverWarehouse).
type Inspection struct {
	Namespaces, Tables, Views, Commits, Idempotency, Prefixes int
	// Report is the dry-run recovery report.
	Report RecoveryReport
	// Collisions are identifiers that are both a table and a view.
	Collisions []Ident

	entries  []entry         // every table and view pointer
	stagedTo map[string]bool // metadata files staged commits write
}

// walk calls fn for every record of a kind of warehouse wh, in key order.
func (s *Service) walk(ctx context.Context, wh string, kind Kind, fn func(Record) error) error {
	return ListAll(ctx, s.b, wh, kind, false, fn)
}

// entry is a table or view pointer seen by a walk.
type entry struct {
	kind Kind
	key  string
	p    pointerRec
	// decodeErr: the record does not decode (p is empty); such entries
	// are in examine's by-key map only, for examineCommits.
	decodeErr error
}

// Inspect looks at every record of a warehouse and reports counts and
// what recovery would do. It changes nothing.
func (s *Service) Inspect(ctx context.Context, wh string) (Inspection, error) {
	if err := s.requireWarehouse(ctx, wh); err != nil {
		return Inspection{}, err
	}
	rep, in, err := s.examine(ctx, wh)
	if err != nil {
		return Inspection{}, err
	}
	rep.DryRun = true
	in.Report = rep
	return in, nil
}

// RecoverWarehouse resolves what a crash or a bug left behind in one
// warehouse: staged commits are rolled forward or back by their pointer
// (classifyStaged, the rule Recover follows at start), the location
// prefix index is backfilled and stale entries dropped, expired
// idempotency entries forgotten, and metadata files that a commit stopped
// before its staged record left behind removed (orphans.go). Findings it
// cannot decide (undecodable records, a staged commit whose table's
// current metadata file cannot be read, overlapping table locations,
// table/view collisions) are listed under ManualReview and left alone.
// With dryRun nothing is changed.
func (s *Service) RecoverWarehouse(ctx context.Context, wh string, dryRun bool) (RecoveryReport, error) {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return RecoveryReport{}, err
	}
	defer release()
	if err := s.requireWarehouse(ctx, wh); err != nil {
		return RecoveryReport{}, err
	}
	rep, in, err := s.examine(ctx, wh)
	if err != nil {
		return rep, err
	}
	if err := s.examineOrphans(ctx, wh, in, &rep); err != nil {
		return rep, err
	}
	rep.DryRun = dryRun
	if dryRun {
		return rep, nil
	}
	for _, it := range rep.Repaired {
		if err := s.repair(ctx, wh, it); err != nil {
			return rep, fmt.Errorf("catalog: recover %s %s %q: %w", wh, it.Kind, it.Key, err)
		}
	}
	if n := len(rep.Repaired); n > 0 || len(rep.ManualReview) > 0 {
		s.log.Info().Str("warehouse", wh).Int("repaired", n).Int("manual_review", len(rep.ManualReview)).Msg("catalog recovery")
	}
	return rep, nil
}

// repair carries out one repairable finding of examine.
func (s *Service) repair(ctx context.Context, wh string, it RecoveryItem) error {
	switch it.Kind {
	case "commit":
		var c commitRec
		ver, err := s.getJSON(ctx, wh, KindCommit, it.Key, &c)
		if err != nil {
			return err
		}
		if c.State != commitStaged {
			return nil // resolved meanwhile
		}
		state := commitCommitted
		if it.Action == RecoverRollBack {
			state = commitAbandoned
		}
		s.resolve(ctx, wh, c, ver, state)
		return nil
	case "prefix":
		if it.Action == RecoverDropStale {
			return s.b.Delete(ctx, wh, KindPrefix, it.Key, AnyVersion)
		}
		if it.Ident == nil || it.EntryKind == "" {
			return errors.New("catalog: backfill finding without its entry")
		}
		_, err := s.putJSON(ctx, wh, KindPrefix, it.Key, prefixRec{Ident: *it.Ident, Kind: it.EntryKind}, AnyVersion)
		return err
	case "metadata":
		return s.deleteObject(ctx, wh, it.Key)
	case "idempotency":
		err := s.b.Delete(ctx, wh, KindIdempotency, it.Key, AnyVersion)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	}
	return fmt.Errorf("catalog: cannot repair a %s finding", it.Kind)
}

// examine walks a warehouse and lists what recovery would do.
func (s *Service) examine(ctx context.Context, wh string) (RecoveryReport, Inspection, error) {
	rep := RecoveryReport{TableBucket: wh, Repaired: []RecoveryItem{}, ManualReview: []RecoveryItem{}}
	var in Inspection
	if err := s.walk(ctx, wh, KindNamespace, func(Record) error { in.Namespaces++; return nil }); err != nil {
		return rep, in, err
	}
	entries := map[string]entry{} // by kind + key
	var all []entry
	for _, kind := range []Kind{KindTable, KindView} {
		err := s.walk(ctx, wh, kind, func(r Record) error {
			var p pointerRec
			if err := json.Unmarshal(r.Value, &p); err != nil {
				id := identFromKey(r.Key)
				rep.ManualReview = append(rep.ManualReview, RecoveryItem{Kind: string(kind), Key: r.Key, Ident: &id, Action: RecoverManualReview, Reason: "undecodable pointer record: " + err.Error()})
				entries[string(kind)+"/"+r.Key] = entry{kind: kind, key: r.Key, decodeErr: err}
				return nil
			}
			e := entry{kind: kind, key: r.Key, p: p}
			entries[string(kind)+"/"+r.Key] = e
			all = append(all, e)
			if kind == KindTable {
				in.Tables++
			} else {
				in.Views++
			}
			return nil
		})
		if err != nil {
			return rep, in, err
		}
	}
	for _, e := range all {
		if e.kind == KindTable {
			if _, ok := entries[string(KindView)+"/"+e.key]; ok {
				id := identFromKey(e.key)
				in.Collisions = append(in.Collisions, id)
				rep.ManualReview = append(rep.ManualReview, RecoveryItem{Kind: "identifier", Key: e.key, Ident: &id, Action: RecoverManualReview, Reason: "identifier is both a table and a view"})
			}
		}
	}
	in.entries = all
	if err := s.examineCommits(ctx, wh, entries, &rep, &in); err != nil {
		return rep, in, err
	}
	if err := s.examineIdempotency(ctx, wh, &rep, &in); err != nil {
		return rep, in, err
	}
	if err := s.examinePrefixes(ctx, wh, all, &rep, &in); err != nil {
		return rep, in, err
	}
	return rep, in, nil
}

// examineCommits decides every staged commit by its pointer
// (classifyStaged, the rule Recover follows too).
func (s *Service) examineCommits(ctx context.Context, wh string, entries map[string]entry, rep *RecoveryReport, in *Inspection) error {
	return s.walk(ctx, wh, KindCommit, func(r Record) error {
		in.Commits++
		rep.Commits++
		var c commitRec
		if err := json.Unmarshal(r.Value, &c); err != nil {
			rep.ManualReview = append(rep.ManualReview, RecoveryItem{Kind: "commit", Key: r.Key, Action: RecoverManualReview, Reason: "undecodable commit record: " + err.Error()})
			return nil
		}
		s.mu.Lock()
		running := s.inflight[c.ID]
		s.mu.Unlock()
		if c.State != commitStaged || running {
			return nil
		}
		if in.stagedTo == nil {
			in.stagedTo = map[string]bool{}
		}
		in.stagedTo[c.To] = true
		id := c.Ident
		var ptr pointerSeen
		if e, ok := entries[string(c.Kind)+"/"+identKey(c.Ident)]; ok {
			ptr = pointerSeen{found: true, decodeErr: e.decodeErr, p: e.p}
		}
		v, err := s.classify(ctx, wh, c, ptr)
		if err != nil {
			return err
		}
		item := RecoveryItem{Kind: "commit", Key: r.Key, Ident: &id, Action: v.outcome.String(), Reason: v.reason}
		if item.Action == RecoverManualReview {
			rep.ManualReview = append(rep.ManualReview, item)
		} else {
			rep.Repaired = append(rep.Repaired, item)
		}
		return nil
	})
}

// examineIdempotency finds expired and undecodable idempotency entries.
func (s *Service) examineIdempotency(ctx context.Context, wh string, rep *RecoveryReport, in *Inspection) error {
	return s.walk(ctx, wh, KindIdempotency, func(r Record) error {
		in.Idempotency++
		rep.Idempotency++
		var rec idempotencyRec
		switch err := json.Unmarshal(r.Value, &rec); {
		case err != nil:
			rep.ManualReview = append(rep.ManualReview, RecoveryItem{Kind: "idempotency", Key: r.Key, Action: RecoverManualReview, Reason: "undecodable idempotency record: " + err.Error()})
		case s.now().After(rec.Expires):
			rep.Repaired = append(rep.Repaired, RecoveryItem{Kind: "idempotency", Key: r.Key, Action: RecoverDropExpired, Reason: "expired " + rec.Expires.Format("2006-01-02T15:04:05Z")})
		}
		return nil
	})
}

// examinePrefixes checks the location prefix index against the pointers:
// every entry's location indexed (BACKFILL), no entry naming a location
// nobody has (DROP_STALE), no two entries at equal or nested locations
// (MANUAL_REVIEW).
func (s *Service) examinePrefixes(ctx context.Context, wh string, all []entry, rep *RecoveryReport, in *Inspection) error {
	index := map[string]prefixRec{}
	err := s.walk(ctx, wh, KindPrefix, func(r Record) error {
		var p prefixRec
		if err := json.Unmarshal(r.Value, &p); err != nil {
			rep.Repaired = append(rep.Repaired, RecoveryItem{Kind: "prefix", Key: r.Key, Action: RecoverDropStale, Reason: "undecodable prefix record"})
			return nil
		}
		index[r.Key] = p
		return nil
	})
	if err != nil {
		return err
	}
	want := map[string][]entry{}
	for _, e := range all {
		if e.p.Location == "" {
			continue
		}
		k, err := prefixKey(wh, e.p.Location)
		if err != nil {
			id := identFromKey(e.key)
			rep.ManualReview = append(rep.ManualReview, RecoveryItem{Kind: "prefix", Key: e.key, Ident: &id, Action: RecoverManualReview, Reason: "location outside the warehouse: " + e.p.Location})
			continue
		}
		want[k] = append(want[k], e)
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	in.Prefixes = len(keys)
	for i, k := range keys {
		es := want[k]
		if len(es) > 1 || (i+1 < len(keys) && strings.HasPrefix(keys[i+1], k)) {
			other := k
			if len(es) == 1 {
				other = keys[i+1]
			}
			id := identFromKey(es[0].key)
			rep.ManualReview = append(rep.ManualReview, RecoveryItem{Kind: "prefix", Key: k, Ident: &id, Action: RecoverManualReview, Reason: "table locations overlap: " + k + " and " + other})
			continue
		}
		e := es[0]
		got, ok := index[k]
		if ok && got.Kind == e.kind && sameIdent(got.Ident, identFromKey(e.key)) {
			continue
		}
		id := identFromKey(e.key)
		rep.Repaired = append(rep.Repaired, RecoveryItem{Kind: "prefix", Key: k, Ident: &id, EntryKind: e.kind, Action: RecoverBackfill, Reason: "location not indexed"})
	}
	for k := range index {
		if _, ok := want[k]; !ok {
			rep.Repaired = append(rep.Repaired, RecoveryItem{Kind: "prefix", Key: k, Action: RecoverDropStale, Reason: "no table or view has this location"})
		}
	}
	sort.SliceStable(rep.Repaired, func(i, j int) bool { return itemLess(rep.Repaired[i], rep.Repaired[j]) })
	return nil
}

func itemLess(a, b RecoveryItem) bool {
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.Key < b.Key
}

// Assess turns an inspection into a preflight status with its blockers
// and recommended actions (RustFS's words and order).
func (in Inspection) Assess() (status string, blockers, actions []string) {
	var recovery, manual, backfill, prefixes, collisions bool
	for _, it := range in.Report.Repaired {
		switch it.Kind {
		case "commit":
			recovery = true
		case "prefix":
			backfill = true
		}
	}
	for _, it := range in.Report.ManualReview {
		switch it.Kind {
		case "prefix":
			prefixes = true
		case "identifier":
			collisions = true
		default:
			manual = true
		}
	}
	add := func(cond bool, b, a string) {
		if cond {
			blockers = append(blockers, b)
			actions = append(actions, a)
		}
	}
	add(recovery, blockerCommitRecovery, actionRunRecovery)
	add(manual, blockerCommitManualReview, actionRunRecovery)
	add(backfill, blockerIndexBackfill, actionBackfillIndex)
	add(prefixes, blockerDuplicatePrefix, actionReviewPrefixes)
	add(collisions, blockerIdentifierCollision, actionReviewCollisions)
	switch {
	case manual || prefixes || collisions:
		status = StatusManualReviewRequired
	case recovery || backfill:
		status = StatusRecoveryRequired
	default:
		status = StatusReadyToSnapshot
	}
	return status, blockers, dedup(actions)
}

// IndexReady reports whether the location prefix index matches the
// pointers.
func (in Inspection) IndexReady() bool {
	for _, it := range in.Report.Repaired {
		if it.Kind == "prefix" {
			return false
		}
	}
	return true
}

func dedup(s []string) []string {
	out := s[:0]
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
