package strong

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

// copyObject copies a backup object (body and metadata) to another key.
func copyObject(t *testing.T, st *objstore.Store, from, to string, edit func([]byte) []byte) {
	t.Helper()
	ctx := context.Background()
	r, err := st.Open(ctx, Bucket, from, objstore.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	meta := r.Info().Meta
	_ = r.Close()
	data := edit(buf.Bytes())
	if _, err := st.Put(ctx, Bucket, to, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{Meta: meta}); err != nil {
		t.Fatal(err)
	}
}

// plant stores data as a backup of wh whose id matches its content,
// claiming in its metadata to be of warehouse claim; it returns the id.
func plant(t *testing.T, st *objstore.Store, wh, claim string, data, registry []byte) string {
	t.Helper()
	id := backupID(data, registry)
	meta := map[string]string{metaWarehouse: claim, metaRegistry: base64.StdEncoding.EncodeToString(registry), metaFormat: "1", metaETag: "x"}
	if _, err := st.Put(context.Background(), Bucket, backupKey(wh, id), bytes.NewReader(data), int64(len(data)), objstore.PutOptions{Meta: meta}); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestBackup(t *testing.T) {
	ctx := context.Background()
	b := newBacking(t)
	seed(t, b, "w")
	first, err := b.Backup(ctx, "w")
	if err != nil || first.Existed || !validBackupID(first.BackupID) || first.Format != 1 || first.Size == 0 ||
		first.SnapshotETag != currentETag(t, b) || first.Created.IsZero() || first.TableBucket != "w" {
		t.Fatalf("first backup: %v %+v", err, first)
	}
	again, err := b.Backup(ctx, "w")
	if err != nil || !again.Existed || again.BackupID != first.BackupID || !again.Created.Equal(first.Created) {
		t.Fatalf("same content again: %v %+v", err, again)
	}
	if _, err := b.Put(ctx, "w", catalog.KindTable, "t", []byte("1"), ""); err != nil {
		t.Fatal(err)
	}
	later, err := b.Backup(ctx, "w")
	if err != nil || later.Existed || later.BackupID == first.BackupID {
		t.Fatalf("after a write: %v %+v", err, later)
	}
	// The registry record is part of the content.
	reg, err := b.Get(ctx, "", catalog.KindWarehouse, "w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "", catalog.KindWarehouse, "w", []byte(`{"changed":true}`), reg.Version); err != nil {
		t.Fatal(err)
	}
	regChanged, err := b.Backup(ctx, "w")
	if err != nil || regChanged.Existed || regChanged.BackupID == later.BackupID {
		t.Fatalf("after a registry change: %v %+v", err, regChanged)
	}
	list, err := b.ListBackups(ctx, "w")
	if err != nil || len(list) != 3 {
		t.Fatalf("list: %v %+v", err, list)
	}
	for _, l := range list {
		if !validBackupID(l.BackupID) || l.Size == 0 || l.SnapshotETag == "" || l.Format != 1 {
			t.Fatalf("listed: %+v", l)
		}
	}

	// Errors.
	if _, err := b.Put(ctx, "", catalog.KindWarehouse, "fresh", []byte(`{}`), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "unregistered", catalog.KindNamespace, "ns", nil, ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		wh   string
		want error
	}{
		{"nope", catalog.ErrNoSuchWarehouse},
		{"unregistered", catalog.ErrNoSuchWarehouse},
		{"fresh", catalog.ErrBadRequest}, // registered, no snapshot yet
		{"", catalog.ErrBadRequest},
		{"a/b", catalog.ErrBadRequest},
	} {
		if _, err := b.Backup(ctx, c.wh); !errors.Is(err, c.want) {
			t.Errorf("backup %q: %v, want %v", c.wh, err, c.want)
		}
	}
	if l, err := b.ListBackups(ctx, "fresh"); err != nil || len(l) != 0 {
		t.Fatalf("list of none: %v %v", err, l)
	}
}

// TestRestoreRoundTrip: a restore brings back the backed-up state under
// versions never handed out before, so stale compare-and-swaps fail, and
// puts a deleted registry record back.
func TestRestoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	b := openBacking(t, st, Options{})
	other := openBacking(t, st, Options{}) // a second process
	seed(t, b, "w")
	if _, err := b.Put(ctx, "w", catalog.KindTable, "t", []byte("v1"), ""); err != nil {
		t.Fatal(err)
	}
	want, _, err := b.Records(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	bk, err := b.Backup(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	// Later writes.
	tv, err := b.Put(ctx, "w", catalog.KindTable, "t", []byte("v2"), want[catalog.KindTable][0].Version)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "w", catalog.KindView, "v", []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "w", catalog.KindNamespace, "ns", catalog.AnyVersion); err != nil {
		t.Fatal(err)
	}
	reg, err := b.Get(ctx, "", catalog.KindWarehouse, "w")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "", catalog.KindWarehouse, "w", reg.Version); err != nil {
		t.Fatal(err)
	}
	before, beforeETag, err := b.Records(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}

	res, err := b.Restore(ctx, "w", catalog.RestoreRequest{BackupID: bk.BackupID, ExpectedSnapshotETag: beforeETag, AllowReplace: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.PreviousETag != beforeETag || res.SnapshotETag == "" || res.SnapshotETag != currentETag(t, b) ||
		res.RecordsRestored != 2 || !res.RegistryRestored || res.Format != 1 || res.BackupID != bk.BackupID {
		t.Fatalf("result: %+v", res)
	}
	got, gotETag, err := b.Records(ctx, "w")
	if err != nil || gotETag != res.SnapshotETag || !sameContent(got, want) {
		t.Fatalf("restored state: %v %v, want %v", err, got, want)
	}
	if r, err := b.Get(ctx, "", catalog.KindWarehouse, "w"); err != nil || !bytes.Equal(r.Value, reg.Value) {
		t.Fatalf("registry record: %v %q", err, r.Value)
	}
	old := map[string]bool{tv: true}
	for _, m := range []map[catalog.Kind][]catalog.Record{want, before} {
		for _, rs := range m {
			for _, r := range rs {
				old[r.Version] = true
			}
		}
	}
	for _, rs := range got {
		for _, r := range rs {
			if old[r.Version] {
				t.Fatalf("restored %q at a version handed out before: %q", r.Key, r.Version)
			}
		}
	}
	// Compare-and-swaps with old tokens fail, in this process and another.
	for _, bb := range []*Backing{b, other} {
		for _, v := range []string{want[catalog.KindTable][0].Version, tv} {
			if _, err := bb.Put(ctx, "w", catalog.KindTable, "t", []byte("stale"), v); !errors.Is(err, catalog.ErrConflict) {
				t.Fatalf("stale put with %q: %v", v, err)
			}
		}
	}
	if err := b.Delete(ctx, "w", catalog.KindNamespace, "ns", want[catalog.KindNamespace][0].Version); !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("stale delete: %v", err)
	}
	// Restoring the same backup again is a new publish with new versions.
	again, err := b.Restore(ctx, "w", catalog.RestoreRequest{BackupID: bk.BackupID, ExpectedSnapshotETag: res.SnapshotETag, AllowReplace: true})
	if err != nil || again.SnapshotETag == res.SnapshotETag || again.RegistryRestored {
		t.Fatalf("second restore: %v %+v", err, again)
	}
	// After a Remove there is no snapshot: allow-replace is not needed.
	if err := b.Remove(ctx, "w", again.SnapshotETag); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Restore(ctx, "w", catalog.RestoreRequest{BackupID: bk.BackupID}); err != nil {
		t.Fatalf("restore into nothing: %v", err)
	}
}

func TestRestoreRefused(t *testing.T) {
	ctx := context.Background()
	b := newBacking(t)
	seed(t, b, "w", "v")
	bk, err := b.Backup(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	vk, err := b.Backup(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	// Backups of v, and a tampered one, placed among w's.
	const foreign, tampered, renamed = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210", "00000000000000000000000000000000"
	copyObject(t, b.store, backupKey("v", vk.BackupID), backupKey("w", foreign), func(d []byte) []byte { return d })
	copyObject(t, b.store, backupKey("w", bk.BackupID), backupKey("w", tampered), func(d []byte) []byte { d[len(d)-5] ^= 1; return d })
	copyObject(t, b.store, backupKey("w", bk.BackupID), backupKey("w", renamed), func(d []byte) []byte { return d })
	// Ids that match their content, over an invalid snapshot and over
	// another warehouse's snapshot claiming to be of w.
	invalidID := plant(t, b.store, "w", "w", []byte(magic+" 1 2 00\n{}"), nil)
	flipped := snapshotBytes(t, b.store, "w")
	flipped[len(flipped)-5] ^= 1
	flippedID := plant(t, b.store, "w", "w", flipped, []byte("{}"))
	posingID := plant(t, b.store, "w", "w", snapshotBytes(t, b.store, "v"), []byte("{}"))
	etag := currentETag(t, b)
	ok := catalog.RestoreRequest{BackupID: bk.BackupID, ExpectedSnapshotETag: etag, AllowReplace: true}
	with := func(edit func(*catalog.RestoreRequest)) catalog.RestoreRequest { r := ok; edit(&r); return r }
	cases := []struct {
		name string
		wh   string
		req  catalog.RestoreRequest
		want error
	}{
		{"empty id", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = "" }), catalog.ErrBadRequest},
		{"unknown id", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = "abcdefabcdefabcdefabcdefabcdefab" }), catalog.ErrBadRequest},
		{"upper-case id", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = "ABCDEFABCDEFABCDEFABCDEFABCDEFAB" }), catalog.ErrBadRequest},
		{"path in id", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = "../../warehouses/v.snapshot" }), catalog.ErrBadRequest},
		{"long id", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = bk.BackupID + "0" }), catalog.ErrBadRequest},
		{"another warehouse's backup", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = foreign }), catalog.ErrBadRequest},
		{"tampered backup", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = tampered }), catalog.ErrBadRequest},
		{"invalid snapshot", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = invalidID }), catalog.ErrBadRequest},
		{"flipped byte under a matching id", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = flippedID }), catalog.ErrBadRequest},
		{"another warehouse's snapshot posing", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = posingID }), catalog.ErrBadRequest},
		{"id not of its content", "w", with(func(r *catalog.RestoreRequest) { r.BackupID = renamed }), catalog.ErrBadRequest},
		{"backup id of another warehouse", "v", with(func(r *catalog.RestoreRequest) { r.ExpectedSnapshotETag = "" }), catalog.ErrBadRequest},
		{"wrong expected etag", "w", with(func(r *catalog.RestoreRequest) { r.ExpectedSnapshotETag = "0123" }), catalog.ErrMigrationConflict},
		{"expected none", "w", with(func(r *catalog.RestoreRequest) { r.ExpectedSnapshotETag = "" }), catalog.ErrMigrationConflict},
		{"replace not allowed", "w", with(func(r *catalog.RestoreRequest) { r.AllowReplace = false }), catalog.ErrMigrationConflict},
		{"registry", "", ok, catalog.ErrBadRequest},
	}
	for _, c := range cases {
		_, err := b.Restore(ctx, c.wh, c.req)
		t.Logf("%s: %v", c.name, err)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if errors.Is(err, catalog.ErrUnavailable) {
			t.Errorf("%s: a refused restore maps to 503: %v", c.name, err)
		}
	}
	if currentETag(t, b) != etag || len(b.Unhealthy()) != 0 {
		t.Fatal("a refused restore changed the snapshot")
	}
}

