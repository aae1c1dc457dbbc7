package main

// The readable output of `cairn admin catalog` (without --json).

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

// Readable output.

// catalogKV collects "key:  value" lines aligned in a column.
type catalogKV struct{ tw *tabwriter.Writer }

func newCatalogKV(w io.Writer) catalogKV { return catalogKV{tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)} }

func (k catalogKV) add(key, format string, args ...any) {
	_, _ = fmt.Fprintf(k.tw, "%s:\t%s\n", key, fmt.Sprintf(format, args...))
}

func (k catalogKV) flush() error { return k.tw.Flush() }

func catalogYesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func catalogOrNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeCatalogList prints a titled list, or "title: none".
func writeCatalogList(w io.Writer, title string, items []string) {
	if len(items) == 0 {
		_, _ = fmt.Fprintf(w, "%s: none\n", title)
		return
	}
	_, _ = fmt.Fprintf(w, "%s:\n", title)
	for _, it := range items {
		_, _ = fmt.Fprintf(w, "  %s\n", it)
	}
}

func catalogFenceLine(f *catalog.Fence) string {
	if f == nil {
		return "none"
	}
	s := fmt.Sprintf("%s, migration id %s", f.Status, f.MigrationID)
	if !f.Created.IsZero() {
		s += ", created " + f.Created.UTC().Format(time.RFC3339)
	}
	return s
}

func addCatalogFence(k catalogKV, f *catalog.Fence) {
	k.add("fence", "%s", catalogFenceLine(f))
	if f == nil {
		return
	}
	if f.SourceFingerprint != nil {
		k.add("fence source fingerprint", "%s", *f.SourceFingerprint)
	}
	if f.TargetSnapshotETag != nil {
		k.add("fence target snapshot etag", "%s", *f.TargetSnapshotETag)
	}
}

func writePreflight(w io.Writer, p catalog.Preflight) error {
	k := newCatalogKV(w)
	k.add("table bucket", "%s", p.TableBucket)
	k.add("status", "%s", p.Status)
	k.add("cutover", "%s -> %s", p.SourceKind, p.TargetKind)
	k.add("counts", "%d namespaces, %d tables, %d views, %d commit log records, %d idempotency records, %d warehouse prefixes",
		p.NamespaceCount, p.TableCount, p.ViewCount, p.CommitLogCount, p.IdempotencyIndexCount, p.WarehousePrefixCount)
	k.add("warehouse index ready", "%s", catalogYesNo(p.WarehouseIndexReady))
	k.add("object-backed writes fenced", "%s", catalogYesNo(p.ObjectBackedWritesFenced))
	k.add("ready to enable durable-strong", "%s", catalogYesNo(p.ReadyToEnableDurableStrong))
	addCatalogFence(k, p.Fence)
	if r := p.Rollback; r.BackingConfigKey != "" {
		restart := ""
		if r.RequiresOperatorRestart {
			restart = " and restart"
		}
		k.add("rollback", "set %s=%s%s (object-backed catalog preserved: %s)",
			r.BackingConfigKey, r.RollbackBackingValue, restart, catalogYesNo(r.PreservesObjectBackedCatalog))
	}
	if err := k.flush(); err != nil {
		return err
	}
	writeCatalogList(w, "blockers", p.Blockers)
	writeCatalogList(w, "recommended actions", p.RecommendedActions)
	if len(p.Buckets) == 0 {
		_, _ = fmt.Fprintln(w, "table buckets: none")
	} else {
		_, _ = fmt.Fprintln(w, "table buckets:")
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "  TABLE BUCKET\tFENCE\tREADY\tSOURCE FINGERPRINT\tTARGET FINGERPRINT")
		for _, b := range p.Buckets {
			_, _ = fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", b.TableBucket, b.Fence, catalogYesNo(b.Ready),
				catalogOrNone(b.SourceFingerprint), catalogOrNone(b.TargetFingerprint))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	conflicts := make([]string, len(p.IdentifierConflicts))
	for i, id := range p.IdentifierConflicts {
		conflicts[i] = id.String()
	}
	writeCatalogList(w, "identifier conflicts (a table and a view share the name)", conflicts)
	if p.Recovery != nil {
		return writeRecoveryItems(w, *p.Recovery)
	}
	return nil
}

