package integration

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestEnginePyIcebergVended: PyIceberg with no S3 keys at all, as a user
// whose policy covers one table bucket: it creates a table and appends
// and scans through vended credentials, its vended key is refused outside
// the table's location (engines/pyiceberg/vended_phase.py checks the
// rows).
func TestEnginePyIcebergVended(t *testing.T) {
	eng := requireEngines(t)
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	srv := startServer(t, t.TempDir())
	srv.waitReady(readyTimeout)
	const wh = "pyvend"
	if r := runCairn(t, 30*time.Second, "admin", "table-bucket", "create", wh, "--endpoint", srv.url("")); r.code != 0 {
		t.Fatalf("table-bucket create: exit %d\n%s", r.code, r.stderr)
	}
	policy := filepath.Join(t.TempDir(), "eng.json")
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":["arn:aws:s3:::` + wh + `","arn:aws:s3:::` + wh + `/*"]}]}`
	if err := os.WriteFile(policy, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	browserAddUser(t, srv, "pyeng", "pyeng-secret-key", "@"+policy)

	var rep struct {
		Rows         []map[string]any `json:"rows"`
		VendedPrefix string           `json:"vended_key_prefix"`
	}
	env := []string{"CAIRN_ACCESS_KEY=pyeng", "CAIRN_SECRET_KEY=pyeng-secret-key", "CAIRN_REGION=" + s3Region, "PYTHONDONTWRITEBYTECODE=1"}
	out := eng.runPython(t, pyPhaseTimeout, env, pyScript(t, "vended_phase.py"),
		"--endpoint", srv.url(""), "--warehouse", wh, "--state", filepath.Join(t.TempDir(), "unused.json"))
	pyDecodeLast(t, "vended_phase.py", out, &rep)
	if len(rep.Rows) != 5 || rep.VendedPrefix != "ASIA" {
		t.Fatalf("vended phase report: %d rows (want 5), vended key %q (want ASIA...)", len(rep.Rows), rep.VendedPrefix)
	}
}
