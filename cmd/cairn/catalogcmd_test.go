package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

func TestParseCatalog(t *testing.T) {
	client := func(verb, wh string) catalogOptions {
		return catalogOptions{Verb: verb, Warehouse: wh, Endpoint: "http://127.0.0.1:9000", Timeout: 5 * time.Minute}
	}
	tests := []struct {
		name     string
		args     []string
		wantName string
		wantOpts any    // nil: not compared
		wantErr  string // substring; "" means success
	}{
		{name: "nothing", args: []string{"admin", "catalog"}, wantErr: "want backup, maintenance, migration, recover, rehearsal, restore, rotate-token-key or status"},
		{name: "unknown verb", args: []string{"admin", "catalog", "frobnicate", "wh"}, wantErr: `unknown admin catalog command "frobnicate"`},
		{name: "migration without action", args: []string{"admin", "catalog", "migration"}, wantErr: "want cancel, materialize or preflight"},
		{name: "migration unknown action", args: []string{"admin", "catalog", "migration", "materialise", "wh"}, wantErr: `unknown admin catalog migration command "materialise"; did you mean materialize?`},
		{name: "preflight without warehouse", args: []string{"admin", "catalog", "migration", "preflight"}, wantErr: "want the warehouse (table bucket) name (cairn admin catalog migration preflight WAREHOUSE)"},
		{name: "preflight flag without warehouse", args: []string{"admin", "catalog", "migration", "preflight", "--json"}, wantErr: "want the warehouse"},
		{name: "status without warehouse", args: []string{"admin", "catalog", "status"}, wantErr: "want the warehouse"},
		{name: "two warehouses", args: []string{"admin", "catalog", "status", "wh", "other"}, wantErr: `unexpected argument "other" (one warehouse (table bucket) name only)`},
		{name: "unknown flag", args: []string{"admin", "catalog", "backup", "wh", "--dry-run"}, wantErr: "unknown flag --dry-run"},
		{name: "bad endpoint", args: []string{"admin", "catalog", "status", "wh", "--endpoint", "ftp://localhost:9000"}, wantErr: "--endpoint \"ftp://localhost:9000\""},
		{name: "bad timeout", args: []string{"admin", "catalog", "status", "wh", "--timeout", "0s"}, wantErr: "--timeout must be positive"},
		{name: "access key alone", args: []string{"admin", "catalog", "status", "wh", "--access-key", "ak"}, wantErr: "--access-key and --secret-key together"},
		{name: "restore without backup id", args: []string{"admin", "catalog", "restore", "wh", "--expected-etag", "e"}, wantErr: "--backup-id is required"},
		{name: "restore without etag", args: []string{"admin", "catalog", "restore", "wh", "--backup-id", "b"}, wantErr: "--expected-etag is required"},

		{name: "preflight", args: []string{"admin", "catalog", "migration", "preflight", "wh"},
			wantName: "admin catalog migration preflight", wantOpts: client(catalogVerbPreflight, "wh")},
		{name: "materialize alias json", args: []string{"admin", "catalog", "migration", "materialize", "wh", "--alias", "--json", "--endpoint", "https://h:9443"},
			wantName: "admin catalog migration materialize",
			wantOpts: catalogOptions{Verb: catalogVerbMaterialize, Warehouse: "wh", Endpoint: "https://h:9443", JSON: true, Alias: true, Timeout: 5 * time.Minute}},
		{name: "cancel as user", args: []string{"admin", "catalog", "migration", "cancel", "wh", "--access-key", "ak", "--secret-key", "sk"},
			wantName: "admin catalog migration cancel",
			wantOpts: catalogOptions{Verb: catalogVerbCancel, Warehouse: "wh", Endpoint: "http://127.0.0.1:9000", AccessKey: "ak", SecretKey: "sk", Timeout: 5 * time.Minute}},
		{name: "recover dry run", args: []string{"admin", "catalog", "recover", "wh", "--dry-run"},
			wantName: "admin catalog recover", wantOpts: func() catalogOptions { o := client(catalogVerbRecover, "wh"); o.DryRun = true; return o }()},
		{name: "backup", args: []string{"admin", "catalog", "backup", "wh", "--timeout", "1m"},
			wantName: "admin catalog backup", wantOpts: func() catalogOptions { o := client(catalogVerbBackup, "wh"); o.Timeout = time.Minute; return o }()},
		{name: "restore", args: []string{"admin", "catalog", "restore", "wh", "--backup-id", "b1", "--expected-etag", `"e1"`, "--allow-replace"},
			wantName: "admin catalog restore",
			wantOpts: func() catalogOptions {
				o := client(catalogVerbRestore, "wh")
				o.BackupID, o.ExpectedETag, o.AllowReplace = "b1", `"e1"`, true
				return o
			}()},
		{name: "restore onto no snapshot", args: []string{"admin", "catalog", "restore", "wh", "--backup-id", "b1", "--expected-etag", ""},
			wantName: "admin catalog restore",
			wantOpts: func() catalogOptions { o := client(catalogVerbRestore, "wh"); o.BackupID = "b1"; return o }()},
		{name: "status", args: []string{"admin", "catalog", "status", "wh"}, wantName: "admin catalog status", wantOpts: client(catalogVerbStatus, "wh")},
		{name: "maintenance run", args: []string{"admin", "catalog", "maintenance", "run", "wh", "a.b.t"},
			wantName: "admin catalog maintenance run",
			wantOpts: func() catalogOptions {
				o := client(catalogVerbMaintRun, "wh")
				o.Table = catalog.Ident{Namespace: []string{"a", "b"}, Name: "t"}
				return o
			}()},
		{name: "maintenance without table", args: []string{"admin", "catalog", "maintenance", "status", "wh"}, wantErr: "want the warehouse (table bucket) name and the table as NAMESPACE.TABLE"},
		{name: "maintenance table without namespace", args: []string{"admin", "catalog", "maintenance", "run", "wh", "t"}, wantErr: `table "t": write it as NAMESPACE.TABLE`},
		{name: "maintenance empty level", args: []string{"admin", "catalog", "maintenance", "run", "wh", "a..t"}, wantErr: "write it as NAMESPACE.TABLE"},

		{name: "catalog help", args: []string{"admin", "catalog", "-h"}, wantName: "help"},
		{name: "migration help", args: []string{"admin", "catalog", "migration", "--help"}, wantName: "help"},
		{name: "verb help", args: []string{"admin", "catalog", "status", "-h"}, wantName: "help"},
		{name: "verb help after warehouse", args: []string{"admin", "catalog", "restore", "wh", "-h"}, wantName: "help"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := parseArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("parseArgs(%q) = %+v, want error containing %q", tt.args, inv, tt.wantErr)
				}
				if !errors.Is(err, errUsage) {
					t.Errorf("error %v does not wrap errUsage", err)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q does not contain %q", err, tt.wantErr)
				}
				if code, _ := exitStatus("", err); code != exitError {
					t.Errorf("exit code %d, want %d", code, exitError)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tt.args, err)
			}
			if inv.name != tt.wantName {
				t.Errorf("name %q, want %q", inv.name, tt.wantName)
			}
			if tt.wantOpts != nil && !reflect.DeepEqual(inv.opts, tt.wantOpts) {
				t.Errorf("opts\n got %+v\nwant %+v", inv.opts, tt.wantOpts)
			}
		})
	}
}

