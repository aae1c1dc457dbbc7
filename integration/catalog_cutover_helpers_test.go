package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// The catalog cutover's faults against the real binary on loopback
// (issue 6, must-shows 2-4): cancel (TestCatalogCutoverCancel), a SIGKILL
// at each materialize step and the recovery from it
// (TestCatalogCutoverKill), and who may run a cutover, over REST and
// through the mount's control files (TestCatalogCutoverPermissions).
//
// An invalid CAIRN_TABLE_CATALOG_BACKING refusing to start is covered by
// TestCatalogBackingChoice (catalog_backing_test.go).

const (
	// cfCallTimeout bounds every request of these tests.
	cfCallTimeout = 30 * time.Second
	// The warehouses (table bucket names: 3 to 63 characters).
	cfA, cfB, cfC, cfZ = "lake-a", "lake-b", "lake-c", "lake-z"
	cfSchema           = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`
)

// cfEnv is the cutover environment a server is started with.
type cfEnv struct {
	backing    string // CAIRN_TABLE_CATALOG_BACKING; "" is the object default
	failpoints string // CAIRN_FAILPOINTS
}

// cfStart starts `cairn serve` on data with env and the S3 root
// credentials, and waits until it is ready. The variables are set with
// t.Setenv, inherited by the child: the test must not be parallel.
func cfStart(t *testing.T, data string, env cfEnv) *server {
	t.Helper()
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	t.Setenv("CAIRN_TABLE_CATALOG_BACKING", env.backing)
	t.Setenv("CAIRN_FAILPOINTS", env.failpoints)
	s := startServer(t, data)
	s.waitReady(readyTimeout)
	return s
}

// cfStop stops s with SIGTERM and wants exit 0.
func cfStop(t *testing.T, s *server) {
	t.Helper()
	if code := s.stop(stopTimeout); code != 0 {
		t.Fatalf("cairn serve exit %d after SIGTERM\nstderr:\n%s", code, s.stderr.String())
	}
}

// cfCred is who signs a request.
type cfCred struct{ access, secret string }

var cfRoot = cfCred{s3User, s3Secret}

// cfResp is a catalog answer.
type cfResp struct {
	status int
	body   []byte
}

// cfErrBody is the Iceberg error envelope.
type cfErrBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

func (r cfResp) String() string { return fmt.Sprintf("%d %s", r.status, bytes.TrimSpace(r.body)) }

// apiErr decodes the Iceberg error envelope (zero when it is not one).
func (r cfResp) apiErr() cfErrBody {
	var e cfErrBody
	_ = json.Unmarshal(r.body, &e)
	return e
}

// cfTry sends a SigV4-signed (service s3, payload hashed) request as c and
// returns the answer, or the transport error.
func cfTry(s *server, c cfCred, method, path, body string) (cfResp, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cfCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.url(path), strings.NewReader(body))
	if err != nil {
		return cfResp{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := sigv4.Sign(req, c.access, c.secret, s3Region, "s3", sha256hex([]byte(body)), time.Now()); err != nil {
		return cfResp{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return cfResp{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return cfResp{}, err
	}
	return cfResp{status: resp.StatusCode, body: b}, nil
}

// cfCall is cfTry that fails the test on a transport error.
func cfCall(t *testing.T, s *server, c cfCred, method, path, body string) cfResp {
	t.Helper()
	r, err := cfTry(s, c, method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// cfWant sends a request as root, wants status and decodes the JSON
// answer into out (when not nil).
func cfWant(t *testing.T, s *server, method, path, body string, want int, out any) cfResp {
	t.Helper()
	r := cfCall(t, s, cfRoot, method, path, body)
	if r.status != want {
		t.Fatalf("%s %s: %s, want %d", method, path, r, want)
	}
	if out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, r.body, err)
		}
	}
	return r
}

// cfWantErr wants an Iceberg error answer: status, type and every one of
// the fragments in its message.
func cfWantErr(t *testing.T, what string, r cfResp, status int, typ string, fragments ...string) {
	t.Helper()
	e := r.apiErr()
	if r.status != status || e.Error.Type != typ || e.Error.Code != status {
		t.Errorf("%s: %s, want %d %s", what, r, status, typ)
		return
	}
	for _, f := range fragments {
		if !strings.Contains(e.Error.Message, f) {
			t.Errorf("%s: message %q does not contain %q", what, e.Error.Message, f)
		}
	}
}

func cfMigrationPath(wh string) string { return "/iceberg/v1/" + wh + "/catalog/migration" }
func cfTablePath(wh string) string     { return "/iceberg/v1/" + wh + "/namespaces/ns/tables/t" }

// cfMakeWarehouse creates warehouse wh with namespace ns and table t, and
// commits to t once; it returns t's metadata location.
func cfMakeWarehouse(t *testing.T, s *server, wh string) string {
	t.Helper()
	cfWant(t, s, http.MethodPut, "/_cairn/admin/v1/table-buckets/"+wh, "", http.StatusOK, nil)
	cfWant(t, s, http.MethodPost, "/iceberg/v1/"+wh+"/namespaces", `{"namespace":["ns"],"properties":{"owner":"cf"}}`, http.StatusOK, nil)
	cfWant(t, s, http.MethodPost, "/iceberg/v1/"+wh+"/namespaces/ns/tables", `{"name":"t","schema":`+cfSchema+`}`, http.StatusOK, nil)
	r := cfCommit(t, s, wh, "setup", "yes")
	if r.status != http.StatusOK {
		t.Fatalf("first commit to %s: %s", wh, r)
	}
	return cfLoad(t, s, wh).MetadataLocation
}

// cfCommit commits a set-properties update to wh's table t.
func cfCommit(t *testing.T, s *server, wh, key, value string) cfResp {
	t.Helper()
	body := fmt.Sprintf(`{"requirements":[],"updates":[{"action":"set-properties","updates":{%q:%q}}]}`, key, value)
	return cfCall(t, s, cfRoot, http.MethodPost, cfTablePath(wh), body)
}

// cfLoad loads wh's table t.
func cfLoad(t *testing.T, s *server, wh string) restTable {
	t.Helper()
	var lt restTable
	cfWant(t, s, http.MethodGet, cfTablePath(wh), "", http.StatusOK, &lt)
	if lt.MetadataLocation == "" {
		t.Fatalf("load %s: no metadata-location", cfTablePath(wh))
	}
	return lt
}

// cfCreateWarehouse tries to create warehouse wh (a registry write).
func cfCreateWarehouse(t *testing.T, s *server, wh string) cfResp {
	t.Helper()
	return cfCall(t, s, cfRoot, http.MethodPut, "/_cairn/admin/v1/table-buckets/"+wh, "")
}

func cfPreflight(t *testing.T, s *server, wh string) catalog.Preflight {
	t.Helper()
	var p catalog.Preflight
	cfWant(t, s, http.MethodGet, cfMigrationPath(wh), "", http.StatusOK, &p)
	if p.TableBucket != wh || p.SourceKind != catalog.SourceKindObjectBacked || p.TargetKind != catalog.TargetKindDurable {
		t.Fatalf("preflight of %s: table_bucket %q, kinds %q %q", wh, p.TableBucket, p.SourceKind, p.TargetKind)
	}
	return p
}

func cfMaterialize(t *testing.T, s *server, wh string) catalog.MaterializeResult {
	t.Helper()
	var m catalog.MaterializeResult
	cfWant(t, s, http.MethodPost, cfMigrationPath(wh), "", http.StatusOK, &m)
	if m.TableBucket != wh || m.SourceFingerprint == "" || m.TargetSnapshotETag == "" || !m.ObjectBackedWritesFenced || m.MigrationID == "" {
		t.Fatalf("materialize %s: %+v", wh, m)
	}
	return m
}

func cfCancel(t *testing.T, s *server, wh string) catalog.CancelResult {
	t.Helper()
	var c catalog.CancelResult
	cfWant(t, s, http.MethodDelete, cfMigrationPath(wh), "", http.StatusOK, &c)
	if c.TableBucket != wh || c.ObjectBackedWritesFenced {
		t.Fatalf("cancel %s: %+v", wh, c)
	}
	return c
}

func cfStatus(t *testing.T, s *server, wh string) catalog.Status {
	t.Helper()
	var st catalog.Status
	cfWant(t, s, http.MethodGet, "/iceberg/v1/"+wh+"/catalog/status", "", http.StatusOK, &st)
	return st
}

// cfWantFenced wants a commit to wh refused with 409 naming migration id.
func cfWantFenced(t *testing.T, s *server, wh, id string) {
	t.Helper()
	cfWantErr(t, "commit to fenced "+wh, cfCommit(t, s, wh, "fenced", "no"), http.StatusConflict, "CommitFailedException", "fenced", id)
}

// cfWantWrites wants a commit to wh to succeed.
func cfWantWrites(t *testing.T, s *server, wh string) {
	t.Helper()
	if r := cfCommit(t, s, wh, "after", "yes"); r.status != http.StatusOK {
		t.Errorf("commit to %s: %s, want 200", wh, r)
	}
}

// cfWantRegistryFenced wants creating warehouse wh refused with 409.
func cfWantRegistryFenced(t *testing.T, s *server, wh, id string) {
	t.Helper()
	cfWantErr(t, "create warehouse "+wh+" while the registry is fenced", cfCreateWarehouse(t, s, wh), http.StatusConflict, "CommitFailedException", "fenced", id)
}

func cfWantCreate(t *testing.T, s *server, wh string) {
	t.Helper()
	if r := cfCreateWarehouse(t, s, wh); r.status != http.StatusOK {
		t.Errorf("create warehouse %s: %s, want 200", wh, r)
	}
}