func writeMaterialize(w io.Writer, m catalog.MaterializeResult) error {
	k := newCatalogKV(w)
	k.add("table bucket", "%s", m.TableBucket)
	k.add("status", "%s", m.Status)
	k.add("migration id", "%s", m.MigrationID)
	k.add("cutover", "%s -> %s", m.SourceKind, m.TargetKind)
	k.add("source fingerprint", "%s", catalogOrNone(m.SourceFingerprint))
	k.add("target snapshot etag", "%s", catalogOrNone(m.TargetSnapshotETag))
	k.add("counts", "%d namespaces, %d tables, %d views, %d commit log records, %d idempotency records",
		m.NamespaceCount, m.TableCount, m.ViewCount, m.CommitLogCount, m.IdempotencyIndexCount)
	k.add("object-backed writes fenced", "%s", catalogYesNo(m.ObjectBackedWritesFenced))
	k.add("ready to enable durable-strong", "%s", catalogYesNo(m.ReadyToEnableDurableStrong))
	if err := k.flush(); err != nil {
		return err
	}
	var err error
	if m.ReadyToEnableDurableStrong {
		_, err = fmt.Fprintf(w, "next: restart the server with %s=%s (keep %s=%s at hand for rollback)\n",
			catalog.BackingConfigKey, catalog.BackingDurableStrong, catalog.BackingConfigKey, catalog.BackingObject)
	} else {
		_, err = fmt.Fprintln(w, "next: materialize the remaining table buckets (see 'cairn admin catalog migration preflight')")
	}
	return err
}

func writeCancel(w io.Writer, c catalog.CancelResult) error {
	k := newCatalogKV(w)
	k.add("table bucket", "%s", c.TableBucket)
	k.add("status", "%s", c.Status)
	k.add("migration id", "%s", catalogOrNone(c.MigrationID))
	k.add("target removed", "%s", catalogYesNo(c.TargetRemoved))
	k.add("registry fence released", "%s", catalogYesNo(c.RegistryFenceReleased))
	k.add("object-backed writes fenced", "%s", catalogYesNo(c.ObjectBackedWritesFenced))
	return k.flush()
}

func writeRecovery(w io.Writer, r catalog.RecoveryReport) error {
	k := newCatalogKV(w)
	k.add("table bucket", "%s", r.TableBucket)
	if r.DryRun {
		k.add("mode", "dry run (nothing changed)")
	} else {
		k.add("mode", "repair")
	}
	k.add("records looked at", "%d commit log records, %d idempotency records", r.Commits, r.Idempotency)
	if err := k.flush(); err != nil {
		return err
	}
	return writeRecoveryItems(w, r)
}

// writeRecoveryItems lists the repaired (or, in a dry run, repairable)
// items and the ones left for manual review.
func writeRecoveryItems(w io.Writer, r catalog.RecoveryReport) error {
	title := "repaired"
	if r.DryRun {
		title = "would repair"
	}
	if err := writeRecoveryList(w, title, r.Repaired); err != nil {
		return err
	}
	if err := writeRecoveryList(w, "manual review (never acted on automatically)", r.ManualReview); err != nil {
		return err
	}
	return nil
}

func writeRecoveryList(w io.Writer, title string, items []catalog.RecoveryItem) error {
	if len(items) == 0 {
		_, err := fmt.Fprintf(w, "%s: none\n", title)
		return err
	}
	_, _ = fmt.Fprintf(w, "%s (%d):\n", title, len(items))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "  ACTION\tKIND\tIDENTIFIER\tKEY\tREASON")
	for _, it := range items {
		ident := "-"
		if it.Ident != nil {
			ident = it.Ident.String()
		}
		_, _ = fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", it.Action, it.Kind, ident, catalogOrNone(it.Key), it.Reason)
	}
	return tw.Flush()
}

