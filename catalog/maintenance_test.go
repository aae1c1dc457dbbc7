package catalog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

func TestSetMaintenanceBounds(t *testing.T) {
	e := newEnv(t)
	e.mustCreate("t")
	tid := id("t")
	cases := []struct {
		name string
		kind catalog.JobKind
		cfg  catalog.JobConfig
		want error
	}{
		{"defaults", catalog.JobCompaction, catalog.JobConfig{Enabled: true}, nil},
		{"binpack", catalog.JobCompaction, catalog.JobConfig{Enabled: true, TargetFileSize: 64 << 20, Strategy: "binpack"}, nil},
		{"target too small", catalog.JobCompaction, catalog.JobConfig{Enabled: true, TargetFileSize: 1000}, catalog.ErrBadRequest},
		{"target too large", catalog.JobCompaction, catalog.JobConfig{Enabled: true, TargetFileSize: 1 << 30}, catalog.ErrBadRequest},
		{"sort unsupported", catalog.JobCompaction, catalog.JobConfig{Enabled: true, Strategy: "sort"}, catalog.ErrBadRequest},
		{"unknown strategy", catalog.JobCompaction, catalog.JobConfig{Enabled: true, Strategy: "x"}, catalog.ErrBadRequest},
		{"foreign setting", catalog.JobCompaction, catalog.JobConfig{Enabled: true, MinSnapshotsToKeep: 3}, catalog.ErrBadRequest},
		{"snapshots", catalog.JobSnapshots, catalog.JobConfig{Enabled: true, MinSnapshotsToKeep: 5, MaxSnapshotAge: time.Hour}, nil},
		{"keep none", catalog.JobSnapshots, catalog.JobConfig{Enabled: true, MinSnapshotsToKeep: -1}, catalog.ErrBadRequest},
		{"grace too short", catalog.JobUnreferenced, catalog.JobConfig{Enabled: true, UnreferencedAfter: time.Millisecond}, catalog.ErrBadRequest},
		{"disabled skips checks", catalog.JobUnreferenced, catalog.JobConfig{UnreferencedAfter: time.Millisecond}, nil},
		{"unknown job", catalog.JobKind("icebergSort"), catalog.JobConfig{Enabled: true}, catalog.ErrBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := e.svc.SetMaintenance(context.Background(), "lake", &tid, c.kind, c.cfg)
			if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

func TestMaintenanceEffective(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.mustCreate("a")
	e.mustCreate("b")
	a, b := id("a"), id("b")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.svc.SetMaintenance(ctx, "lake", nil, catalog.JobUnreferenced, catalog.JobConfig{Enabled: true}))
	must(e.svc.SetMaintenance(ctx, "lake", &a, catalog.JobUnreferenced, catalog.JobConfig{Enabled: false}))
	must(e.svc.SetMaintenance(ctx, "lake", &a, catalog.JobSnapshots, catalog.JobConfig{Enabled: true, MinSnapshotsToKeep: 3}))

	ma, err := e.svc.Maintenance(ctx, "lake", &a)
	must(err)
	if ma.Effective[catalog.JobUnreferenced].Enabled || !ma.Effective[catalog.JobSnapshots].Enabled {
		t.Errorf("table a: effective %+v: its own settings win", ma.Effective)
	}
	if got := ma.Effective[catalog.JobSnapshots]; got.MinSnapshotsToKeep != 3 || got.MaxSnapshotAge != catalog.DefaultMaxSnapshotAge {
		t.Errorf("table a snapshots %+v: 3 kept, default age", got)
	}
	if ma.Status[catalog.JobSnapshots].Status != catalog.JobNotYetRun || ma.Status[catalog.JobUnreferenced].Status != catalog.JobDisabled {
		t.Errorf("table a status %+v", ma.Status)
	}
	mb, err := e.svc.Maintenance(ctx, "lake", &b)
	must(err)
	if got := mb.Effective[catalog.JobUnreferenced]; !got.Enabled || got.UnreferencedAfter != catalog.DefaultUnreferencedAfter {
		t.Errorf("table b inherits the warehouse's removal with its defaults, got %+v", got)
	}
	if len(mb.Own) != 0 {
		t.Errorf("table b configures nothing itself, got %+v", mb.Own)
	}
	ids, err := e.svc.MaintainedTables(ctx, "lake")
	must(err)
	if len(ids) != 2 {
		t.Errorf("maintained tables %v, want a (own job) and b (the warehouse's)", ids)
	}

	// A rename carries the table's settings; a drop forgets them.
	c := id("c")
	must(e.svc.RenameTable(ctx, "lake", a, c))
	mc, err := e.svc.Maintenance(ctx, "lake", &c)
	must(err)
	if !mc.Own[catalog.JobSnapshots].Enabled {
		t.Errorf("renamed table lost its settings: %+v", mc.Own)
	}
	must(e.svc.DropTable(ctx, "lake", c, false))
	e.mustCreate("c")
	mc, err = e.svc.Maintenance(ctx, "lake", &c)
	must(err)
	if len(mc.Own) != 0 {
		t.Errorf("a new table of a dropped one's name inherited %+v", mc.Own)
	}
	if _, err := e.svc.Maintenance(ctx, "lake", &a); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("maintenance of a missing table: %v", err)
	}
}

// TestMetadataTrim: the log keeps write.metadata.previous-versions-max
// files, and with write.metadata.delete-after-commit.enabled the files
// that leave it are deleted.
func TestMetadataTrim(t *testing.T) {
	for _, del := range []bool{false, true} {
		e := newEnv(t)
		ctx := context.Background()
		e.mustCreate("t")
		props := `{"write.metadata.previous-versions-max":"2","write.metadata.delete-after-commit.enabled":"` + map[bool]string{true: "true", false: "false"}[del] + `"}`
		var locs []string
		for i := 0; i < 6; i++ {
			body := `{"updates":[{"action":"set-properties","updates":` + props + `},{"action":"set-properties","updates":{"n":"` + string(rune('a'+i)) + `"}}]}`
			r, err := e.svc.CommitTable(ctx, "lake", id("t"), []byte(body))
			if err != nil {
				t.Fatal(err)
			}
			locs = append(locs, r.MetadataLocation)
			m := meta(t, r.Metadata)
			if log, _ := m["metadata-log"].([]any); i >= 2 && len(log) != 2 {
				t.Fatalf("commit %d: metadata log of %d entries, want 2", i, len(log))
			}
		}
		// The first files left the log; the last three (two in the log,
		// the current one) stay.
		for i, loc := range locs {
			key, err := catalog.ObjectKey("lake", loc)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.store.Head(ctx, "lake", key, objstore.GetOptions{})
			gone := err != nil
			if want := del && i < len(locs)-3; gone != want {
				t.Errorf("delete-after-commit=%v: file %d gone=%v, want %v", del, i, gone, want)
			}
		}
	}
}
