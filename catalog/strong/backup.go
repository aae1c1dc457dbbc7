package strong

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

// Backups of warehouse snapshots (catalog.Backups). A backup is the
// snapshot's bytes, unchanged, at
//
//	strong/backups/<wh>/<backup-id>.snapshot
//
// with the warehouse's registry record value in the object's user
// metadata (base64, metaRegistry) next to the warehouse name, the format
// and the ETag of the snapshot it copied. The id is content-derived (see
// backupID), so backing up unchanged content again finds the same object.

// backupPrefix holds the backups, one folder per warehouse.
const backupPrefix = "strong/backups/"

// User metadata of a backup object.
const (
	metaWarehouse = "cairn-strong-warehouse"
	metaRegistry  = "cairn-strong-registry" // base64 of the registry record value
	metaFormat    = "cairn-strong-format"
	metaETag      = "cairn-strong-snapshot-etag" // the ETag of the snapshot copied
)

// backupIDLen is the length of a backup id: hex digits of a SHA-256.
const backupIDLen = 32

// backupKey is the object key of a backup.
func backupKey(wh, id string) string { return backupPrefix + wh + "/" + id + snapshotSuffix }

// backupID derives a backup's id from its content: the first 32 hex
// digits of SHA-256 over a label, the snapshot's length and bytes, then
// the registry record value.
func backupID(snap, registry []byte) string {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "cairn-strong-backup\n%d\n", len(snap))
	_, _ = h.Write(snap)
	_, _ = h.Write(registry)
	return hex.EncodeToString(h.Sum(nil))[:backupIDLen]
}

// validBackupID: exactly backupIDLen lowercase hex digits (ids arrive
// from HTTP and become part of an object key).
func validBackupID(id string) bool {
	if len(id) != backupIDLen {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

var _ catalog.Backups = (*Backing)(nil)

// Backup copies warehouse wh's current snapshot, with its registry
// record, to a backup object. ErrNoSuchWarehouse when the registry has no
// record of wh; catalog.ErrBadRequest when wh has no snapshot yet (there
// is nothing to restore); a warehouse that is not served returns its
// error. Backing up the same content again returns the same id with
// Existed set.
func (b *Backing) Backup(ctx context.Context, wh string) (catalog.BackupResult, error) {
	if err := validWarehouse(wh, false); err != nil {
		return catalog.BackupResult{}, fmt.Errorf("%w: %w", catalog.ErrBadRequest, err)
	}
	reg, err := b.Get(ctx, "", catalog.KindWarehouse, wh)
	if errors.Is(err, catalog.ErrNotFound) {
		return catalog.BackupResult{}, fmt.Errorf("%w: %q", catalog.ErrNoSuchWarehouse, wh)
	}
	if err != nil {
		return catalog.BackupResult{}, err
	}
	w := b.warehouse(wh)
	w.mu.Lock()
	s, err := b.refreshLocked(ctx, w)
	etag := w.etag
	w.mu.Unlock()
	if err != nil {
		return catalog.BackupResult{}, err
	}
	if etag == "" {
		return catalog.BackupResult{}, fmt.Errorf("%w: warehouse %q has no snapshot to back up", catalog.ErrBadRequest, wh)
	}
	// Snapshots are canonical: encoding the state read gives the bytes of
	// the object at etag.
	data, err := encode(s)
	if err != nil {
		return catalog.BackupResult{}, err
	}
	id := backupID(data, reg.Value)
	key := backupKey(wh, id)
	info, err := b.store.Put(ctx, Bucket, key, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{
		ContentType: "application/vnd.cairn.strong-snapshot",
		IfNoneMatch: "*",
		Meta: map[string]string{
			metaWarehouse: wh,
			metaRegistry:  base64.StdEncoding.EncodeToString(reg.Value),
			metaFormat:    strconv.Itoa(s.Format),
			metaETag:      etag,
		},
	})
	existed := errors.Is(err, objstore.ErrPreconditionFailed)
	if existed {
		info, err = b.store.Head(ctx, Bucket, key, objstore.GetOptions{})
	}
	if err != nil {
		return catalog.BackupResult{}, fmt.Errorf("strong: backup %q to %s: %w", wh, key, err)
	}
	return catalog.BackupResult{TableBucket: wh, BackupID: id, SnapshotETag: etag, Format: s.Format,
		Size: int64(len(data)), Created: info.ModTime, Existed: existed}, nil
}

// ListBackups returns warehouse wh's backups in id order, described from
// their metadata (SnapshotETag is the ETag of the snapshot each copied;
// Existed is false).
func (b *Backing) ListBackups(ctx context.Context, wh string) ([]catalog.BackupResult, error) {
	if err := validWarehouse(wh, false); err != nil {
		return nil, fmt.Errorf("%w: %w", catalog.ErrBadRequest, err)
	}
	prefix := backupPrefix + wh + "/"
	var out []catalog.BackupResult
	after := ""
	for {
		page, err := b.store.List(ctx, Bucket, objstore.ListOptions{Prefix: prefix, After: after, MaxKeys: 1000})
		if err != nil {
			return nil, fmt.Errorf("strong: list backups of %q: %w", wh, err)
		}
		for _, o := range page.Objects {
			id, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, prefix), snapshotSuffix)
			if !ok || !validBackupID(id) {
				continue
			}
			info, err := b.store.Head(ctx, Bucket, o.Key, objstore.GetOptions{})
			if errors.Is(err, objstore.ErrNoSuchKey) {
				continue // deleted since the listing
			}
			if err != nil {
				return nil, fmt.Errorf("strong: head %s: %w", o.Key, err)
			}
			format, _ := strconv.Atoi(info.Meta[metaFormat])
			out = append(out, catalog.BackupResult{TableBucket: wh, BackupID: id, SnapshotETag: info.Meta[metaETag],
				Format: format, Size: info.Size, Created: info.ModTime})
		}
		if !page.IsTruncated {
			return out, nil
		}
		after = page.NextMarker
	}
}