func writeBackup(w io.Writer, wh string, b catalog.BackupResult) error {
	k := newCatalogKV(w)
	k.add("table bucket", "%s", b.TableBucket)
	k.add("backup id", "%s", b.BackupID)
	k.add("snapshot etag", "%s", catalogOrNone(b.SnapshotETag))
	k.add("format", "%d", b.Format)
	k.add("size", "%d bytes", b.Size)
	if !b.Created.IsZero() {
		k.add("created", "%s", b.Created.UTC().Format(time.RFC3339))
	}
	if b.Existed {
		k.add("existed", "yes (the same content was backed up before)")
	}
	if err := k.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "restore while the snapshot is unchanged with: cairn admin catalog restore %s --backup-id %s --expected-etag %s\n",
		shellQuote(wh), shellQuote(b.BackupID), shellQuote(b.SnapshotETag))
	return err
}

// shellQuote quotes s for a POSIX shell (ETags carry double quotes).
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		safe := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,", r)
		return !safe
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func writeRestore(w io.Writer, r catalog.RestoreResult) error {
	k := newCatalogKV(w)
	k.add("table bucket", "%s", r.TableBucket)
	k.add("backup id", "%s", r.BackupID)
	k.add("previous snapshot etag", "%s", catalogOrNone(r.PreviousETag))
	k.add("snapshot etag", "%s", catalogOrNone(r.SnapshotETag))
	k.add("format", "%d", r.Format)
	k.add("records restored", "%d", r.RecordsRestored)
	k.add("registry entry restored", "%s", catalogYesNo(r.RegistryRestored))
	return k.flush()
}

func writeStatus(w io.Writer, s catalog.Status) error {
	k := newCatalogKV(w)
	k.add("table bucket", "%s", s.TableBucket)
	k.add("backing", "%s", s.Backing)
	if s.Served {
		k.add("served", "yes")
	} else {
		k.add("served", "NO: %s", catalogOrNone(s.Unhealthy))
	}
	if s.SnapshotFormat == 0 {
		k.add("snapshot", "none")
	} else {
		k.add("snapshot", "format %d (high-water %d), etag %s", s.SnapshotFormat, s.SnapshotHighWater, catalogOrNone(s.SnapshotETag))
	}
	addCatalogFence(k, s.Fence)
	k.add("counts", "%d namespaces, %d tables, %d views, %d commit log records, %d staged commits, %d idempotency records",
		s.NamespaceCount, s.TableCount, s.ViewCount, s.CommitLogCount, s.StagedCommits, s.IdempotencyCount)
	if err := k.flush(); err != nil {
		return err
	}
	if len(s.Quarantined) > 0 {
		q := make([]string, len(s.Quarantined))
		for i, id := range s.Quarantined {
			q[i] = id.String()
		}
		writeCatalogList(w, "quarantined (cleanup only)", q)
	}
	return nil
}

// writeMaintenance prints a table's maintenance: per job, whether it is
// enabled (and from where), its settings and its last outcome.
func writeMaintenance(w io.Writer, m catalog.Maintenance) error {
	k := newCatalogKV(w)
	for _, job := range catalog.JobKinds() {
		cfg := m.Effective[job]
		from := "table"
		if _, own := m.Own[job]; !own {
			from = "warehouse"
		}
		if !cfg.Enabled {
			k.add(string(job), "disabled")
			continue
		}
		k.add(string(job), "enabled (%s settings): %s", from, jobSettings(job, cfg))
		st := m.Status[job]
		line := st.Status
		if !st.LastRun.IsZero() {
			line += ", " + st.LastRun.Format(time.RFC3339)
		}
		if st.Failure != "" {
			line += ": " + st.Failure
		}
		if len(st.Counts) > 0 {
			names := slices.Sorted(maps.Keys(st.Counts))
			parts := make([]string, len(names))
			for i, n := range names {
				parts[i] = fmt.Sprintf("%s %d", n, st.Counts[n])
			}
			line += " (" + strings.Join(parts, ", ") + ")"
		}
		k.add("  last run", "%s", line)
	}
	return k.flush()
}

// jobSettings prints one job's settings.
func jobSettings(job catalog.JobKind, c catalog.JobConfig) string {
	switch job {
	case catalog.JobCompaction:
		return fmt.Sprintf("target %d MiB, strategy %s", c.TargetFileSize>>20, c.Strategy)
	case catalog.JobSnapshots:
		return fmt.Sprintf("keep at least %d, expire after %s", c.MinSnapshotsToKeep, c.MaxSnapshotAge)
	default:
		return fmt.Sprintf("remove unreferenced files after %s", c.UnreferencedAfter)
	}
}
