package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// JobKind is a kind of table maintenance, named as S3 Tables names it.
type JobKind string

// The maintenance jobs.
const (
	// JobCompaction rewrites small data files into files of a target
	// size (binpack).
	JobCompaction JobKind = "icebergCompaction"
	// JobSnapshots expires snapshots past a maximum age, keeping a
	// minimum number.
	JobSnapshots JobKind = "icebergSnapshotManagement"
	// JobUnreferenced deletes the files under a table's location that no
	// metadata references, once older than a grace period.
	JobUnreferenced JobKind = "icebergUnreferencedFileRemoval"
)

// JobKinds lists the jobs in the order a maintenance run takes them:
// compaction first (its replaced files stay referenced by the old
// snapshots), then snapshot expiry (which unreferences them), then the
// removal of what nothing references any more.
func JobKinds() []JobKind { return []JobKind{JobCompaction, JobSnapshots, JobUnreferenced} }

// ParseJobKind checks a job name.
func ParseJobKind(s string) (JobKind, error) {
	for _, k := range JobKinds() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("%w: unknown maintenance type %q: use %s, %s or %s", ErrBadRequest, s, JobCompaction, JobSnapshots, JobUnreferenced)
}

// JobConfig configures one maintenance job; the fields of other jobs stay
// zero. Zero fields of an enabled job take the defaults (those of S3
// Tables).
type JobConfig struct {
	Enabled bool
	// JobCompaction: the target size of the files it writes, and the
	// strategy ("auto" or "binpack", which are the same here).
	TargetFileSize int64
	Strategy       string
	// JobSnapshots: a branch keeps at least MinSnapshotsToKeep of its
	// newest snapshots, and every snapshot younger than MaxSnapshotAge.
	MinSnapshotsToKeep int
	MaxSnapshotAge     time.Duration
	// JobUnreferenced: a file no metadata references is deleted once it
	// is older than UnreferencedAfter (a writer's files not yet
	// committed are younger). NonCurrentAfter is kept and reported for
	// S3 Tables clients; files here have no noncurrent stage.
	UnreferencedAfter time.Duration
	NonCurrentAfter   time.Duration
}

// jobConfigJSON is JobConfig's JSON (the records' and the REST face's):
// durations in Go's notation ("72h", "90s").
type jobConfigJSON struct {
	Enabled            bool   `json:"enabled"`
	TargetFileSize     int64  `json:"target-file-size-bytes,omitempty"`
	Strategy           string `json:"strategy,omitempty"`
	MinSnapshotsToKeep int    `json:"min-snapshots-to-keep,omitempty"`
	MaxSnapshotAge     string `json:"max-snapshot-age,omitempty"`
	UnreferencedAfter  string `json:"unreferenced-after,omitempty"`
	NonCurrentAfter    string `json:"noncurrent-after,omitempty"`
}

// MarshalJSON renders durations as Go durations.
func (c JobConfig) MarshalJSON() ([]byte, error) {
	d := func(v time.Duration) string {
		if v == 0 {
			return ""
		}
		return v.String()
	}
	return json.Marshal(jobConfigJSON{c.Enabled, c.TargetFileSize, c.Strategy, c.MinSnapshotsToKeep,
		d(c.MaxSnapshotAge), d(c.UnreferencedAfter), d(c.NonCurrentAfter)})
}

// UnmarshalJSON parses MarshalJSON's form; a bad duration is
// ErrBadRequest.
func (c *JobConfig) UnmarshalJSON(b []byte) error {
	var j jobConfigJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("%w: maintenance settings: %w", ErrBadRequest, err)
	}
	var errs []error
	d := func(name, v string) time.Duration {
		if v == "" {
			return 0
		}
		t, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s %q is not a duration: write it as 90s, 36h or 1h30m", ErrBadRequest, name, v))
		}
		return t
	}
	*c = JobConfig{Enabled: j.Enabled, TargetFileSize: j.TargetFileSize, Strategy: j.Strategy, MinSnapshotsToKeep: j.MinSnapshotsToKeep,
		MaxSnapshotAge:    d("max-snapshot-age", j.MaxSnapshotAge),
		UnreferencedAfter: d("unreferenced-after", j.UnreferencedAfter),
		NonCurrentAfter:   d("noncurrent-after", j.NonCurrentAfter)}
	return errors.Join(errs...)
}

