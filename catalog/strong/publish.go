package strong

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cairnstore/cairn/objstore"
)

// maxAttempts bounds the re-read and re-apply rounds of one mutation
// under lost compare-and-swaps.
const maxAttempts = 64

var (
	// errNoChange: the mutation changes nothing; nothing is published.
	errNoChange = errors.New("strong: no change")
	// errLostCAS: another writer published first.
	errLostCAS = errors.New("strong: lost compare-and-swap")
)

// current returns the warehouse's current valid state, re-read when its
// snapshot object changed. The result is immutable.
func (b *Backing) current(ctx context.Context, wh string) (*snapshot, error) {
	w := b.warehouse(wh)
	w.mu.Lock()
	defer w.mu.Unlock()
	return b.refreshLocked(ctx, w)
}

// refreshLocked makes w's cache match the snapshot object: a HEAD, then a
// full read and decode when the ETag changed. It returns w.bad for a
// warehouse that is not served.
func (b *Backing) refreshLocked(ctx context.Context, w *warehouse) (*snapshot, error) {
	info, err := b.store.Head(ctx, Bucket, w.key, objstore.GetOptions{})
	if errors.Is(err, objstore.ErrNoSuchKey) {
		return b.absentLocked(w)
	}
	if err != nil {
		return nil, fmt.Errorf("strong: head %s: %w", w.key, err)
	}
	if w.loaded && w.etag != "" && info.ETag == w.etag {
		if w.bad != nil {
			return nil, w.bad
		}
		return w.snap, nil
	}
	return b.loadLocked(ctx, w)
}

// absentLocked handles a missing snapshot object: the empty state before
// the first publish, a failure once one was seen.
func (b *Backing) absentLocked(w *warehouse) (*snapshot, error) {
	if w.seen {
		w.bad = fmt.Errorf("%w: warehouse %q: %s", ErrSnapshotMissing, w.name, w.key)
		w.snap, w.etag = nil, ""
		b.setHealth(w)
		return nil, w.bad
	}
	if w.snap == nil {
		s, err := newSnapshot(w.name)
		if err != nil {
			return nil, err
		}
		w.snap = s
	}
	w.loaded = true
	return w.snap, nil
}

// loadLocked reads, decodes and validates the snapshot object.
func (b *Backing) loadLocked(ctx context.Context, w *warehouse) (*snapshot, error) {
	data, etag, err := b.read(ctx, w.key)
	if errors.Is(err, objstore.ErrNoSuchKey) {
		return b.absentLocked(w)
	}
	var s *snapshot
	switch {
	case errors.Is(err, objstore.ErrDataCorrupt):
		err = fmt.Errorf("%w: %w", ErrSnapshotInvalid, err)
	case err != nil:
		return nil, err
	case etag == "":
		err = fmt.Errorf("%w: empty ETag", ErrSnapshotInvalid)
	default:
		s, err = decode(data, w.name, w.hwm)
	}
	w.seen, w.loaded, w.etag = true, true, etag
	if err != nil {
		w.bad = fmt.Errorf("strong: warehouse %q not served: %w", w.name, err)
		w.snap = nil
		b.setHealth(w)
		return nil, w.bad
	}
	w.bad, w.snap = nil, s
	w.hwm = max(w.hwm, s.Format)
	b.setHealth(w)
	return s, nil
}

// read returns the snapshot object's bytes and the ETag of that version.
func (b *Backing) read(ctx context.Context, key string) ([]byte, string, error) {
	r, err := b.store.Open(ctx, Bucket, key, objstore.GetOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("strong: open %s: %w", key, err)
	}
	defer func() { _ = r.Close() }()
	data, err := io.ReadAll(io.LimitReader(r, MaxSnapshot+1))
	if err != nil {
		return nil, "", fmt.Errorf("strong: read %s: %w", key, err)
	}
	return data, r.Info().ETag, nil
}

// installLocked encodes next, runs the full decoder on the bytes, publishes
// them over the snapshot at w.etag and makes next w's cached state. It
// returns the new ETag; errLostCAS when another writer published first.
func (b *Backing) installLocked(ctx context.Context, w *warehouse, next *snapshot) (string, error) {
	data, err := encode(next)
	if err != nil {
		return "", err
	}
	if _, err := decode(data, w.name, w.hwm); err != nil {
		return "", fmt.Errorf("strong: refusing to publish %q: %w", w.name, err)
	}
	etag, err := b.publishLocked(ctx, w, data)
	if err != nil {
		return "", err
	}
	w.seen, w.loaded, w.etag, w.snap, w.bad = true, true, etag, next, nil
	w.hwm = max(w.hwm, next.Format)
	b.setHealth(w)
	return etag, nil
}

// publishLocked writes data over the snapshot at w.etag (or as the first
// snapshot) and returns the new ETag. errLostCAS when another writer won;
// any other failure is resolved by re-reading: the publish succeeded if
// the object now holds exactly our bytes.
func (b *Backing) publishLocked(ctx context.Context, w *warehouse, data []byte) (string, error) {
	opt := objstore.PutOptions{ContentType: "application/vnd.cairn.strong-snapshot"}
	if w.etag == "" {
		opt.IfNoneMatch = "*"
	} else {
		opt.IfMatch = w.etag
	}
	var info objstore.ObjectInfo
	var err error
	if h := b.opt.Hooks.BeforePublish; h != nil {
		err = h(w.name)
	}
	if err == nil {
		info, err = b.store.Put(ctx, Bucket, w.key, bytes.NewReader(data), int64(len(data)), opt)
		if h := b.opt.Hooks.AfterPublish; err == nil && h != nil {
			err = h(w.name)
		}
	}
	switch {
	case err == nil:
		return info.ETag, nil
	case errors.Is(err, objstore.ErrPreconditionFailed), opt.IfMatch != "" && errors.Is(err, objstore.ErrNoSuchKey):
		return "", errLostCAS
	}
	got, etag, rerr := b.read(ctx, w.key)
	if rerr == nil && etag != "" && bytes.Equal(got, data) {
		return etag, nil
	}
	if rerr != nil {
		return "", fmt.Errorf("strong: publish %s: outcome unknown: %w (re-read: %w)", w.key, err, rerr)
	}
	return "", fmt.Errorf("strong: publish %s: outcome unknown: %w", w.key, err)
}
