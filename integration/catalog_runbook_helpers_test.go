package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/cairnstore/cairn/catalog"
)

// Helpers of the catalog cutover runbook test (catalog_runbook_test.go).
// They drive the server the way docs/operations/cutover-runbook.md tells
// an operator to: `cairn admin catalog ...` for the catalog operations,
// iceberg-go for the clients, the mount's control files.

// rbServerEnv are the variables rbStart sets or unsets for each server it
// starts; the test takes them over with t.Setenv first.
var rbServerEnv = []string{
	"CAIRN_TABLE_CATALOG_BACKING",
	"CAIRN_FAILPOINTS",
	"CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2",
	"CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2_FLEET_CONFIRMED",
}

const (
	// rbCLITimeout bounds one `cairn admin ...` run.
	rbCLITimeout = 60 * time.Second
	// rbStopTimeout bounds a SIGTERM shutdown (unmount included).
	rbStopTimeout = 20 * time.Second
)

// rbTakeEnv makes the server variables the test's own (restored at the
// end) and unset, and sets the root credentials the servers and the CLI
// use.
func rbTakeEnv(t *testing.T) {
	t.Helper()
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	for _, k := range rbServerEnv {
		t.Setenv(k, "")
		if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
}

// rbFUSEUsable reports whether a mount can be started here (root and
// /dev/fuse), and why not.
func rbFUSEUsable() (bool, string) {
	if os.Geteuid() != 0 {
		return false, "not root"
	}
	fi, err := os.Stat("/dev/fuse")
	if err != nil {
		return false, err.Error()
	}
	if fi.Mode()&os.ModeCharDevice == 0 {
		return false, "/dev/fuse is not a character device"
	}
	return true, ""
}

// rbServer is one `cairn serve` of the runbook, with its mount point ("" without a mount).
type rbServer struct {
	*server
	mnt  string
	cats []*rest.Catalog // opened on this server, closed when it stops
}

// rbStart starts `cairn serve` on data with exactly the server variables
// of env set (the others unset), mounted on mnt unless mnt is "", and
// waits until it is ready (and the mount live).
func rbStart(t *testing.T, data string, env map[string]string, mnt string) *rbServer {
	t.Helper()
	for _, k := range rbServerEnv {
		var err error
		if v, ok := env[k]; ok {
			err = os.Setenv(k, v)
		} else {
			err = os.Unsetenv(k)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for k := range env {
		if !slices.Contains(rbServerEnv, k) {
			t.Fatalf("rbStart: %s is not one of the server variables %v", k, rbServerEnv)
		}
	}
	var extra []string
	if mnt != "" {
		extra = []string{"--mount", mnt}
	}
	s := &rbServer{server: startServer(t, data, extra...), mnt: mnt}
	if mnt != "" {
		// Runs before startServer's cleanup: stop gently, check the unmount.
		t.Cleanup(func() { stopMount(t, s.server, mnt) })
	}
	s.waitReady(readyTimeout)
	if mnt != "" {
		waitMounted(t, s.server, mnt)
	}
	t.Logf("cairn serve on %s (env %v, mount %q)", s.addr, env, mnt)
	return s
}

// rbStop stops the server with SIGTERM and checks the clean exit (and
// that the mount is gone).
func rbStop(t *testing.T, s *rbServer) {
	t.Helper()
	// Drop the clients' idle connections first: Shutdown waits up to 5 s
	// for a connection that was opened but never used.
	for _, c := range s.cats {
		_ = c.Close()
	}
	s.cats = nil
	if tr, ok := http.DefaultTransport.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
	start := time.Now()
	defer func() { t.Logf("cairn serve on %s stopped in %v", s.addr, time.Since(start).Round(time.Millisecond)) }()
	if s.mnt != "" {
		stopMount(t, s.server, s.mnt)
		if t.Failed() {
			t.FailNow()
		}
		if isMountPoint(t, s.mnt) {
			t.Fatalf("%s is still mounted after the server stopped", s.mnt)
		}
		return
	}
	if code := s.stop(rbStopTimeout); code != 0 {
		t.Fatalf("cairn serve exited %d after SIGTERM\nstderr:\n%s", code, tail(s.stderr.String(), 40))
	}
}

// rbCatalog opens iceberg-go's REST catalog on warehouse wh (OAuth2
// client credentials, the S3 face for data and metadata files).
func rbCatalog(t *testing.T, s *rbServer, wh string) *rest.Catalog {
	t.Helper()
	cat, err := rest.NewCatalog(icebergCtx(t), "cairn", s.url("/iceberg"),
		rest.WithWarehouseLocation(wh),
		rest.WithCredential(s3User+":"+s3Secret),
		rest.WithAdditionalProps(icebergFileIOProps(s.server)))
	if err != nil {
		t.Fatalf("rest.NewCatalog (warehouse %s): %v", wh, err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	s.cats = append(s.cats, cat)
	return cat
}

// rbLoadTable loads a table with iceberg-go.
func rbLoadTable(t *testing.T, cat *rest.Catalog, ident table.Identifier) *table.Table {
	t.Helper()
	tbl, err := cat.LoadTable(icebergCtx(t), ident)
	if err != nil {
		t.Fatalf("LoadTable %v: %v", ident, err)
	}
	return tbl
}

// rbAppend appends rows to tbl with iceberg-go (Parquet through the S3
// face, then a catalog commit) and returns the committed table.
func rbAppend(t *testing.T, tbl *table.Table, rows []eventRow) (*table.Table, error) {
	t.Helper()
	return tbl.AppendTable(icebergCtx(t), arrowTable(t, tbl.Schema(), rows, 128), 128, nil)
}

// rbCLI runs `cairn admin catalog ARGS --endpoint URL [--json]`.
func rbCLI(t *testing.T, s *rbServer, jsonOut bool, args ...string) result {
	t.Helper()
	full := append([]string{"admin", "catalog"}, args...)
	full = append(full, "--endpoint", s.url(""))
	if jsonOut {
		full = append(full, "--json")
	}
	r := runCairn(t, rbCLITimeout, full...)
	t.Logf("$ cairn %s\n-> exit %d\n%s%s", strings.Join(full, " "), r.code, tail(r.stdout, 60), tail(r.stderr, 10))
	return r
}

// rbCLIJSON runs a `cairn admin catalog ... --json` command that must
// succeed and decodes its output into out.
func rbCLIJSON(t *testing.T, s *rbServer, out any, args ...string) {
	t.Helper()
	r := rbCLI(t, s, true, args...)
	if r.code != 0 {
		t.Fatalf("cairn admin catalog %s: exit %d, want 0\nstderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), out); err != nil {
		t.Fatalf("cairn admin catalog %s: output is not the expected JSON: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
}

// rbCLIFail runs a `cairn admin catalog ...` command that must fail with
// a server error (exit 2) whose message holds every string of want, and
// returns its stderr.
func rbCLIFail(t *testing.T, s *rbServer, want []string, args ...string) string {
	t.Helper()
	r := rbCLI(t, s, true, args...)
	if r.code != 2 {
		t.Fatalf("cairn admin catalog %s: exit %d, want 2 (a server error)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("cairn admin catalog %s: the error does not say %q:\n%s", strings.Join(args, " "), w, r.stderr)
		}
	}
	return r.stderr
}

// rbPreflight is `cairn admin catalog migration preflight WH --json`.
func rbPreflight(t *testing.T, s *rbServer, wh string) catalog.Preflight {
	t.Helper()
	var p catalog.Preflight
	rbCLIJSON(t, s, &p, "migration", "preflight", wh)
	if p.TableBucket != wh || p.SourceKind != catalog.SourceKindObjectBacked || p.TargetKind != catalog.TargetKindDurable {
		t.Fatalf("preflight of %s: table_bucket %q, %s -> %s", wh, p.TableBucket, p.SourceKind, p.TargetKind)
	}
	if p.Rollback != catalog.DefaultRollback() {
		t.Fatalf("preflight of %s: rollback advice %+v, want %+v", wh, p.Rollback, catalog.DefaultRollback())
	}
	return p
}

// rbStatus is `cairn admin catalog status WH --json`.
func rbStatus(t *testing.T, s *rbServer, wh string) catalog.Status {
	t.Helper()
	var st catalog.Status
	rbCLIJSON(t, s, &st, "status", wh)
	if st.TableBucket != wh {
		t.Fatalf("status of %s: table_bucket %q", wh, st.TableBucket)
	}
	return st
}

// rbToken gets a bearer token for the root credentials.
func rbToken(t *testing.T, s *rbServer) string {
	t.Helper()
	return icebergToken(t, s.server)
}

// rbHTTP sends one bearer-authenticated request to the server.
func rbHTTP(t *testing.T, s *rbServer, tok, method, path string, body []byte, hdr map[string]string) rawResponse {
	t.Helper()
	req := newRaw(t, method, s.url(path), body)
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return doRaw(t, req)
}

// rbIcebergError is the Iceberg error envelope.
type rbIcebergError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// rbWantError fails unless res is an Iceberg error with status and type
// whose message holds every string of want; it returns the message.
func rbWantError(t *testing.T, what string, res rawResponse, status int, typ string, want ...string) string {
	t.Helper()
	var e rbIcebergError
	if res.status != status || json.Unmarshal(res.body, &e) != nil || e.Error.Type != typ || e.Error.Code != status {
		t.Fatalf("%s: %d %s, want %d %s", what, res.status, bytes.TrimSpace(res.body), status, typ)
	}
	for _, w := range want {
		if !strings.Contains(e.Error.Message, w) {
			t.Fatalf("%s: error message %q does not say %q", what, e.Error.Message, w)
		}
	}
	return e.Error.Message
}

// rbTablePath is the REST path of table ns.name in wh.
func rbTablePath(wh, ns, name string) string {
	return "/iceberg/v1/" + wh + "/namespaces/" + ns + "/tables/" + name
}

// rbPropsCommit is a commit body setting one property of the table with
// uuid.
func rbPropsCommit(uuid, key, value string) []byte {
	b, _ := json.Marshal(map[string]any{
		"requirements": []any{map[string]string{"type": "assert-table-uuid", "uuid": uuid}},
		"updates":      []any{map[string]any{"action": "set-properties", "updates": map[string]string{key: value}}},
	})
	return b
}

// rbCommitProps commits one property to a table over raw REST and
// returns the new metadata location.
func rbCommitProps(t *testing.T, s *rbServer, tok, path, uuid, key, value string) string {
	t.Helper()
	res := rbHTTP(t, s, tok, http.MethodPost, path, rbPropsCommit(uuid, key, value), nil)
	var lt restTable
	if res.status != http.StatusOK || json.Unmarshal(res.body, &lt) != nil || lt.MetadataLocation == "" {
		t.Fatalf("commit %s=%s to %s: %d %s, want 200 with a metadata-location", key, value, path, res.status, bytes.TrimSpace(res.body))
	}
	return lt.MetadataLocation
}

// rbTableState is what the runbook's baseline records of a table.
type rbTableState struct {
	metadataLocation string
	snapshotID       int64
	rows             []eventRow
}

// rbCapture records a table's state: metadata location, current snapshot
// and every row (a full scan through the S3 face).
func rbCapture(t *testing.T, tbl *table.Table) rbTableState {
	t.Helper()
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		t.Fatalf("table %v has no current snapshot", tbl.Identifier())
	}
	return rbTableState{metadataLocation: tbl.MetadataLocation(), snapshotID: snap.SnapshotID, rows: scanRows(t, tbl)}
}

// rbWantState fails unless tbl is at state want: same metadata location,
// same snapshot, same rows.
func rbWantState(t *testing.T, what string, tbl *table.Table, want rbTableState) {
	t.Helper()
	if got := tbl.MetadataLocation(); got != want.metadataLocation {
		t.Fatalf("%s: metadata-location %s, want %s", what, got, want.metadataLocation)
	}
	if snap := tbl.CurrentSnapshot(); snap == nil || snap.SnapshotID != want.snapshotID {
		t.Fatalf("%s: current snapshot %v, want %d", what, snap, want.snapshotID)
	}
	wantRows(t, what, scanRows(t, tbl), want.rows)
}

// rbWantCommitFailed fails unless err is iceberg-go's CommitFailed (409)
// and its text holds every string of want.
func rbWantCommitFailed(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want CommitFailed (409)", what)
	}
	if !errors.Is(err, rest.ErrCommitFailed) {
		t.Fatalf("%s: %v, want CommitFailed (409)", what, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%s: error %q does not say %q", what, err, w)
		}
	}
}

// rbCommitItems returns the commit findings of items.
func rbCommitItems(items []catalog.RecoveryItem) []catalog.RecoveryItem {
	var out []catalog.RecoveryItem
	for _, it := range items {
		if it.Kind == "commit" {
			out = append(out, it)
		}
	}
	return out
}

// rbControlPath is a control file of warehouse wh on the mount.
func rbControlPath(mnt, wh, name string) string {
	return mnt + "/.cairn/catalog/" + wh + "/" + name
}

// rbReadJSON reads a control file and decodes it into out.
func rbReadJSON(t *testing.T, path string, out any) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s is not the expected JSON: %v\n%s", path, err, b)
	}
	return b
}

// rbWriteWord writes one word to a control file, as `echo WORD > FILE`
// does, and returns the write's error.
func rbWriteWord(path, word string) error {
	return os.WriteFile(path, []byte(word+"\n"), fs.FileMode(0o644))
}

// rbErrno extracts the errno of a file operation's error (0 when none).
func rbErrno(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// rbMigrationOutcome is the last-result file of a warehouse.
type rbMigrationOutcome struct {
	State  string `json:"state"`
	Word   string `json:"word"`
	Error  string `json:"error"`
	Result *struct {
		Preflight   *catalog.Preflight         `json:"preflight"`
		Materialize *catalog.MaterializeResult `json:"materialize"`
		Cancel      *catalog.CancelResult      `json:"cancel"`
	} `json:"result"`
}

// rbBucket returns the readiness line of wh in a preflight.
func rbBucket(t *testing.T, p catalog.Preflight, wh string) catalog.BucketReadiness {
	t.Helper()
	for _, b := range p.Buckets {
		if b.TableBucket == wh {
			return b
		}
	}
	t.Fatalf("preflight of %s lists no bucket %s: %+v", p.TableBucket, wh, p.Buckets)
	return catalog.BucketReadiness{}
}

// rbIsHex64 reports whether s is 64 lowercase hex digits (a SHA-256).
func rbIsHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