// The defaults of an enabled job, and the bounds of its settings.
const (
	DefaultTargetFileSize     = 512 << 20
	MinTargetFileSize         = 1 << 20
	MaxTargetFileSize         = 512 << 20
	DefaultMinSnapshotsToKeep = 1
	DefaultMaxSnapshotAge     = 120 * time.Hour
	DefaultUnreferencedAfter  = 3 * 24 * time.Hour
	DefaultNonCurrentAfter    = 10 * 24 * time.Hour
	// MinUnreferencedAfter keeps a removal away from the files of a
	// commit in flight.
	MinUnreferencedAfter = time.Second
)

// withDefaults fills the zero settings of an enabled job of kind k.
func (c JobConfig) withDefaults(k JobKind) JobConfig {
	switch k {
	case JobCompaction:
		if c.TargetFileSize == 0 {
			c.TargetFileSize = DefaultTargetFileSize
		}
		if c.Strategy == "" {
			c.Strategy = "auto"
		}
	case JobSnapshots:
		if c.MinSnapshotsToKeep == 0 {
			c.MinSnapshotsToKeep = DefaultMinSnapshotsToKeep
		}
		if c.MaxSnapshotAge == 0 {
			c.MaxSnapshotAge = DefaultMaxSnapshotAge
		}
	case JobUnreferenced:
		if c.UnreferencedAfter == 0 {
			c.UnreferencedAfter = DefaultUnreferencedAfter
		}
		if c.NonCurrentAfter == 0 {
			c.NonCurrentAfter = DefaultNonCurrentAfter
		}
	}
	return c
}

// check validates the settings of a job of kind k, defaults applied.
func (c JobConfig) check(k JobKind) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrBadRequest, k, fmt.Sprintf(format, args...))
	}
	other := func(set bool, name string) error {
		if set {
			return bad("%s does not apply to this job", name)
		}
		return nil
	}
	var errs []error
	switch k {
	case JobCompaction:
		if c.TargetFileSize < MinTargetFileSize || c.TargetFileSize > MaxTargetFileSize {
			errs = append(errs, bad("target file size %d bytes: between %d and %d (1 and 512 MiB)", c.TargetFileSize, MinTargetFileSize, MaxTargetFileSize))
		}
		switch c.Strategy {
		case "auto", "binpack":
		case "sort", "z-order":
			errs = append(errs, bad("strategy %q is not supported: use auto or binpack", c.Strategy))
		default:
			errs = append(errs, bad("unknown strategy %q: use auto or binpack", c.Strategy))
		}
		errs = append(errs, other(c.MinSnapshotsToKeep != 0 || c.MaxSnapshotAge != 0, "snapshot retention"),
			other(c.UnreferencedAfter != 0 || c.NonCurrentAfter != 0, "unreferenced file removal"))
	case JobSnapshots:
		if c.MinSnapshotsToKeep < 1 {
			errs = append(errs, bad("minimum snapshots to keep %d: at least 1", c.MinSnapshotsToKeep))
		}
		if c.MaxSnapshotAge < time.Millisecond {
			errs = append(errs, bad("maximum snapshot age %s: at least 1ms", c.MaxSnapshotAge))
		}
		errs = append(errs, other(c.TargetFileSize != 0 || c.Strategy != "", "compaction"),
			other(c.UnreferencedAfter != 0 || c.NonCurrentAfter != 0, "unreferenced file removal"))
	case JobUnreferenced:
		if c.UnreferencedAfter < MinUnreferencedAfter {
			errs = append(errs, bad("grace period %s: at least %s", c.UnreferencedAfter, MinUnreferencedAfter))
		}
		if c.NonCurrentAfter < 0 {
			errs = append(errs, bad("noncurrent days must not be negative"))
		}
		errs = append(errs, other(c.TargetFileSize != 0 || c.Strategy != "", "compaction"),
			other(c.MinSnapshotsToKeep != 0 || c.MaxSnapshotAge != 0, "snapshot retention"))
	}
	return errors.Join(errs...)
}