// Restore replaces warehouse wh's snapshot with backup req.BackupID.
// catalog.ErrBadRequest: a malformed or unknown id, a backup that fails
// decode validation, does not match its id or is of another warehouse,
// or a backup in a format below the process high-water mark for wh (also
// wrapping ErrBelowHighWater). catalog.ErrMigrationConflict: the
// snapshot's current ETag (of a damaged snapshot too: see ObjectETag) is
// not req.ExpectedSnapshotETag, a snapshot exists and AllowReplace is
// false, or another writer published during the restore.
//
// The backup's records are written under a fresh random epoch and a
// generation above the backup's and the current snapshot's, so no version
// token handed out before (of the backed-up or the current state) is
// valid afterwards: every compare-and-swap against an older state fails.
// The format is chosen as for any write (at least the backup's). A
// restore heals a warehouse that was not served. When the registry has
// no record of wh, the backup's is put back (RegistryRestored); if that
// fails the snapshot stays restored and the error says so.
func (b *Backing) Restore(ctx context.Context, wh string, req catalog.RestoreRequest) (catalog.RestoreResult, error) {
	if err := validWarehouse(wh, false); err != nil {
		return catalog.RestoreResult{}, fmt.Errorf("%w: %w", catalog.ErrBadRequest, err)
	}
	bs, registry, err := b.readBackup(ctx, wh, req.BackupID)
	if err != nil {
		return catalog.RestoreResult{}, err
	}
	res := catalog.RestoreResult{TableBucket: wh, BackupID: req.BackupID}
	w := b.warehouse(wh)
	w.mu.Lock()
	err = b.restoreLocked(ctx, w, bs, req, &res)
	w.mu.Unlock()
	if err != nil {
		return catalog.RestoreResult{}, err
	}
	_, err = b.Get(ctx, "", catalog.KindWarehouse, wh)
	if errors.Is(err, catalog.ErrNotFound) {
		_, err = b.Put(ctx, "", catalog.KindWarehouse, wh, registry, "")
		res.RegistryRestored = err == nil
		if errors.Is(err, catalog.ErrConflict) {
			err = nil // created meanwhile: keep that one
		}
	}
	if err != nil {
		return res, fmt.Errorf("strong: %q restored to snapshot %s, but its registry record was not: %w", wh, res.SnapshotETag, err)
	}
	return res, nil
}

