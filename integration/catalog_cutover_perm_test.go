package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

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
		mnt := reachableMountPoint(t, "cf-mnt-")
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