// The states of a JobStatus, as S3 Tables spells them.
const (
	JobNotYetRun  = "Not_Yet_Run"
	JobSuccessful = "Successful"
	JobFailed     = "Failed"
	JobDisabled   = "Disabled"
)

// JobStatus is the outcome of a table's last run of one job.
type JobStatus struct {
	Status  string    `json:"status"`
	LastRun time.Time `json:"last-run,omitzero"`
	// Failure says why the last run failed.
	Failure string `json:"failure,omitempty"`
	// Counts are what the last run did: "snapshots-expired",
	// "files-removed", "bytes-removed", "files-rewritten",
	// "files-written".
	Counts map[string]int64 `json:"counts,omitempty"`
}

// Maintenance is the maintenance of a warehouse or of a table: the jobs it
// configures itself (Own), what applies (Effective: a table's own job,
// else its warehouse's, else disabled) and, for a table, each job's last
// outcome.
type Maintenance struct {
	Own       map[JobKind]JobConfig `json:"configuration"`
	Effective map[JobKind]JobConfig `json:"effective"`
	Status    map[JobKind]JobStatus `json:"status,omitempty"`
}

// maintenanceRec is a KindMaintenance record: the warehouse's (key
// warehouseMaintenanceKey) or a table's (key TableKey).
type maintenanceRec struct {
	Jobs   map[JobKind]JobConfig `json:"jobs,omitempty"`
	Status map[JobKind]JobStatus `json:"status,omitempty"`
}

// warehouseMaintenanceKey is the warehouse's record; table keys always
// hold tableSep, so it names no table.
const warehouseMaintenanceKey = "warehouse"

func maintenanceKey(id *Ident) string {
	if id == nil {
		return warehouseMaintenanceKey
	}
	return identKey(*id)
}

// readMaintenance reads a maintenance record (empty when absent) and its
// version ("" when absent).
func (s *Service) readMaintenance(ctx context.Context, wh string, id *Ident) (maintenanceRec, string, error) {
	var rec maintenanceRec
	ver, err := s.getJSON(ctx, wh, KindMaintenance, maintenanceKey(id), &rec)
	if errors.Is(err, ErrNotFound) {
		return maintenanceRec{}, "", nil
	}
	return rec, ver, err
}

// updateMaintenance applies fn to a maintenance record with a conditional
// write, again when a concurrent update won.
func (s *Service) updateMaintenance(ctx context.Context, wh string, id *Ident, fn func(*maintenanceRec)) error {
	for {
		rec, ver, err := s.readMaintenance(ctx, wh, id)
		if err != nil {
			return err
		}
		fn(&rec)
		_, err = s.putJSON(ctx, wh, KindMaintenance, maintenanceKey(id), rec, ver)
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		}
		return err
	}
}

// effectiveJob is the job k that applies to a table: its own setting,
// else its warehouse's (zero, disabled, when neither sets it).
func effectiveJob(table, warehouse maintenanceRec, k JobKind) JobConfig {
	if c, ok := table.Jobs[k]; ok {
		return c
	}
	return warehouse.Jobs[k]
}

