package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
)

// "cairn admin catalog rehearsal" prints a disaster-recovery or a
// scale/fault rehearsal plan for the catalog cutover as JSON, in the shape
// of RustFS's failure_coverage.py (the cutover's reference) but with
// Cairn's endpoints. It changes nothing and makes no
// network calls: running the plan is up to an operator or a CI job gated
// by ci_gate.

// Values of --catalog-backing.
const (
	rehearsalBackingEither = "object-backed-or-durable-strong"
	rehearsalBackingObject = "object"
	rehearsalBackingStrong = "durable-strong"
)

// rehearsalOptions are the flags of "cairn admin catalog rehearsal".
type rehearsalOptions struct {
	DisasterRecovery bool // --print-disaster-recovery-rehearsal
	ScaleFault       bool // --print-scale-fault-rehearsal

	Warehouse              string
	Namespace              string
	Table                  string
	RestPath               string // normalised: ends in /v1
	TableLocation          string // {warehouse} filled in
	WriterCount            int
	MaintenanceWorkerCount int
	IterationCount         int
	CatalogBacking         string
}

func rehearsalCommand(done func(invocation)) *cobra.Command {
	var o rehearsalOptions
	c := leafCommand("rehearsal", "Print a disaster-recovery or scale/fault rehearsal plan as JSON (no network calls)",
		`  cairn admin catalog rehearsal --print-disaster-recovery-rehearsal
  cairn admin catalog rehearsal --print-scale-fault-rehearsal --warehouse lakehouse --writer-count 16`,
		func(c *cobra.Command, args []string) error {
			if err := noArgs(c, args); err != nil {
				return err
			}
			inv, err := o.check()
			if err == nil {
				done(inv)
			}
			return err
		})
	fs := c.Flags()
	fs.BoolVar(&o.DisasterRecovery, "print-disaster-recovery-rehearsal", false, "print the disaster-recovery rehearsal plan")
	fs.BoolVar(&o.ScaleFault, "print-scale-fault-rehearsal", false, "print the scale/fault rehearsal plan")
	fs.StringVar(&o.Warehouse, "warehouse", "cairn-s3table-smoke", "warehouse (table bucket) of the rehearsal")
	fs.StringVar(&o.Namespace, "namespace", "smoke", "namespace of the rehearsal table (levels separated by '.')")
	fs.StringVar(&o.Table, "table", "events", "rehearsal table")
	fs.StringVar(&o.RestPath, "rest-path", "/iceberg", "Iceberg REST base path (or URL); /v1 is appended when missing")
	fs.StringVar(&o.TableLocation, "table-warehouse-location", "s3://{warehouse}/tables/table-id", "the table's location; {warehouse} is replaced")
	fs.IntVar(&o.WriterCount, "writer-count", 8, "concurrent committers of the scale/fault rehearsal")
	fs.IntVar(&o.MaintenanceWorkerCount, "maintenance-worker-count", 2, "concurrent recovery/maintenance workers of the scale/fault rehearsal")
	fs.IntVar(&o.IterationCount, "iteration-count", 50, "commits per writer")
	fs.StringVar(&o.CatalogBacking, "catalog-backing", rehearsalBackingEither,
		"backing under test: "+rehearsalBackingObject+", "+rehearsalBackingStrong+" or "+rehearsalBackingEither)
	return c
}

// check validates the flags and returns the invocation that prints the
// plan.
func (o rehearsalOptions) check() (invocation, error) {
	const name = "admin catalog rehearsal"
	if o.DisasterRecovery == o.ScaleFault {
		return invocation{}, usageErrorf(name, "give exactly one of --print-disaster-recovery-rehearsal and --print-scale-fault-rehearsal")
	}
	for _, c := range []struct {
		flag string
		n    int
	}{{"writer-count", o.WriterCount}, {"maintenance-worker-count", o.MaintenanceWorkerCount}, {"iteration-count", o.IterationCount}} {
		if c.n <= 0 {
			return invocation{}, usageErrorf(name, "--%s must be a positive integer, got %d", c.flag, c.n)
		}
	}
	for _, c := range []struct{ flag, v string }{{"warehouse", o.Warehouse}, {"namespace", o.Namespace}, {"table", o.Table}, {"rest-path", o.RestPath}, {"table-warehouse-location", o.TableLocation}} {
		if strings.TrimSpace(c.v) == "" {
			return invocation{}, usageErrorf(name, "--%s must not be empty", c.flag)
		}
	}
	switch o.CatalogBacking {
	case rehearsalBackingEither, rehearsalBackingObject, rehearsalBackingStrong:
	default:
		return invocation{}, usageErrorf(name, "--catalog-backing %q: want %s, %s or %s",
			o.CatalogBacking, rehearsalBackingObject, rehearsalBackingStrong, rehearsalBackingEither)
	}
	o.RestPath = normaliseRestPath(o.RestPath)
	o.TableLocation = strings.TrimSuffix(strings.ReplaceAll(o.TableLocation, "{warehouse}", o.Warehouse), "/")
	return invocation{name: name, opts: catalogOptions{Verb: catalogVerbRehearsal, Rehearsal: o}, logLevel: zerolog.InfoLevel}, nil
}