// catalogServer is a fake Iceberg face: it verifies the SigV4 signature
// (with the signing name the test expects), the method and the path, and
// answers with a canned status and body.
type catalogServer struct {
	t         *testing.T
	service   string // accepted signing name
	keys      map[string]string
	method    string
	path      string
	status    int
	reply     string
	gotBody   []byte // the verified request body
	requests  int
	gotAccess string
}

func (s *catalogServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests++
	fail := func(status int, typ, msg string) {
		s.t.Errorf("fake server: %s", msg)
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
	}
	authz := r.Header.Get("Authorization")
	if !strings.HasPrefix(authz, "AWS4-HMAC-SHA256 ") || !strings.Contains(authz, "/us-east-1/"+s.service+"/aws4_request") {
		fail(http.StatusForbidden, "ForbiddenException", "Authorization header "+authz+" lacks a us-east-1/"+s.service+" SigV4 scope")
		return
	}
	v := sigv4.Verifier{Secret: func(ak string) (string, bool) { sk, ok := s.keys[ak]; return sk, ok }, Services: []string{s.service}}
	auth, body, err := v.Verify(r)
	if err != nil {
		fail(http.StatusForbidden, "ForbiddenException", "signature: "+err.Error())
		return
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		fail(http.StatusForbidden, "ForbiddenException", "payload: "+err.Error())
		return
	}
	s.gotBody, s.gotAccess = raw, auth.AccessKey
	if r.Method != s.method || r.URL.EscapedPath() != s.path {
		fail(http.StatusNotFound, "NoSuchResourceException", "got "+r.Method+" "+r.URL.EscapedPath()+", want "+s.method+" "+s.path)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(s.status)
	_, _ = io.WriteString(w, s.reply)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCatalogClient(t *testing.T) {
	fp, etag := strings.Repeat("ab", 32), `"etag-1"`
	preflight := mustJSON(t, catalog.Preflight{
		TableBucket: "wh", SourceKind: catalog.SourceKindObjectBacked, TargetKind: catalog.TargetKindDurable,
		Status: catalog.StatusManualReviewRequired, NamespaceCount: 2, TableCount: 3, ViewCount: 1, CommitLogCount: 7,
		IdempotencyIndexCount: 4, WarehousePrefixCount: 1, WarehouseIndexReady: true,
		Blockers:            []string{"TABLE_VIEW_IDENTIFIER_COLLISION"},
		RecommendedActions:  []string{"REVIEW_TABLE_VIEW_IDENTIFIER_COLLISIONS", "KEEP_OBJECT_BACKED_ROLLBACK_CONFIG"},
		Rollback:            catalog.DefaultRollback(),
		Fence:               &catalog.Fence{Version: 2, TableBucket: "wh", MigrationID: "mig-123", Status: catalog.FenceStatusPreparing},
		IdentifierConflicts: []catalog.Ident{{Namespace: []string{"db", "sales"}, Name: "orders"}},
		Buckets:             []catalog.BucketReadiness{{TableBucket: "wh", Fence: catalog.FenceStatusPreparing}},
	})
	materialized := mustJSON(t, catalog.MaterializeResult{
		TableBucket: "wh", Status: catalog.StatusSnapshotMaterialized, MigrationID: "mig-123",
		SourceFingerprint: fp, TargetSnapshotETag: etag, ObjectBackedWritesFenced: true, ReadyToEnableDurableStrong: true,
	})
	cancelled := mustJSON(t, catalog.CancelResult{TableBucket: "wh", Status: catalog.StatusFenceReleased, MigrationID: "mig-123", TargetRemoved: true})
	recovery := mustJSON(t, catalog.RecoveryReport{
		TableBucket: "wh", DryRun: true, Commits: 9, Idempotency: 2,
		Repaired: []catalog.RecoveryItem{{Kind: "commit", Key: "c-1", Ident: &catalog.Ident{Namespace: []string{"db"}, Name: "t"},
			Action: catalog.RecoverRollForward, Reason: "staged commit whose pointer moved"}},
		ManualReview: []catalog.RecoveryItem{{Kind: "identifier", Key: "db.v", Action: catalog.RecoverManualReview, Reason: "table and view share a name"}},
	})
	backup := mustJSON(t, catalog.BackupResult{TableBucket: "wh", BackupID: "bk-9", SnapshotETag: etag, Format: 2, Size: 1234})
	restored := mustJSON(t, catalog.RestoreResult{TableBucket: "wh", BackupID: "bk-9", PreviousETag: `"etag-2"`, SnapshotETag: etag, Format: 2, RecordsRestored: 17})
	status := mustJSON(t, catalog.Status{TableBucket: "wh", Backing: "durable-strong", SnapshotFormat: 2, SnapshotHighWater: 2,
		SnapshotETag: etag, Served: true, NamespaceCount: 2, TableCount: 3, StagedCommits: 1})
	conflict := `{"error":{"message":"catalog migration conflict: preflight status is MANUAL_REVIEW_REQUIRED","type":"CommitFailedException","code":409}}`

	tests := []struct {
		name       string
		args       []string // after "admin catalog"; the endpoint is appended
		service    string
		method     string
		path       string
		status     int
		reply      string
		wantCode   int
		wantOut    []string // substrings of stdout
		wantErr    []string // substrings of stderr
		wantBody   any      // the decoded request body, nil: empty
		wantAccess string   // "" means the root user
	}{
		{name: "preflight text", args: []string{"migration", "preflight", "wh"}, service: "s3",
			method: "GET", path: "/iceberg/v1/wh/catalog/migration", status: 200, reply: preflight,
			wantOut: []string{"status:", "MANUAL_REVIEW_REQUIRED", "OBJECT_BACKED -> STRONG_KV_WAL",
				"2 namespaces, 3 tables, 1 views, 7 commit log records, 4 idempotency records, 1 warehouse prefixes",
				"blockers:\n  TABLE_VIEW_IDENTIFIER_COLLISION", "REVIEW_TABLE_VIEW_IDENTIFIER_COLLISIONS",
				"PREPARING, migration id mig-123", "db.sales.orders", "set CAIRN_TABLE_CATALOG_BACKING=object and restart"}},
		{name: "preflight alias signs s3tables", args: []string{"migration", "preflight", "wh", "--alias"}, service: "s3tables",
			method: "GET", path: "/_iceberg/v1/wh/catalog/migration", status: 200, reply: preflight,
			wantOut: []string{"MANUAL_REVIEW_REQUIRED"}},
		{name: "preflight json verbatim", args: []string{"migration", "preflight", "wh", "--json"}, service: "s3",
			method: "GET", path: "/iceberg/v1/wh/catalog/migration", status: 200, reply: preflight,
			wantOut: []string{"{\n  \"table_bucket\": \"wh\",\n  \"source_kind\": \"OBJECT_BACKED\"", `"identifier_conflicts": [`}},
		{name: "materialize", args: []string{"migration", "materialize", "wh"}, service: "s3",
			method: "POST", path: "/iceberg/v1/wh/catalog/migration", status: 200, reply: materialized,
			wantOut: []string{"SNAPSHOT_MATERIALIZED", "migration id:", "mig-123", fp, etag, "restart the server with CAIRN_TABLE_CATALOG_BACKING=durable-strong"}},
		{name: "materialize conflict", args: []string{"migration", "materialize", "wh"}, service: "s3",
			method: "POST", path: "/iceberg/v1/wh/catalog/migration", status: 409, reply: conflict, wantCode: exitError,
			wantErr: []string{"cairn admin catalog migration materialize: 409 CommitFailedException: catalog migration conflict: preflight status is MANUAL_REVIEW_REQUIRED"}},
		{name: "materialize conflict json", args: []string{"migration", "materialize", "wh", "--json"}, service: "s3",
			method: "POST", path: "/iceberg/v1/wh/catalog/migration", status: 409, reply: conflict, wantCode: exitError,
			wantErr: []string{"409 CommitFailedException: catalog migration conflict"}},
		{name: "error without iceberg json", args: []string{"status", "wh"}, service: "s3",
			method: "GET", path: "/iceberg/v1/wh/catalog/status", status: 502, reply: "<html>bad gateway</html>", wantCode: exitError,
			wantErr: []string{"server answered 502 Bad Gateway: <html>bad gateway</html>"}},
		{name: "cancel as another user", args: []string{"migration", "cancel", "wh", "--access-key", "alice", "--secret-key", "alice-secret"}, service: "s3",
			method: "DELETE", path: "/iceberg/v1/wh/catalog/migration", status: 200, reply: cancelled, wantAccess: "alice",
			wantOut: []string{"FENCE_RELEASED", "mig-123", "target removed:"}},
		{name: "recover dry run", args: []string{"recover", "wh", "--dry-run"}, service: "s3",
			method: "GET", path: "/iceberg/v1/wh/catalog/recovery", status: 200, reply: recovery,
			wantOut: []string{"dry run (nothing changed)", "would repair (1):", "ROLL_FORWARD", "db.t", "c-1",
				"manual review (never acted on automatically) (1):", "MANUAL_REVIEW", "table and view share a name"}},
		{name: "recover repairs", args: []string{"recover", "wh"}, service: "s3",
			method: "POST", path: "/iceberg/v1/wh/catalog/recovery", status: 200, reply: `{"table_bucket":"wh","dry_run":false,"repaired":[],"manual_review":[]}`,
			wantOut: []string{"mode:", "repair", "repaired: none", "manual review (never acted on automatically): none"}},
		{name: "backup", args: []string{"backup", "wh"}, service: "s3",
			method: "POST", path: "/iceberg/v1/wh/catalog/backup", status: 200, reply: backup,
			wantOut: []string{"bk-9", etag, "1234 bytes", `cairn admin catalog restore wh --backup-id bk-9 --expected-etag '"etag-1"'`}},
		{name: "restore", args: []string{"restore", "wh", "--backup-id", "bk-9", "--expected-etag", `"etag-2"`, "--allow-replace", "--allow-format-downgrade"}, service: "s3",
			method: "POST", path: "/iceberg/v1/wh/catalog/restore", status: 200, reply: restored,
			wantBody: map[string]any{"backup-id": "bk-9", "expected-snapshot-etag": `"etag-2"`, "allow-replace": true, "allow-format-downgrade": true},
			wantOut:  []string{"records restored:", "17", `"etag-2"`}},
		{name: "restore stale etag", args: []string{"restore", "wh", "--backup-id", "bk-9", "--expected-etag", ""}, service: "s3",
			method: "POST", path: "/iceberg/v1/wh/catalog/restore", status: 409, wantCode: exitError,
			reply:    `{"error":{"message":"expected snapshot etag \"\" but it is \"etag-1\"","type":"CommitFailedException","code":409}}`,
			wantBody: map[string]any{"backup-id": "bk-9", "expected-snapshot-etag": "", "allow-replace": false, "allow-format-downgrade": false},
			wantErr:  []string{"409 CommitFailedException: expected snapshot etag"}},
		{name: "status", args: []string{"status", "wh"}, service: "s3",
			method: "GET", path: "/iceberg/v1/wh/catalog/status", status: 200, reply: status,
			wantOut: []string{"durable-strong", "served:", "format 2 (high-water 2), etag " + etag, "fence:", "none", "1 staged commits"}},
		{name: "escaped warehouse", args: []string{"status", "w h"}, service: "s3",
			method: "GET", path: "/iceberg/v1/w%20h/catalog/status", status: 200, reply: status, wantOut: []string{"durable-strong"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CAIRN_ROOT_USER", "rootuser")
			t.Setenv("CAIRN_ROOT_PASSWORD", "rootpassword")
			t.Setenv("CAIRN_ACCESS_KEY", "")
			t.Setenv("CAIRN_SECRET_KEY", "")
			fake := &catalogServer{t: t, service: tt.service, method: tt.method, path: tt.path, status: tt.status, reply: tt.reply,
				keys: map[string]string{"rootuser": "rootpassword", "alice": "alice-secret"}}
			srv := httptest.NewServer(fake)
			defer srv.Close()

			var stdout, stderr bytes.Buffer
			args := append(append([]string{"admin", "catalog"}, tt.args...), "--endpoint", srv.URL)
			code := run(context.Background(), args, &stdout, &stderr, false)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if fake.requests != 1 {
				t.Errorf("%d requests, want 1", fake.requests)
			}
			wantAccess := tt.wantAccess
			if wantAccess == "" {
				wantAccess = "rootuser"
			}
			if fake.gotAccess != wantAccess {
				t.Errorf("signed by %q, want %q", fake.gotAccess, wantAccess)
			}
			if tt.wantBody == nil {
				if len(fake.gotBody) != 0 {
					t.Errorf("request body %q, want none", fake.gotBody)
				}
			} else {
				var got any
				if err := json.Unmarshal(fake.gotBody, &got); err != nil {
					t.Fatalf("request body %q: %v", fake.gotBody, err)
				}
				if !reflect.DeepEqual(got, tt.wantBody) {
					t.Errorf("request body %v, want %v", got, tt.wantBody)
				}
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
			if tt.wantCode != exitOK && stdout.Len() != 0 {
				t.Errorf("stdout on failure: %q", stdout.String())
			}
			if slices.Contains(tt.args, "--json") && tt.wantCode == exitOK {
				// Verbatim: the same document, indented, keys in the server's order.
				var want bytes.Buffer
				if err := json.Indent(&want, []byte(tt.reply), "", "  "); err != nil {
					t.Fatal(err)
				}
				if got := strings.TrimSuffix(stdout.String(), "\n"); got != want.String() {
					t.Errorf("--json output\n%s\nwant\n%s", got, want.String())
				}
			}
		})
	}
}

// The credentials fall back from flags to CAIRN_ACCESS_KEY/CAIRN_SECRET_KEY
// to the root user.
func TestCatalogCredentials(t *testing.T) {
	tests := []struct {
		name               string
		flagsAK, flagsSK   string
		envAK, envSK       string
		rootUser, rootPass string
		wantAK, wantSK     string
	}{
		{name: "flags win", flagsAK: "f", flagsSK: "fs", envAK: "e", envSK: "es", rootUser: "r", rootPass: "rp", wantAK: "f", wantSK: "fs"},
		{name: "environment", envAK: "e", envSK: "es", rootUser: "r", rootPass: "rp", wantAK: "e", wantSK: "es"},
		{name: "half an environment is ignored", envAK: "e", rootUser: "r", rootPass: "rp", wantAK: "r", wantSK: "rp"},
		{name: "root", rootUser: "r", rootPass: "rp", wantAK: "r", wantSK: "rp"},
		{name: "default root", wantAK: defaultRootUser, wantSK: defaultRootPassword},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CAIRN_ACCESS_KEY", tt.envAK)
			t.Setenv("CAIRN_SECRET_KEY", tt.envSK)
			t.Setenv("CAIRN_ROOT_USER", tt.rootUser)
			t.Setenv("CAIRN_ROOT_PASSWORD", tt.rootPass)
			ak, sk := catalogCredentials(catalogOptions{AccessKey: tt.flagsAK, SecretKey: tt.flagsSK})
			if ak != tt.wantAK || sk != tt.wantSK {
				t.Errorf("credentials %q/%q, want %q/%q", ak, sk, tt.wantAK, tt.wantSK)
			}
		})
	}
}

// An unreachable server is a failed run, not a crash.
func TestCatalogClientUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"admin", "catalog", "status", "wh", "--endpoint", url}, &stdout, &stderr, false)
	if code != exitError || !strings.Contains(stderr.String(), "cairn admin catalog status: catalog API:") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":            "''",
		"bk-9":        "bk-9",
		`"etag-1"`:    `'"etag-1"'`,
		"it's":        `'it'\''s'`,
		"a b":         "'a b'",
		"$HOME":       "'$HOME'",
		"s3://wh/x.y": "s3://wh/x.y",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