// checkTarget checks that the warehouse, and the table when id is set,
// exist.
func (s *Service) checkTarget(ctx context.Context, wh string, id *Ident) error {
	if _, err := s.GetWarehouse(ctx, wh); err != nil {
		return err
	}
	if id == nil {
		return nil
	}
	if err := validIdent(*id); err != nil {
		return err
	}
	_, _, err := s.loadPointer(ctx, wh, KindTable, *id)
	return err
}

// Maintenance implements Catalog.
func (s *Service) Maintenance(ctx context.Context, wh string, id *Ident) (Maintenance, error) {
	if err := s.checkTarget(ctx, wh, id); err != nil {
		return Maintenance{}, err
	}
	whRec, _, err := s.readMaintenance(ctx, wh, nil)
	if err != nil {
		return Maintenance{}, err
	}
	own := whRec
	if id != nil {
		if own, _, err = s.readMaintenance(ctx, wh, id); err != nil {
			return Maintenance{}, err
		}
	}
	m := Maintenance{Own: map[JobKind]JobConfig{}, Effective: map[JobKind]JobConfig{}}
	for _, k := range JobKinds() {
		if c, ok := own.Jobs[k]; ok {
			m.Own[k] = c
		}
		m.Effective[k] = effectiveJob(own, whRec, k)
	}
	if id == nil {
		return m, nil
	}
	m.Status = map[JobKind]JobStatus{}
	for _, k := range JobKinds() {
		st, ok := own.Status[k]
		switch {
		case !m.Effective[k].Enabled:
			st.Status = JobDisabled
		case !ok:
			st = JobStatus{Status: JobNotYetRun}
		}
		m.Status[k] = st
	}
	return m, nil
}

// SetMaintenance implements Catalog.
func (s *Service) SetMaintenance(ctx context.Context, wh string, id *Ident, kind JobKind, cfg JobConfig) error {
	if _, err := ParseJobKind(string(kind)); err != nil {
		return err
	}
	if cfg.Enabled {
		cfg = cfg.withDefaults(kind)
		if err := cfg.check(kind); err != nil {
			return err
		}
	}
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	if err := s.checkTarget(ctx, wh, id); err != nil {
		return err
	}
	return s.updateMaintenance(ctx, wh, id, func(r *maintenanceRec) {
		if r.Jobs == nil {
			r.Jobs = map[JobKind]JobConfig{}
		}
		r.Jobs[kind] = cfg
	})
}

// RecordMaintenance keeps the outcome of a run of one job on a table
// (catalog/maintain calls it). It is fenced like any write.
func (s *Service) RecordMaintenance(ctx context.Context, wh string, id Ident, kind JobKind, st JobStatus) error {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	return s.updateMaintenance(ctx, wh, &id, func(r *maintenanceRec) {
		if r.Status == nil {
			r.Status = map[JobKind]JobStatus{}
		}
		r.Status[kind] = st
	})
}

// MaintainedTables lists the tables of a warehouse with at least one
// maintenance job enabled (their own or the warehouse's), for the
// scheduler.
func (s *Service) MaintainedTables(ctx context.Context, wh string) ([]Ident, error) {
	whRec, _, err := s.readMaintenance(ctx, wh, nil)
	if err != nil {
		return nil, err
	}
	own := map[string]maintenanceRec{}
	err = ListAll(ctx, s.b, wh, KindMaintenance, false, func(r Record) error {
		if r.Key == warehouseMaintenanceKey {
			return nil
		}
		var rec maintenanceRec
		if err := json.Unmarshal(r.Value, &rec); err != nil {
			return fmt.Errorf("catalog: corrupt %s record %q: %w", KindMaintenance, r.Key, err)
		}
		own[r.Key] = rec
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Ident
	err = ListAll(ctx, s.b, wh, KindTable, true, func(r Record) error {
		rec := own[r.Key]
		for _, k := range JobKinds() {
			if effectiveJob(rec, whRec, k).Enabled {
				out = append(out, identFromKey(r.Key))
				return nil
			}
		}
		return nil
	})
	return out, err
}