// restoreLocked checks the conditions of a restore and publishes the
// re-encoded backup bs, filling res.
func (b *Backing) restoreLocked(ctx context.Context, w *warehouse, bs *snapshot, req catalog.RestoreRequest, res *catalog.RestoreResult) error {
	cur, err := b.refreshLocked(ctx, w)
	switch {
	case err != nil && err == w.bad: // refreshLocked returns w.bad itself
		cur = nil // damaged or vanished: a restore may replace it
	case err != nil:
		return err
	}
	if w.etag != req.ExpectedSnapshotETag {
		return fmt.Errorf("%w: %q: snapshot ETag is %q, not the expected %q", catalog.ErrMigrationConflict, w.name, w.etag, req.ExpectedSnapshotETag)
	}
	if w.etag != "" && !req.AllowReplace {
		return fmt.Errorf("%w: %q has a snapshot and allow-replace is false", catalog.ErrMigrationConflict, w.name)
	}
	if bs.Format < w.hwm {
		if !req.AllowFormatDowngrade {
			return fmt.Errorf("%w: backup %s: %w: format %d, process has seen %d (a deliberate roll-back needs allow-format-downgrade, with the v2 gates unset)", catalog.ErrBadRequest, req.BackupID, ErrBelowHighWater, bs.Format, w.hwm)
		}
		if c := b.opt.configuredFormat(); c > bs.Format {
			return fmt.Errorf("%w: backup %s is format %d but the gates ask for format %d: unset CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2 and restart before rolling the format back", catalog.ErrMigrationConflict, req.BackupID, bs.Format, c)
		}
		// The operator rolls the format back: this warehouse's
		// high-water mark follows, unless the publish fails.
		old := w.hwm
		w.hwm = bs.Format
		defer func() {
			if w.snap == nil || w.snap.Format != bs.Format {
				w.hwm = old
			}
		}()
	}
	next, err := newSnapshot(w.name) // a fresh epoch
	if err != nil {
		return err
	}
	next.Generation = bs.Generation
	if cur != nil {
		next.Generation = max(next.Generation, cur.Generation)
	}
	next.Generation++
	next.Kinds = bs.Kinds
	setGen(next)
	next.Format = max(bs.Format, b.opt.configuredFormat(), w.hwm)
	if len(collisions(next)) > 0 {
		next.Format = formatV1 // a quarantined v1 backup stays v1 (bs.Format >= w.hwm)
	}
	prev := w.etag
	etag, err := b.installLocked(ctx, w, next)
	if errors.Is(err, errLostCAS) {
		return fmt.Errorf("%w: %q: the snapshot changed during the restore", catalog.ErrMigrationConflict, w.name)
	}
	if err != nil {
		return err
	}
	n := 0
	for _, g := range next.Kinds {
		n += len(g.Records)
	}
	res.PreviousETag, res.SnapshotETag, res.Format, res.RecordsRestored = prev, etag, next.Format, n
	return nil
}

// readBackup reads and validates backup id of wh: the snapshot (decoded,
// its records owned by the caller) and the registry record value.
func (b *Backing) readBackup(ctx context.Context, wh, id string) (*snapshot, []byte, error) {
	if !validBackupID(id) {
		return nil, nil, fmt.Errorf("%w: backup id %q is not %d lowercase hex digits", catalog.ErrBadRequest, id, backupIDLen)
	}
	key := backupKey(wh, id)
	r, err := b.store.Open(ctx, Bucket, key, objstore.GetOptions{})
	if errors.Is(err, objstore.ErrNoSuchKey) {
		return nil, nil, fmt.Errorf("%w: no backup %s of warehouse %q", catalog.ErrBadRequest, id, wh)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("strong: open %s: %w", key, err)
	}
	defer func() { _ = r.Close() }()
	data, err := io.ReadAll(io.LimitReader(r, MaxSnapshot+1))
	if errors.Is(err, objstore.ErrDataCorrupt) {
		return nil, nil, fmt.Errorf("%w: backup %s: %v", catalog.ErrBadRequest, id, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("strong: read %s: %w", key, err)
	}
	meta := r.Info().Meta
	enc, ok := meta[metaRegistry]
	registry, derr := base64.StdEncoding.DecodeString(enc)
	switch {
	case !ok || derr != nil:
		return nil, nil, fmt.Errorf("%w: backup %s: no valid registry record", catalog.ErrBadRequest, id)
	case meta[metaWarehouse] != wh:
		return nil, nil, fmt.Errorf("%w: backup %s is of warehouse %q, not %q", catalog.ErrBadRequest, id, meta[metaWarehouse], wh)
	case backupID(data, registry) != id:
		return nil, nil, fmt.Errorf("%w: backup %s: content does not match its id", catalog.ErrBadRequest, id)
	}
	// Decode errors wrap ErrSnapshotInvalid, hence catalog.ErrUnavailable:
	// a bad backup is the request's fault, so keep only the text.
	s, err := decodeAny(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: backup %s: %v", catalog.ErrBadRequest, id, err)
	}
	if s.Warehouse != wh {
		return nil, nil, fmt.Errorf("%w: backup %s holds warehouse %q, not %q", catalog.ErrBadRequest, id, s.Warehouse, wh)
	}
	return s, registry, nil
}
