package integration

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Helpers of TestEngineSparkIceberg (engine_spark_iceberg_test.go): its
// scripts (integration/engines/spark/iceberg_*.py), their environment
// and the reports they print.

// siPhaseTimeout bounds one phase script: a Spark session (10 to 30 s to
// start on a shared machine) and a few dozen Iceberg commits and queries.
const siPhaseTimeout = 10 * time.Minute

// siSnapshot is one snapshot as the phases report it.
type siSnapshot struct {
	ID        int64  `json:"id"`
	Parent    *int64 `json:"parent"`
	Operation string `json:"operation"`
	Ms        int64  `json:"ms"`
}

// siObjectReport is what iceberg_object_phase.py prints (and writes to
// --state).
type siObjectReport struct {
	UUID             string           `json:"uuid"`
	MetadataLocation string           `json:"metadata_location"`
	Snapshots        []siSnapshot     `json:"snapshots"`     // after expire_snapshots
	AllSnapshots     []siSnapshot     `json:"all_snapshots"` // before it
	Operations       []string         `json:"operations"`    // the writes, one per snapshot
	Columns          []string         `json:"columns"`
	Rows             []map[string]any `json:"rows"`
	FirstRows        []map[string]any `json:"first_rows"`
	ViewRows         []map[string]any `json:"view_rows"`
	Events           int              `json:"events"`
	Orphan           string           `json:"orphan"` // s3://BUCKET/KEY, removed
	Expired          map[string]int   `json:"expired"`
}

// siStrongReport is what iceberg_strong_phase.py prints.
type siStrongReport struct {
	UUID      string           `json:"uuid"`
	Snapshots []siSnapshot     `json:"snapshots"`
	Rows      []map[string]any `json:"rows"`
	ViewRows  []map[string]any `json:"view_rows"`
}

// siRunPhase runs a phase script against srv (warehouse wh) and decodes
// the JSON report on the last line of its output into out.
func siRunPhase(t *testing.T, eng engines, srv *server, script, wh, state string, out any) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("engines", "spark", script))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stdout := eng.runPython(t, siPhaseTimeout, pyEnv(), path,
		"--endpoint", srv.url(""), "--warehouse", wh, "--jars", filepath.Join(eng.dir, "jars"), "--state", state)
	t.Logf("%s: %v", script, time.Since(start).Round(time.Millisecond))
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), out); err != nil {
		t.Fatalf("%s: the last line of its output is not its report: %v\n%s", script, err, tail(stdout, 40))
	}
}

// siOperations are the operations of snaps, in order.
func siOperations(snaps []siSnapshot) []string {
	ops := make([]string, len(snaps))
	for i, s := range snaps {
		ops[i] = s.Operation
	}
	return ops
}

// s3URL splits s3://BUCKET/KEY.
func s3URL(t *testing.T, loc string) (bucket, key string) {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil || u.Scheme != "s3" || u.Host == "" || len(u.Path) < 2 {
		t.Fatalf("%q is not an s3://BUCKET/KEY location (%v)", loc, err)
	}
	return u.Host, u.Path[1:]
}