// normaliseRestPath makes p absolute (unless it is a URL), without a
// trailing slash, and ending in /v1.
func normaliseRestPath(p string) string {
	p = strings.TrimRight(strings.TrimSpace(p), "/")
	if !strings.Contains(p, "://") && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if !strings.HasSuffix(p, "/v1") {
		p += "/v1"
	}
	return p
}

// runRehearsal prints the selected plan.
func runRehearsal(o rehearsalOptions, w io.Writer) error {
	plan := scaleFaultPlan(o)
	if o.DisasterRecovery {
		plan = disasterRecoveryPlan(o)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(plan)
}

// The plans are maps so that encoding/json sorts every object's keys.

// rehearsalStep is one step: method is an HTTP verb or S3-PROBE,
// CLIENT-STRESS, OPERATOR or EVIDENCE; expectedStatus lists the accepted
// HTTP statuses (empty for steps without one).
func rehearsalStep(name, method, path string, expectedStatus []int, behavior string, body map[string]any) map[string]any {
	if expectedStatus == nil {
		expectedStatus = []int{}
	}
	s := map[string]any{
		"name":              name,
		"method":            method,
		"path":              path,
		"expected_status":   expectedStatus,
		"expected_behavior": behavior,
	}
	if body != nil {
		s["body"] = body
	}
	return s
}

func rehearsalPhase(name, objective string, steps ...map[string]any) map[string]any {
	return map[string]any{"name": name, "objective": objective, "steps": steps}
}

// rehearsalPaths are the request paths of a plan.
type rehearsalPaths struct {
	table, status, recovery, migration, backup, restore string
}

func pathsFor(o rehearsalOptions) rehearsalPaths {
	levels := strings.Split(o.Namespace, ".")
	for i, l := range levels {
		levels[i] = url.PathEscape(l)
	}
	wh := normaliseRestPath(o.RestPath) + "/" + url.PathEscape(o.Warehouse)
	cat := wh + "/catalog/"
	return rehearsalPaths{
		table:     wh + "/namespaces/" + strings.Join(levels, "%1F") + "/tables/" + url.PathEscape(o.Table),
		status:    cat + "status",
		recovery:  cat + "recovery",
		migration: cat + "migration",
		backup:    cat + "backup",
		restore:   cat + "restore",
	}
}

func (o rehearsalOptions) strong() bool { return o.CatalogBacking != rehearsalBackingObject }
func (o rehearsalOptions) object() bool { return o.CatalogBacking != rehearsalBackingStrong }

// commonPreconditions are shared by both plans.
func commonPreconditions(o rehearsalOptions, gate string) []string {
	return []string{
		"run only when " + gate + " is set, against a disposable Cairn server and never a production warehouse",
		fmt.Sprintf("table bucket %s exists ('cairn admin table-bucket create %s') with namespace %s and table %s at location %s",
			o.Warehouse, o.Warehouse, o.Namespace, o.Table, o.TableLocation),
		"paths are relative to the server's endpoint; requests are SigV4-signed for region us-east-1 with signing name s3 " +
			"(s3tables on the /_iceberg alias) as the root user (CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD) " +
			"or a user allowed admin:GetTableCatalog and admin:MigrateTableCatalog",
		"catalog backing under test: " + o.CatalogBacking + " (CAIRN_TABLE_CATALOG_BACKING=object or durable-strong on the server)",
		"this plan was printed by 'cairn admin catalog rehearsal', which changed nothing and made no network calls",
	}
}

func disasterRecoveryPlan(o rehearsalOptions) map[string]any {
	const gate = "CAIRN_TABLE_CATALOG_DR_REHEARSAL=1"
	p := pathsFor(o)

	baseline := []map[string]any{
		rehearsalStep("load-table-baseline", "GET", p.table, []int{200},
			"loadTable answers the table; record metadata-location and the current snapshot id as the baseline", nil),
		rehearsalStep("catalog-status-baseline", "GET", p.status, []int{200},
			"records backing, served, snapshot_etag, fence and counts; served is true and the fence is null", nil),
	}
	if o.strong() {
		baseline = append(baseline, rehearsalStep("backup-durable-strong-snapshot", "POST", p.backup, []int{200},
			"durable-strong servers only: records backup-id and snapshot-etag for rollback-or-restore; "+
				"the same content backed up again answers the same backup-id with existed=true", nil))
	}

	var rollback []map[string]any
	if o.strong() {
		rollback = append(rollback,
			rehearsalStep("catalog-status-before-restore", "GET", p.status, []int{200},
				"durable-strong servers only: records the current snapshot_etag, which a repair may have moved since the baseline", nil),
			rehearsalStep("restore-durable-strong-snapshot", "POST", p.restore, []int{200, 409},
				"durable-strong servers only: 200 restores the baseline backup when expected-snapshot-etag still matches (previous-snapshot-etag echoes it); "+
					"409 CommitFailedException when the snapshot moved in between, and nothing is changed: re-read status and retry with its etag",
				map[string]any{
					"backup-id":              "{backup-id from backup-durable-strong-snapshot}",
					"expected-snapshot-etag": "{snapshot_etag from catalog-status-before-restore}",
					"allow-replace":          true,
				}))
	}
	if o.object() {
		rollback = append(rollback, rehearsalStep("release-stale-migration-fence", "DELETE", p.migration, []int{200, 409},
			"object-backed servers only: 200 with NO_MIGRATION_FENCE (nothing to roll back) or FENCE_RELEASED "+
				"(a target created by the migration is removed); 409 when the source or target changed after materialization", nil))
	}

	plan := map[string]any{
		"mode":    "manual-or-ci-optional",
		"ci_gate": gate,
		"preconditions": append(commonPreconditions(o, gate),
			"no other writer commits to "+o.Warehouse+" during the rehearsal, so that the baseline stays comparable"),
		"expected_invariants": []string{
			"loadTable answers the baseline metadata-location after recovery, restore and migration unless a commit accepted in between moved it",
			"no commit that was answered 200 is lost, and none answered 409 leaves a trace",
			"GET .../catalog/recovery and GET .../catalog/migration are dry runs: they change nothing",
			"recovery never acts on MANUAL_REVIEW items, and a second repair run finds nothing left to repair",
			"restore replaces the snapshot only when expected-snapshot-etag matches the current one; otherwise 409 and nothing changes",
			"while a migration fence holds the warehouse, object-backed writes fail 409 CommitFailedException naming the migration id; reads stay served",
			"table-scoped S3 access stays inside " + o.TableLocation + "; requests outside it are denied",
			"every error answer is Iceberg error JSON {\"error\":{\"message\",\"type\",\"code\"}}",
		},
		"phases": []map[string]any{
			rehearsalPhase("capture-baseline", "record the table, the catalog state and (durable-strong) a backup before anything is disturbed",
				baseline...),
			rehearsalPhase("diagnose-and-repair", "find staged or half-finished commits, repair what is safe, and confirm nothing is left",
				rehearsalStep("recovery-dry-run", "GET", p.recovery, []int{200},
					"dry_run is true; lists the repairable items (ROLL_FORWARD, ROLL_BACK, BACKFILL, DROP_STALE, DROP_EXPIRED) and the MANUAL_REVIEW items; changes nothing", nil),
				rehearsalStep("recovery-repair", "POST", p.recovery, []int{200},
					"dry_run is false; repaired lists what the dry run found repairable; manual_review items are listed and left alone", nil),
				rehearsalStep("recovery-dry-run-after-repair", "GET", p.recovery, []int{200},
					"repaired is empty; manual_review is unchanged from the repair run", nil),
			),
			rehearsalPhase("rollback-or-restore", "return the catalog to the baseline the operator selects, guarded by ETags", rollback...),
			rehearsalPhase("migration-preflight", "confirm the warehouse can be cut over to durable-strong, then materialize the snapshot (object-backed servers)",
				rehearsalStep("migration-preflight", "GET", p.migration, []int{200},
					"status READY_TO_SNAPSHOT with no blockers and warehouse_index_ready true; changes nothing", nil),
				rehearsalStep("migration-materialize", "POST", p.migration, []int{200},
					"status SNAPSHOT_MATERIALIZED with a migration_id, source_fingerprint and target_snapshot_etag; object_backed_writes_fenced is true", nil),
				rehearsalStep("migration-preflight-after-materialize", "GET", p.migration, []int{200},
					"status SNAPSHOT_MATERIALIZED; the fence is MATERIALIZED with the same migration_id and source_fingerprint", nil),
			),
			rehearsalPhase("post-recovery-validation", "check that the table and its access boundaries are as in the baseline",
				rehearsalStep("load-table-after-recovery", "GET", p.table, []int{200},
					"metadata-location and current snapshot id equal the baseline (or the last accepted commit)", nil),
				rehearsalStep("s3-probe-inside-table-location", "S3-PROBE", o.TableLocation+"/metadata/", []int{200},
					"a table-scoped principal may read inside the table location", nil),
				rehearsalStep("s3-probe-outside-table-location", "S3-PROBE", "s3://"+o.Warehouse+"/outside-table-location/probe", []int{403},
					"the same principal is denied outside the table location (AccessDenied)", nil),
				rehearsalStep("catalog-status-after-recovery", "GET", p.status, []int{200},
					"served is true, staged_commit_count is 0, and the counts equal the baseline's", nil),
			),
		},
	}
	return plan
}

func scaleFaultPlan(o rehearsalOptions) map[string]any {
	const gate = "CAIRN_TABLE_CATALOG_SCALE_FAULT_REHEARSAL=1"
	p := pathsFor(o)
	total := o.WriterCount * o.IterationCount

	restart := []map[string]any{
		rehearsalStep("restart-with-durable-strong", "OPERATOR", "CAIRN_TABLE_CATALOG_BACKING=durable-strong", nil,
			"stop the server and start it on the same data with CAIRN_TABLE_CATALOG_BACKING=durable-strong; it refuses to start on an invalid value", nil),
		rehearsalStep("catalog-status-durable-strong", "GET", p.status, []int{200},
			"backing is durable-strong, served is true, snapshot_etag equals the target_snapshot_etag of the materialize step", nil),
		rehearsalStep("load-table-durable-strong", "GET", p.table, []int{200},
			"metadata-location equals the last one committed before the fence", nil),
		rehearsalStep("commit-durable-strong", "POST", p.table, []int{200, 409},
			"commits are accepted again on the durable-strong backing; 409 only for a stale requirement", nil),
	}
	if o.strong() {
		restart = append(restart, rehearsalStep("backup-after-cutover", "POST", p.backup, []int{200},
			"records a backup-id and snapshot-etag of the durable-strong snapshot as the new rollback point", nil))
	}

	return map[string]any{
		"mode":    "manual-or-ci-optional",
		"ci_gate": gate,
		"preconditions": append(commonPreconditions(o, gate),
			"the server starts object-backed (CAIRN_TABLE_CATALOG_BACKING=object) so that the cutover runs under load",
			fmt.Sprintf("a load client can run %d concurrent writers of %d commits each, and %d concurrent maintenance workers",
				o.WriterCount, o.IterationCount, o.MaintenanceWorkerCount),
			"the operator can SIGKILL the server process and restart it on the same data directory",
		),
		"expected_invariants": []string{
			fmt.Sprintf("each of the %d commit attempts (%d writers x %d iterations) ends 200 or 409; every 200 is in the final table history once, no commit is lost",
				total, o.WriterCount, o.IterationCount),
			"while the migration fence holds the warehouse, object-backed writes fail 409 CommitFailedException naming the migration id and leave no partial state",
			"after SIGKILL during materialize, preflight shows one consistent state: no fence, a PREPARING fence to resume or cancel, or a MATERIALIZED fence whose fingerprint matches the target",
			"materialize and cancel are safe to repeat: a retry answers SNAPSHOT_ALREADY_MATERIALIZED or NO_MIGRATION_FENCE",
			"after the restart with durable-strong, loadTable answers the last metadata-location committed before the fence",
			"no staged commit is left behind: recovery finds nothing to repair at the end",
		},
		"phases": []map[string]any{
			rehearsalPhase("concurrent-commit-stress", "many writers commit to one table while maintenance workers run recovery dry runs",
				rehearsalStep("concurrent-commits", "CLIENT-STRESS", p.table, []int{200, 409},
					fmt.Sprintf("%d writers x %d iterations = %d commits with assert-ref-snapshot-id requirements; 409 CommitFailedException on a lost race is retried after a reload; no lost commit",
						o.WriterCount, o.IterationCount, total), map[string]any{
						"writers":               o.WriterCount,
						"iterations_per_writer": o.IterationCount,
						"total_commits":         total,
					}),
				rehearsalStep("concurrent-recovery-dry-runs", "CLIENT-STRESS", p.recovery, []int{200},
					fmt.Sprintf("%d maintenance workers loop GET (dry run) during the stress; they never block a writer and change nothing", o.MaintenanceWorkerCount),
					map[string]any{"workers": o.MaintenanceWorkerCount}),
				rehearsalStep("load-table-after-stress", "GET", p.table, []int{200},
					"the snapshot log holds one snapshot per commit answered 200", nil),
			),
			rehearsalPhase("durable-backing-cutover-under-load", "materialize the durable-strong snapshot while writers keep committing",
				rehearsalStep("migration-preflight-under-load", "GET", p.migration, []int{200},
					"status READY_TO_SNAPSHOT (or RECOVERY_REQUIRED while a commit is staged: run recovery and repeat)", nil),
				rehearsalStep("migration-materialize-under-load", "POST", p.migration, []int{200},
					"drains in-flight writers, then answers SNAPSHOT_MATERIALIZED with a migration_id; object_backed_writes_fenced is true", nil),
				rehearsalStep("object-backed-write-while-fenced", "POST", p.table, []int{409},
					"409 CommitFailedException whose message names the migration id; the table is unchanged", nil),
			),
			rehearsalPhase("kill-and-resume", "a crash in the middle of materialize leaves a state that can be resumed or cancelled",
				rehearsalStep("cancel-before-kill", "DELETE", p.migration, []int{200},
					"FENCE_RELEASED: the cutover of the previous phase is rolled back so that the next materialize starts afresh; object-backed writes are accepted again", nil),
				rehearsalStep("sigkill-during-materialize", "OPERATOR", "kill -KILL {server pid} while POST "+p.migration+" runs", nil,
					"send materialize again while the writers run and SIGKILL the server before it answers; the server dies without cleanup", nil),
				rehearsalStep("restart-object-backed", "OPERATOR", "CAIRN_TABLE_CATALOG_BACKING=object", nil,
					"start the server again on the same data, still object-backed", nil),
				rehearsalStep("migration-preflight-after-kill", "GET", p.migration, []int{200},
					"consistent: no fence, a PREPARING fence, or a MATERIALIZED fence whose fingerprint matches the target; object_backed_writes_fenced agrees with the fence", nil),
				rehearsalStep("resume-materialize", "POST", p.migration, []int{200},
					"SNAPSHOT_MATERIALIZED or SNAPSHOT_ALREADY_MATERIALIZED with the fence's migration_id", nil),
				rehearsalStep("alternative-cancel-instead-of-resume", "DELETE", p.migration, []int{200},
					"instead of resuming: FENCE_RELEASED (or NO_MIGRATION_FENCE) and object-backed writes are accepted again; then repeat the cutover phase", nil),
			),
			rehearsalPhase("restart-durable-strong", "switch the server to the durable-strong backing and check that nothing was lost", restart...),
			rehearsalPhase("post-run-evidence", "keep what shows the invariants held",
				rehearsalStep("catalog-status-evidence", "EVIDENCE", p.status, []int{200},
					"save the final status document", nil),
				rehearsalStep("recovery-dry-run-evidence", "EVIDENCE", p.recovery, []int{200},
					"save the final recovery dry run: repaired and manual_review are empty", nil),
				rehearsalStep("stress-client-report", "EVIDENCE", "client report", nil,
					fmt.Sprintf("save the per-writer counts of 200 and 409 answers; their 200s sum to the snapshots added (at most %d)", total), nil),
				rehearsalStep("server-metrics-and-logs", "EVIDENCE", "/metrics and the server log", nil,
					"save cairn_iceberg_requests_total by route and status and the server log of the run", nil),
			),
		},
	}
}
