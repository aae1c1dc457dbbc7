package iceberg

import (
	"math"
	"slices"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

// Table maintenance as S3 Tables configures it, over the catalog's
// (catalog.JobConfig): compaction and snapshot management per table,
// unreferenced file removal per table bucket. A table's configuration
// answers what applies to it (its own, else its bucket's, else disabled),
// with the catalog's defaults in the settings left unset.

// s3tMaintenanceValue is TableMaintenanceConfigurationValue and
// TableBucketMaintenanceConfigurationValue.
type s3tMaintenanceValue struct {
	Status   string                  `json:"status,omitempty"`
	Settings *s3tMaintenanceSettings `json:"settings,omitempty"`
}

// s3tMaintenanceSettings is TableMaintenanceSettings and
// TableBucketMaintenanceSettings (unions: one member set).
type s3tMaintenanceSettings struct {
	Compaction   *s3tCompaction   `json:"icebergCompaction,omitempty"`
	Snapshots    *s3tSnapshots    `json:"icebergSnapshotManagement,omitempty"`
	Unreferenced *s3tUnreferenced `json:"icebergUnreferencedFileRemoval,omitempty"`
}

// s3tCompaction is IcebergCompactionSettings.
type s3tCompaction struct {
	TargetFileSizeMB *int64 `json:"targetFileSizeMB,omitempty"`
	Strategy         string `json:"strategy,omitempty"`
}

// s3tSnapshots is IcebergSnapshotManagementSettings.
type s3tSnapshots struct {
	MinSnapshotsToKeep  *int64 `json:"minSnapshotsToKeep,omitempty"`
	MaxSnapshotAgeHours *int64 `json:"maxSnapshotAgeHours,omitempty"`
}

// s3tUnreferenced is IcebergUnreferencedFileRemovalSettings.
type s3tUnreferenced struct {
	UnreferencedDays *int64 `json:"unreferencedDays,omitempty"`
	NonCurrentDays   *int64 `json:"nonCurrentDays,omitempty"`
}

// s3tPutMaintenanceRequest is the body of PutTableMaintenanceConfiguration
// and PutTableBucketMaintenanceConfiguration.
type s3tPutMaintenanceRequest struct {
	Value *s3tMaintenanceValue `json:"value"`
}

// s3tTableMaintenanceResponse is GetTableMaintenanceConfigurationResponse.
type s3tTableMaintenanceResponse struct {
	TableARN      string                         `json:"tableARN"`
	Configuration map[string]s3tMaintenanceValue `json:"configuration"`
}

// s3tBucketMaintenanceResponse is
// GetTableBucketMaintenanceConfigurationResponse.
type s3tBucketMaintenanceResponse struct {
	TableBucketARN string                         `json:"tableBucketARN"`
	Configuration  map[string]s3tMaintenanceValue `json:"configuration"`
}

// s3tJobStatusResponse is GetTableMaintenanceJobStatusResponse.
type s3tJobStatusResponse struct {
	TableARN string                  `json:"tableARN"`
	Status   map[string]s3tJobStatus `json:"status"`
}

// s3tJobStatus is TableMaintenanceJobStatusValue.
type s3tJobStatus struct {
	Status           string    `json:"status"`
	LastRunTimestamp time.Time `json:"lastRunTimestamp,omitzero"`
	FailureMessage   string    `json:"failureMessage,omitempty"`
}

// s3tTableJobs are the jobs configured per table.
func s3tTableJobs() []catalog.JobKind {
	return []catalog.JobKind{catalog.JobCompaction, catalog.JobSnapshots}
}

// s3tBucketJobs are the jobs configured per table bucket.
func s3tBucketJobs() []catalog.JobKind { return []catalog.JobKind{catalog.JobUnreferenced} }

// The bounds of the settings: the model's PositiveInteger, and what a
// time.Duration holds.
const (
	s3tMaxPositive = math.MaxInt32
	s3tMaxHours    = int64(math.MaxInt64 / time.Hour)
	s3tMaxDays     = s3tMaxHours / 24
	s3tMiB         = 1 << 20
)

// s3tJobKind checks the {type} of a put: a job of allowed, else what to
// use instead.
func s3tJobKind(typ string, allowed []catalog.JobKind, instead string) (catalog.JobKind, error) {
	k, err := catalog.ParseJobKind(typ)
	if err != nil {
		return "", err
	}
	if !slices.Contains(allowed, k) {
		return "", badRequest("%s is not configured here: use %s", k, instead)
	}
	return k, nil
}

// s3tJobConfig converts the value of a put for job k. A value without a
// status enables the job; settings left out take the catalog's defaults.
// Errors are 400s.
func s3tJobConfig(k catalog.JobKind, v s3tMaintenanceValue) (catalog.JobConfig, error) {
	var c catalog.JobConfig
	switch v.Status {
	case "", "enabled":
		c.Enabled = true
	case "disabled":
	default:
		return c, badRequest("status %q: give enabled or disabled", clipQuoted(v.Status))
	}
	s := v.Settings
	if s == nil {
		s = &s3tMaintenanceSettings{}
	}
	for _, other := range []struct {
		kind catalog.JobKind
		set  bool
	}{{catalog.JobCompaction, s.Compaction != nil}, {catalog.JobSnapshots, s.Snapshots != nil}, {catalog.JobUnreferenced, s.Unreferenced != nil}} {
		if other.set && other.kind != k {
			return c, badRequest("settings.%s does not apply to %s: give settings.%s, or no settings", other.kind, k, k)
		}
	}
	var err error
	switch {
	case s.Compaction != nil:
		var mb int64
		if mb, err = s3tPositive("targetFileSizeMB", s.Compaction.TargetFileSizeMB, s3tMaxPositive); err == nil {
			c.TargetFileSize = mb * s3tMiB
			c.Strategy = s.Compaction.Strategy
		}
	case s.Snapshots != nil:
		var n, h int64
		if n, err = s3tPositive("minSnapshotsToKeep", s.Snapshots.MinSnapshotsToKeep, s3tMaxPositive); err == nil {
			h, err = s3tPositive("maxSnapshotAgeHours", s.Snapshots.MaxSnapshotAgeHours, s3tMaxHours)
			c.MinSnapshotsToKeep, c.MaxSnapshotAge = int(n), time.Duration(h)*time.Hour
		}
	case s.Unreferenced != nil:
		var u, n int64
		if u, err = s3tPositive("unreferencedDays", s.Unreferenced.UnreferencedDays, s3tMaxDays); err == nil {
			n, err = s3tPositive("nonCurrentDays", s.Unreferenced.NonCurrentDays, s3tMaxDays)
			c.UnreferencedAfter, c.NonCurrentAfter = time.Duration(u)*24*time.Hour, time.Duration(n)*24*time.Hour
		}
	}
	return c, err
}

// s3tPositive checks an optional setting: absent is 0 (the default), given
// it is from 1 to most.
func s3tPositive(name string, v *int64, most int64) (int64, error) {
	switch {
	case v == nil:
		return 0, nil
	case *v < 1 || *v > most:
		return 0, badRequest("%s %d: give a number from 1 to %d, or leave it out for the default", name, *v, most)
	}
	return *v, nil
}

// s3tMaintenanceValueOf renders the configuration of job k, the
// catalog's defaults in place of the settings left unset.
func s3tMaintenanceValueOf(k catalog.JobKind, c catalog.JobConfig) s3tMaintenanceValue {
	v := s3tMaintenanceValue{Status: "disabled", Settings: &s3tMaintenanceSettings{}}
	if c.Enabled {
		v.Status = "enabled"
	}
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	switch k {
	case catalog.JobCompaction:
		size := c.TargetFileSize
		if size <= 0 {
			size = catalog.DefaultTargetFileSize
		}
		strategy := c.Strategy
		if strategy == "" {
			strategy = "auto"
		}
		v.Settings.Compaction = &s3tCompaction{TargetFileSizeMB: s3tPtr(s3tCeilDiv(size, s3tMiB)), Strategy: strategy}
	case catalog.JobSnapshots:
		n := int64(c.MinSnapshotsToKeep)
		if n <= 0 {
			n = catalog.DefaultMinSnapshotsToKeep
		}
		v.Settings.Snapshots = &s3tSnapshots{MinSnapshotsToKeep: s3tPtr(n),
			MaxSnapshotAgeHours: s3tPtr(s3tCeilDiv(int64(or(c.MaxSnapshotAge, catalog.DefaultMaxSnapshotAge)), int64(time.Hour)))}
	case catalog.JobUnreferenced:
		day := int64(24 * time.Hour)
		v.Settings.Unreferenced = &s3tUnreferenced{
			UnreferencedDays: s3tPtr(s3tCeilDiv(int64(or(c.UnreferencedAfter, catalog.DefaultUnreferencedAfter)), day)),
			NonCurrentDays:   s3tPtr(s3tCeilDiv(int64(or(c.NonCurrentAfter, catalog.DefaultNonCurrentAfter)), day))}
	}
	return v
}

// s3tCeilDiv is a/b rounded up, for a > 0: a setting given in finer units
// (through the Iceberg face) answers the next whole unit, never 0.
func s3tCeilDiv(a, b int64) int64 { return (a-1)/b + 1 }

// s3tPtr points at a copy of v.
func s3tPtr[T any](v T) *T { return &v }

// s3tJobStatusOf renders a job's last outcome.
func s3tJobStatusOf(st catalog.JobStatus) s3tJobStatus {
	out := s3tJobStatus{Status: st.Status, LastRunTimestamp: st.LastRun.UTC(), FailureMessage: st.Failure}
	if out.Status == "" {
		out.Status = catalog.JobNotYetRun
	}
	return out
}
