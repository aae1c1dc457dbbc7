package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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

// TestCatalogCutoverCancel: cancel releases a half-done or complete
// materialize (the registry fence with the last warehouse fence), and is
// refused, keeping the fence, once the durable-strong target advanced.
func TestCatalogCutoverCancel(t *testing.T) {
	t.Run("stopped at PREPARING", func(t *testing.T) {
		s := cfStart(t, t.TempDir(), cfEnv{failpoints: "materialize.after-prepare-fence=error"})
		locA := cfMakeWarehouse(t, s, cfA)
		cfMakeWarehouse(t, s, cfB)

		if r := cfCall(t, s, cfRoot, http.MethodPost, cfMigrationPath(cfA), ""); r.status != http.StatusInternalServerError {
			t.Fatalf("materialize a with the failpoint: %s, want 500", r)
		}
		p := cfPreflight(t, s, cfA)
		if p.Fence == nil || p.Fence.Status != catalog.FenceStatusPreparing || !p.ObjectBackedWritesFenced || p.Fence.MigrationID == "" {
			t.Fatalf("preflight after the stop: fence %+v, fenced %v; want PREPARING, fenced", p.Fence, p.ObjectBackedWritesFenced)
		}
		if p.Status != catalog.StatusReadyToSnapshot || !slices.Contains(p.RecommendedActions, catalog.ActionCancelOrRematerialize) {
			t.Errorf("preflight after the stop: status %s, actions %v; want %s with %s", p.Status, p.RecommendedActions, catalog.StatusReadyToSnapshot, catalog.ActionCancelOrRematerialize)
		}
		id := p.Fence.MigrationID
		cfWantFenced(t, s, cfA, id)
		if got := cfLoad(t, s, cfA).MetadataLocation; got != locA {
			t.Errorf("a's table after the refused commit: %s, want %s", got, locA)
		}
		if pb := cfPreflight(t, s, cfB); pb.Fence != nil || pb.ObjectBackedWritesFenced {
			t.Errorf("b is fenced by a's migration: %+v", pb.Fence)
		}
		cfWantWrites(t, s, cfB)
		cfWantRegistryFenced(t, s, cfC, id)

		c := cfCancel(t, s, cfA)
		if c.Status != catalog.StatusFenceReleased || c.MigrationID != id || c.TargetRemoved || !c.RegistryFenceReleased {
			t.Errorf("cancel: %+v; want FENCE_RELEASED of %s, nothing published so no target removed, registry fence released", c, id)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag != "" || st.Fence != nil {
			t.Errorf("status after cancel: snapshot %q, fence %+v; want no target and no fence", st.SnapshotETag, st.Fence)
		}
		if p := cfPreflight(t, s, cfA); p.Fence != nil || p.ObjectBackedWritesFenced || p.Status != catalog.StatusReadyToSnapshot {
			t.Errorf("preflight after cancel: status %s, fence %+v", p.Status, p.Fence)
		}
		cfWantWrites(t, s, cfA)
		cfWantCreate(t, s, cfC)
		cfStop(t, s)
	})

	t.Run("two materialized", func(t *testing.T) {
		s := cfStart(t, t.TempDir(), cfEnv{})
		cfMakeWarehouse(t, s, cfA)
		cfMakeWarehouse(t, s, cfB)
		ma := cfMaterialize(t, s, cfA)
		mb := cfMaterialize(t, s, cfB)
		if ma.Status != catalog.StatusSnapshotMaterialized || mb.Status != catalog.StatusSnapshotMaterialized {
			t.Errorf("materialize: a %s, b %s", ma.Status, mb.Status)
		}
		if ma.ReadyToEnableDurableStrong || !mb.ReadyToEnableDurableStrong {
			t.Errorf("ready_to_enable_durable_strong: a %v (b not yet done), b %v (all done)", ma.ReadyToEnableDurableStrong, mb.ReadyToEnableDurableStrong)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag == "" {
			t.Errorf("status of materialized a: no snapshot")
		}
		cfWantFenced(t, s, cfA, ma.MigrationID)
		cfWantFenced(t, s, cfB, mb.MigrationID)

		c := cfCancel(t, s, cfA)
		if c.Status != catalog.StatusFenceReleased || !c.TargetRemoved || c.RegistryFenceReleased {
			t.Errorf("cancel a: %+v; want FENCE_RELEASED, target removed, registry still fenced (b)", c)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag != "" {
			t.Errorf("status of a after cancel: snapshot %q, want removed", st.SnapshotETag)
		}
		cfWantRegistryFenced(t, s, cfC, mb.MigrationID)
		cfWantWrites(t, s, cfA)
		cfWantFenced(t, s, cfB, mb.MigrationID)

		// b through the CLI, as an operator would.
		cli := runCairn(t, runTimeout, "admin", "catalog", "migration", "cancel", cfB, "--endpoint", s.url(""), "--json")
		if cli.code != 0 || json.Unmarshal([]byte(cli.stdout), &c) != nil {
			t.Fatalf("cairn admin catalog migration cancel %s: exit %d\n%s%s", cfB, cli.code, cli.stdout, cli.stderr)
		}
		if c.Status != catalog.StatusFenceReleased || !c.TargetRemoved || !c.RegistryFenceReleased {
			t.Errorf("cancel b: %+v; want FENCE_RELEASED, target removed, registry fence released", c)
		}
		cfWantCreate(t, s, cfC)
		cfWantWrites(t, s, cfB)
		if c := cfCancel(t, s, cfA); c.Status != catalog.StatusNoMigrationFence {
			t.Errorf("cancel a again: %+v, want %s", c, catalog.StatusNoMigrationFence)
		}
		cfStop(t, s)
	})

	t.Run("target advanced", func(t *testing.T) {
		data := t.TempDir()
		s := cfStart(t, data, cfEnv{})
		cfMakeWarehouse(t, s, cfA)
		cfMakeWarehouse(t, s, cfB)
		m := cfMaterialize(t, s, cfA)
		cfStop(t, s)

		s = cfStart(t, data, cfEnv{backing: catalog.BackingDurableStrong})
		before := cfLoad(t, s, cfA)
		if r := cfCommit(t, s, cfA, "strong", "yes"); r.status != http.StatusOK {
			t.Fatalf("commit under durable-strong: %s", r)
		}
		advanced := cfLoad(t, s, cfA)
		if advanced.MetadataLocation == before.MetadataLocation || advanced.Metadata.Properties["strong"] != "yes" {
			t.Fatalf("durable-strong commit did not advance a: %s -> %s", before.MetadataLocation, advanced.MetadataLocation)
		}
		cfStop(t, s)

		s = cfStart(t, data, cfEnv{})
		r := cfCall(t, s, cfRoot, http.MethodDelete, cfMigrationPath(cfA), "")
		cfWantErr(t, "cancel after the target advanced", r, http.StatusConflict, "CommitFailedException", "advanced", m.MigrationID)
		p := cfPreflight(t, s, cfA)
		if p.Status != catalog.StatusManualReviewRequired || !slices.Contains(p.Blockers, catalog.BlockerSnapshotChanged) || p.ReadyToEnableDurableStrong {
			t.Errorf("preflight after the target advanced: status %s, blockers %v, ready %v; want %s with %s",
				p.Status, p.Blockers, p.ReadyToEnableDurableStrong, catalog.StatusManualReviewRequired, catalog.BlockerSnapshotChanged)
		}
		if p.Fence == nil || p.Fence.Status != catalog.FenceStatusMaterialized || !p.ObjectBackedWritesFenced {
			t.Errorf("preflight after the refused cancel: fence %+v, want MATERIALIZED kept", p.Fence)
		}
		cfWantFenced(t, s, cfA, m.MigrationID)
		if got := cfLoad(t, s, cfA); got.MetadataLocation != before.MetadataLocation || got.Metadata.Properties["strong"] != "" {
			t.Errorf("object-backed a: %s %v, want the materialized %s", got.MetadataLocation, got.Metadata.Properties, before.MetadataLocation)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag == "" {
			t.Errorf("the refused cancel removed the durable-strong snapshot of a")
		}
		cfStop(t, s)
		// The refusal holds across a restart too.
		s = cfStart(t, data, cfEnv{})
		r = cfCall(t, s, cfRoot, http.MethodDelete, cfMigrationPath(cfA), "")
		cfWantErr(t, "cancel after the target advanced, after a restart", r, http.StatusConflict, "CommitFailedException", "advanced")
		cfWantFenced(t, s, cfA, m.MigrationID)
		cli := runCairn(t, runTimeout, "admin", "catalog", "migration", "cancel", cfA, "--endpoint", s.url(""), "--json")
		if out := cli.stdout + cli.stderr; cli.code != 2 || !strings.Contains(out, "CommitFailedException") || !strings.Contains(out, "advanced") {
			t.Errorf("cairn admin catalog migration cancel %s: exit %d, output %q; want exit 2 naming CommitFailedException and the advanced snapshot", cfA, cli.code, out)
		}
		cfStop(t, s)
	})
}

// cfKillCase is one failpoint of TestCatalogCutoverKill and what the
// restarted server should show. The registry fence (written before the
// first failpoint) is there after each.
type cfKillCase struct {
	point      string
	fence      string // "" (none), PREPARING or MATERIALIZED
	status     string // preflight status after the restart
	target     bool   // a durable-strong snapshot exists after the restart
	cancel     string // the cancel's status
	removed    bool   // the cancel removes the target
	rematerial string // the repeated materialize's status
}

// TestCatalogCutoverKill: the server is SIGKILLed (by itself, through
// CAIRN_FAILPOINTS=<point>=kill) at each step of a materialize; restarted
// without failpoints it shows a consistent state, and both recoveries
// work: cancel (object-backed writes resume) or materialize again (a
// durable-strong restart then serves the table at the same metadata).
func TestCatalogCutoverKill(t *testing.T) {
	for _, tc := range []cfKillCase{
		{point: "materialize.after-global-fence", status: catalog.StatusReadyToSnapshot,
			cancel: catalog.StatusNoMigrationFence, rematerial: catalog.StatusSnapshotMaterialized},
		{point: "materialize.after-prepare-fence", fence: catalog.FenceStatusPreparing, status: catalog.StatusReadyToSnapshot,
			cancel: catalog.StatusFenceReleased, rematerial: catalog.StatusSnapshotMaterialized},
		{point: "materialize.after-publish", fence: catalog.FenceStatusPreparing, status: catalog.StatusReadyToSnapshot, target: true,
			cancel: catalog.StatusFenceReleased, removed: true, rematerial: catalog.StatusSnapshotMaterialized},
		{point: "materialize.after-registry", fence: catalog.FenceStatusPreparing, status: catalog.StatusReadyToSnapshot, target: true,
			cancel: catalog.StatusFenceReleased, removed: true, rematerial: catalog.StatusSnapshotMaterialized},
		{point: "materialize.after-materialized-fence", fence: catalog.FenceStatusMaterialized, status: catalog.StatusSnapshotMaterialized, target: true,
			cancel: catalog.StatusFenceReleased, removed: true, rematerial: catalog.StatusAlreadyMaterialized},
	} {
		for _, rec := range []string{"cancel", "materialize"} {
			t.Run(strings.TrimPrefix(tc.point, "materialize.")+"/"+rec, func(t *testing.T) { cfKillRun(t, tc, rec) })
		}
	}

	// A cancel killed after it removed the target (fence still there):
	// the restarted server shows the fence, a materialize again is
	// refused (its target is gone) and a second cancel finishes.
	t.Run("cancel.after-target-removed", func(t *testing.T) {
		const point = "cancel.after-target-removed"
		data := t.TempDir()
		s := cfStart(t, data, cfEnv{failpoints: point + "=kill"})
		loc := cfMakeWarehouse(t, s, cfA)
		m := cfMaterialize(t, s, cfA)
		cfWantKilled(t, s, http.MethodDelete, point)

		s = cfStart(t, data, cfEnv{})
		p := cfPreflight(t, s, cfA)
		if p.Fence == nil || p.Fence.Status != catalog.FenceStatusMaterialized || p.Fence.MigrationID != m.MigrationID || p.ReadyToEnableDurableStrong {
			t.Fatalf("preflight after the kill: status %s, fence %+v, ready %v; want the MATERIALIZED fence of %s, not ready",
				p.Status, p.Fence, p.ReadyToEnableDurableStrong, m.MigrationID)
		}
		if !slices.Contains(p.RecommendedActions, catalog.ActionFinishCancel) {
			t.Errorf("preflight after a cancel killed half-way: %s, blockers %v, actions %v; want %s recommended",
				p.Status, p.Blockers, p.RecommendedActions, catalog.ActionFinishCancel)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag != "" {
			t.Errorf("status after the kill: snapshot %q, want the target removed", st.SnapshotETag)
		}
		cfWantFenced(t, s, cfA, m.MigrationID)
		r := cfCall(t, s, cfRoot, http.MethodPost, cfMigrationPath(cfA), "")
		cfWantErr(t, "materialize after the target was removed", r, http.StatusConflict, "CommitFailedException", m.MigrationID)
		c := cfCancel(t, s, cfA)
		if c.Status != catalog.StatusFenceReleased || c.MigrationID != m.MigrationID || c.TargetRemoved || !c.RegistryFenceReleased {
			t.Errorf("cancel again: %+v; want FENCE_RELEASED of %s, nothing left to remove, registry fence released", c, m.MigrationID)
		}
		if got := cfLoad(t, s, cfA).MetadataLocation; got != loc {
			t.Errorf("table after the cancel: %s, want %s", got, loc)
		}
		cfWantWrites(t, s, cfA)
		cfWantCreate(t, s, cfZ)
		cfStop(t, s)
	})
}

// cfWantKilled sends method to warehouse cfA's migration on s, whose
// failpoint point is set to kill: the request gets no answer and the
// server dies of SIGKILL.
func cfWantKilled(t *testing.T, s *server, method, point string) {
	t.Helper()
	r, err := cfTry(s, cfRoot, method, cfMigrationPath(cfA), "")
	if err == nil {
		t.Fatalf("%s with %s=kill answered %s, want a broken connection", method, point, r)
	}
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		t.Fatalf("the server is still running %v after %s hit %s=kill", stopTimeout, method, point)
	}
	var ee *exec.ExitError
	if !errors.As(s.err, &ee) {
		t.Fatalf("server exit: %v, want death by SIGKILL", s.err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("server exit: %v, want death by SIGKILL", s.err)
	}
}

func cfKillRun(t *testing.T, tc cfKillCase, recovery string) {
	data := t.TempDir()
	s := cfStart(t, data, cfEnv{failpoints: tc.point + "=kill"})
	loc := cfMakeWarehouse(t, s, cfA)

	cfWantKilled(t, s, http.MethodPost, tc.point)

	s = cfStart(t, data, cfEnv{})
	p := cfPreflight(t, s, cfA)
	fence := ""
	if p.Fence != nil {
		fence = p.Fence.Status
	}
	if fence != tc.fence || p.ObjectBackedWritesFenced != (tc.fence != "") || p.Status != tc.status {
		t.Fatalf("preflight after the kill: status %s, fence %q (%+v), fenced %v; want %s, fence %q",
			p.Status, fence, p.Fence, p.ObjectBackedWritesFenced, tc.status, tc.fence)
	}
	if len(p.Blockers) != 0 {
		t.Errorf("preflight after the kill: blockers %v", p.Blockers)
	}
	if st := cfStatus(t, s, cfA); (st.SnapshotETag != "") != tc.target {
		t.Errorf("status after the kill: snapshot %q, want one: %v", st.SnapshotETag, tc.target)
	}
	id := ""
	if p.Fence != nil {
		id = p.Fence.MigrationID
		cfWantFenced(t, s, cfA, id)
	} else {
		cfWantWrites(t, s, cfA)
		loc = cfLoad(t, s, cfA).MetadataLocation
	}
	cfWantRegistryFenced(t, s, cfZ, id)

	switch recovery {
	case "cancel":
		c := cfCancel(t, s, cfA)
		if c.Status != tc.cancel || c.TargetRemoved != tc.removed || !c.RegistryFenceReleased || c.MigrationID != id {
			t.Errorf("cancel: %+v; want %s of %q, target removed %v, registry fence released", c, tc.cancel, id, tc.removed)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag != "" || st.Fence != nil {
			t.Errorf("status after cancel: snapshot %q, fence %+v; want neither", st.SnapshotETag, st.Fence)
		}
		if p := cfPreflight(t, s, cfA); p.Status != catalog.StatusReadyToSnapshot || p.Fence != nil {
			t.Errorf("preflight after cancel: %s, fence %+v", p.Status, p.Fence)
		}
		cfWantWrites(t, s, cfA)
		cfWantCreate(t, s, cfZ)
		cfStop(t, s)
	case "materialize":
		m := cfMaterialize(t, s, cfA)
		if m.Status != tc.rematerial || (id != "" && m.MigrationID != id) || !m.ReadyToEnableDurableStrong {
			t.Errorf("materialize again: %+v; want %s of %q, ready to enable", m, tc.rematerial, id)
		}
		if p := cfPreflight(t, s, cfA); p.Status != catalog.StatusSnapshotMaterialized || p.Fence == nil ||
			p.Fence.Status != catalog.FenceStatusMaterialized || !p.ReadyToEnableDurableStrong {
			t.Errorf("preflight after materialize: %s, fence %+v, ready %v", p.Status, p.Fence, p.ReadyToEnableDurableStrong)
		}
		cfWantFenced(t, s, cfA, m.MigrationID)
		cfStop(t, s)

		s = cfStart(t, data, cfEnv{backing: catalog.BackingDurableStrong})
		lt := cfLoad(t, s, cfA)
		if lt.MetadataLocation != loc || lt.Metadata.Properties["setup"] != "yes" {
			t.Errorf("durable-strong load: %s %v, want %s with setup=yes", lt.MetadataLocation, lt.Metadata.Properties, loc)
		}
		if st := cfStatus(t, s, cfA); st.Backing != catalog.BackingDurableStrong || !st.Served || st.TableCount != 1 {
			t.Errorf("durable-strong status: %+v", st)
		}
		cfWantWrites(t, s, cfA)
		cfStop(t, s)
	default:
		t.Fatalf("unknown recovery %q", recovery)
	}
}

// cfWriteFile writes a file for the test.
func cfWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCatalogCutoverPermissions: the cutover needs admin:MigrateTableCatalog
// on the warehouse (readwrite is not enough; reading the preflight is),
// and the mount's control files are root's alone.
func TestCatalogCutoverPermissions(t *testing.T) {
	t.Run("rest", func(t *testing.T) {
		s := cfStart(t, t.TempDir(), cfEnv{})
		cfMakeWarehouse(t, s, cfA)
		cfMakeWarehouse(t, s, cfB)
		ep := "--endpoint=" + s.url("")
		policy := filepath.Join(t.TempDir(), "migrate-a.json")
		cfWriteFile(t, policy, `{"Version":"2012-10-17","Statement":[
		  {"Effect":"Allow","Action":"admin:MigrateTableCatalog","Resource":"arn:aws:s3:::lake-a"},
		  {"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::*"}]}`)
		for _, args := range [][]string{
			{"admin", "user", "add", "readwriter", "--secret", "rw-secret-key", "--policy", "readwrite", ep},
			{"admin", "user", "add", "migrator", "--secret", "migrator-secret", "--policy", "@" + policy, ep},
		} {
			if r := runCairn(t, runTimeout, args...); r.code != 0 {
				t.Fatalf("cairn %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			}
		}
		rw := cfCred{"readwriter", "rw-secret-key"}
		mig := cfCred{"migrator", "migrator-secret"}
		for _, tc := range []struct {
			who          cfCred
			method, path string
			want         int
			status       string // the answer's status field when 200
		}{
			{rw, http.MethodGet, cfMigrationPath(cfA), 200, catalog.StatusReadyToSnapshot},
			{rw, http.MethodGet, "/iceberg/v1/" + cfA + "/catalog/recovery", 200, ""},
			{rw, http.MethodPost, cfMigrationPath(cfA), 403, ""},
			{rw, http.MethodDelete, cfMigrationPath(cfA), 403, ""},
			{rw, http.MethodPost, "/iceberg/v1/" + cfA + "/catalog/recovery", 403, ""},
			{mig, http.MethodGet, cfMigrationPath(cfB), 200, catalog.StatusReadyToSnapshot},
			{mig, http.MethodPost, cfMigrationPath(cfB), 403, ""},
			{mig, http.MethodPost, cfMigrationPath(cfA), 200, catalog.StatusSnapshotMaterialized},
			{mig, http.MethodDelete, cfMigrationPath(cfB), 403, ""},
			{mig, http.MethodDelete, cfMigrationPath(cfA), 200, catalog.StatusFenceReleased},
		} {
			what := fmt.Sprintf("%s %s %s", tc.who.access, tc.method, tc.path)
			r := cfCall(t, s, tc.who, tc.method, tc.path, "")
			if tc.want != 200 {
				cfWantErr(t, what, r, tc.want, "ForbiddenException", tc.who.access)
				continue
			}
			var got struct {
				Status string `json:"status"`
			}
			if r.status != 200 || json.Unmarshal(r.body, &got) != nil || got.Status != tc.status {
				t.Errorf("%s: %s, want 200 with status %q", what, r, tc.status)
			}
		}
		// The refused calls changed nothing: b was never fenced, a is
		// released.
		for _, wh := range []string{cfA, cfB} {
			if p := cfPreflight(t, s, wh); p.Fence != nil || p.ObjectBackedWritesFenced {
				t.Errorf("%s after the permission checks: fence %+v", wh, p.Fence)
			}
			cfWantWrites(t, s, wh)
		}
		cfStop(t, s)
	})

	t.Run("control files", func(t *testing.T) {
		requireFUSE(t)
		runAs := cfRunAsNobody(t)
		// The mount point must be reachable by nobody, so that a denial
		// comes from the control tree's modes and not from the path to it.
		mnt, err := os.MkdirTemp("", "cf-mnt-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Remove(mnt) })
		if err := os.Chmod(mnt, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("CAIRN_TABLE_CATALOG_BACKING", "")
		t.Setenv("CAIRN_FAILPOINTS", "")
		s := startMountAt(t, t.TempDir(), mnt)
		cfMakeWarehouse(t, s, cfA)

		ctl := filepath.Join(mnt, ".cairn")
		migration := filepath.Join(ctl, "catalog", cfA, "migration")
		fsEventually(t, "the migration file of a", func() error { _, err := os.Stat(migration); return err })
		for _, tc := range []struct {
			path string
			dir  bool
			perm os.FileMode
		}{
			{ctl, true, 0o700},
			{filepath.Join(ctl, "catalog"), true, 0o700},
			{filepath.Join(ctl, "catalog", cfA), true, 0o700},
			{migration, false, 0o600},
		} {
			fi, err := os.Stat(tc.path)
			if err != nil {
				t.Errorf("stat %s: %v", tc.path, err)
				continue
			}
			st, _ := fi.Sys().(*syscall.Stat_t)
			if fi.IsDir() != tc.dir || fi.Mode().Perm() != tc.perm || st == nil || st.Uid != 0 || st.Gid != 0 {
				t.Errorf("%s: mode %v, owner %v; want %v owned by root", tc.path, fi.Mode(), st, tc.perm)
			}
		}

		// Root reads and writes them.
		b, err := os.ReadFile(migration)
		var p catalog.Preflight
		if err != nil || json.Unmarshal(b, &p) != nil || p.Status != catalog.StatusReadyToSnapshot || p.TableBucket != cfA {
			t.Fatalf("root reads %s: %v %q", migration, err, b)
		}
		if err := os.WriteFile(migration, []byte("preflight\n"), 0); err != nil {
			t.Errorf("root writes preflight to %s: %v", migration, err)
		}

		// nobody reaches the mount but not the control tree.
		if out, err := runAs("ls", mnt); err != nil {
			t.Fatalf("nobody cannot list the mount root %s (so the checks below prove nothing): %v %s", mnt, err, out)
		}
		for _, tc := range []struct {
			what string
			argv []string
		}{
			{"read", []string{"cat", migration}},
			{"write", []string{"sh", "-c", "echo materialize > " + migration}},
			{"list", []string{"ls", ctl}},
		} {
			out, err := runAs(tc.argv...)
			if err == nil || !strings.Contains(out, "Permission denied") {
				t.Errorf("nobody %s (%s): err %v, output %q; want Permission denied", tc.what, strings.Join(tc.argv, " "), err, out)
			}
		}
		if p := cfPreflight(t, s, cfA); p.Fence != nil || p.ObjectBackedWritesFenced {
			t.Errorf("a is fenced after nobody's write: %+v", p.Fence)
		}
		cfWantWrites(t, s, cfA)
	})
}

// cfRunAsNobody returns a runner of commands as uid/gid 65534 with no
// supplementary groups (setpriv, else su), or skips the test.
func cfRunAsNobody(t *testing.T) func(argv ...string) (string, error) {
	t.Helper()
	run := func(name string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), fsCmdTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		return string(out), err
	}
	if p, err := exec.LookPath("setpriv"); err == nil {
		return func(argv ...string) (string, error) {
			return run(p, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--"}, argv...)...)
		}
	}
	if p, err := exec.LookPath("su"); err == nil {
		return func(argv ...string) (string, error) {
			q := make([]string, len(argv))
			for i, a := range argv {
				q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
			}
			return run(p, "nobody", "-s", "/bin/sh", "-c", strings.Join(q, " "))
		}
	}
	t.Skip("neither setpriv nor su is installed: cannot run a command as nobody")
	return nil
}
