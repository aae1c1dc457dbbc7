package integration

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Helpers of TestEnginePyIceberg (engine_pyiceberg_test.go): its scripts,
// their environment and the reports they print.

const (
	// pyPhaseTimeout bounds one phase script (a Python start, pyarrow's
	// import, a few dozen catalog calls and Parquet files).
	pyPhaseTimeout = 4 * time.Minute
	// pyWarehouse is the table bucket the phases use.
	pyWarehouse = "pylake"
)

// pySnapshot is one snapshot as the phases report it.
type pySnapshot struct {
	ID        int64  `json:"id"`
	Parent    *int64 `json:"parent"`
	Operation string `json:"operation"`
}

// pyObjectReport is what object_phase.py prints (and writes to --state).
type pyObjectReport struct {
	UUID             string           `json:"uuid"`
	MetadataLocation string           `json:"metadata_location"`
	Snapshots        []pySnapshot     `json:"snapshots"`
	Rows             []map[string]any `json:"rows"`
	Columns          []string         `json:"columns"`
	FirstSnapshot    int64            `json:"first_snapshot"`
	FirstRows        []map[string]any `json:"first_rows"`
	ArchiveRows      []map[string]any `json:"archive_rows"`
}

// pyStrongReport is what strong_phase.py prints.
type pyStrongReport struct {
	UUID             string           `json:"uuid"`
	Snapshots        []pySnapshot     `json:"snapshots"`
	Rows             []map[string]any `json:"rows"`
	Columns          []string         `json:"columns"`
	ReturnsSnapshots []pySnapshot     `json:"returns_snapshots"`
	ReturnsRows      []map[string]any `json:"returns_rows"`
}

// pyScript is the absolute path of a phase script (tests run in
// integration/).
func pyScript(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("engines", "pyiceberg", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pyEnv is the phases' environment: the credentials their catalogs use,
// and no bytecode written into the repository.
func pyEnv() []string {
	return []string{
		"CAIRN_ACCESS_KEY=" + s3User,
		"CAIRN_SECRET_KEY=" + s3Secret,
		"CAIRN_REGION=" + s3Region,
		"PYTHONDONTWRITEBYTECODE=1",
	}
}

// pyRunPhase runs a phase script against srv and decodes the JSON report
// on the last line of its output into out.
func pyRunPhase(t *testing.T, eng engines, srv *server, script, state string, out any) {
	t.Helper()
	start := time.Now()
	stdout := eng.runPython(t, pyPhaseTimeout, pyEnv(), pyScript(t, script),
		"--endpoint", srv.url(""), "--warehouse", pyWarehouse, "--state", state)
	t.Logf("%s: %v", script, time.Since(start).Round(time.Millisecond))
	pyDecodeLast(t, script, stdout, out)
}

// pyDecodeLast decodes the JSON report on the last line of a script's
// output into out.
func pyDecodeLast(t *testing.T, script, stdout string, out any) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), out); err != nil {
		t.Fatalf("%s: the last line of its output is not its report: %v\n%s", script, err, stdout)
	}
}

// pyOperations are the operations of snaps, in order.
func pyOperations(snaps []pySnapshot) []string {
	ops := make([]string, len(snaps))
	for i, s := range snaps {
		ops[i] = s.Operation
	}
	return ops
}