// TestRestoreHeals: a damaged snapshot is replaced by a restore naming its
// object ETag, and the warehouse is served again.
func TestRestoreHeals(t *testing.T) {
	ctx := context.Background()
	b := newBacking(t)
	seed(t, b, "w")
	bk, err := b.Backup(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	bad := flip(t, b, "w")
	if _, err := b.Get(ctx, "w", catalog.KindNamespace, "ns"); !errors.Is(err, ErrSnapshotInvalid) {
		t.Fatalf("damaged: %v", err)
	}
	if u := b.Unhealthy(); u["w"] == nil {
		t.Fatalf("unhealthy: %v", u)
	}
	if _, err := b.Backup(ctx, "w"); !errors.Is(err, ErrSnapshotInvalid) {
		t.Fatalf("backup of a damaged snapshot: %v", err)
	}
	res, err := b.Restore(ctx, "w", catalog.RestoreRequest{BackupID: bk.BackupID, ExpectedSnapshotETag: bad, AllowReplace: true})
	if err != nil || res.PreviousETag != bad {
		t.Fatalf("restore: %v %+v", err, res)
	}
	if u := b.Unhealthy(); len(u) != 0 {
		t.Fatalf("unhealthy after restore: %v", u)
	}
	if r, err := b.Get(ctx, "w", catalog.KindNamespace, "ns"); err != nil || string(r.Value) != `{"owner":"t"}` {
		t.Fatalf("get after restore: %v %+v", err, r)
	}
	if again := openBacking(t, b.store, Options{}); len(again.Unhealthy()) != 0 {
		t.Fatalf("restart after restore: %v", again.Unhealthy())
	}
}

// TestRestoreHighWater: a format-1 backup is refused by a process that has
// seen format 2 for the warehouse.
func TestRestoreHighWater(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	v1 := openBacking(t, st, Options{})
	seed(t, v1, "w")
	bk, err := v1.Backup(ctx, "w")
	if err != nil || bk.Format != 1 {
		t.Fatalf("backup: %v %+v", err, bk)
	}
	v2 := openBacking(t, st, Options{SnapshotV2: true, SnapshotV2FleetConfirmed: true})
	if _, err := v2.Put(ctx, "w", catalog.KindTable, "t", nil, ""); err != nil {
		t.Fatal(err)
	}
	req := catalog.RestoreRequest{BackupID: bk.BackupID, ExpectedSnapshotETag: currentETag(t, v2), AllowReplace: true}
	for name, b := range map[string]*Backing{"writer of v2": v2, "reader of v2": v1} {
		_, err := b.Restore(ctx, "w", req)
		if !errors.Is(err, catalog.ErrBadRequest) || !errors.Is(err, ErrBelowHighWater) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A deliberate roll-back: refused while the gates ask for v2, then
	// allowed by a process whose gates are unset, which keeps writing v1.
	req.AllowFormatDowngrade = true
	if _, err := v2.Restore(ctx, "w", req); !errors.Is(err, catalog.ErrMigrationConflict) {
		t.Fatalf("downgrade with the gates set: %v", err)
	}
	rolled, err := v1.Restore(ctx, "w", req)
	if err != nil || rolled.Format != 1 {
		t.Fatalf("downgrade: %+v %v", rolled, err)
	}
	if _, err := v1.Put(ctx, "w", catalog.KindTable, "after", nil, ""); err != nil {
		t.Fatal(err)
	}
	if cur, hwm := v1.Format("w"); cur != 1 || hwm != 1 {
		t.Fatalf("after the roll-back: format %d, high water %d", cur, hwm)
	}
	req.ExpectedSnapshotETag = currentETag(t, v1)
	if _, err := v2.Restore(ctx, "w", catalog.RestoreRequest{BackupID: "x"}); err == nil {
		t.Fatal("bad id accepted")
	}
	// Remove keeps the mark; a process started afterwards has none and
	// restores it, in the format its gates ask for.
	if err := v2.Remove(ctx, "w", req.ExpectedSnapshotETag); err != nil {
		t.Fatal(err)
	}
	if _, err := v2.Restore(ctx, "w", catalog.RestoreRequest{BackupID: bk.BackupID}); !errors.Is(err, ErrBelowHighWater) {
		t.Fatalf("after remove: %v", err)
	}
	fresh := openBacking(t, st, Options{SnapshotV2: true, SnapshotV2FleetConfirmed: true})
	res, err := fresh.Restore(ctx, "w", catalog.RestoreRequest{BackupID: bk.BackupID})
	if err != nil || res.Format != 2 {
		t.Fatalf("restore into a removed warehouse: %v %+v", err, res)
	}
}
