package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

// Bucket is the system bucket holding the fence documents.
const Bucket = ".cairn.sys"

// Object keys of the fence documents in Bucket.
const (
	globalFenceKey  = "migration/global-fence.json"
	fencePrefix     = "migration/warehouses/"
	fenceSuffix     = "/fence.json"
	maxFenceDoc     = 64 << 10
	fenceVersion    = 2
	fenceVersionOld = 1
)

func fenceKey(wh string) string { return fencePrefix + wh + fenceSuffix }

// GlobalFence is the registry-wide fence: it exists from the first
// warehouse's materialize until the last warehouse's cancel, and while it
// exists warehouse registry writes (create, delete) are refused.
type GlobalFence struct {
	Version     int       `json:"version"`
	MigrationID string    `json:"migration_id"`
	Created     time.Time `json:"created"`
}

// Fences keeps the fence documents and the locks of the cutover, and is
// the catalog's write Gate for the object backing. The in-memory copy is
// authoritative within the process: only this Fences writes the
// documents, and it loads them at start; on a cluster, Enter reads them
// again (shared.go).
//
// Locks: a warehouse write holds that warehouse's lock shared, a registry
// write the global lock shared; a cutover takes the global lock and then
// the warehouse's exclusively, which waits for in-flight writers to
// finish and holds new ones back.
type Fences struct {
	store *objstore.Store

	global sync.RWMutex // the registry lock

	mu     sync.Mutex // protects the following; never held during I/O
	locks  map[string]*sync.RWMutex
	fences map[string]*catalog.Fence
	bad    map[string]error // fence documents that failed validation
	gfence *GlobalFence
	gbad   error
}

var _ catalog.Gate = (*Fences)(nil)

// OpenFences loads every fence document from the system bucket.
func OpenFences(ctx context.Context, store *objstore.Store) (*Fences, error) {
	if err := store.EnsureSystemBucket(ctx, Bucket); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	f := &Fences{store: store, locks: map[string]*sync.RWMutex{}, fences: map[string]*catalog.Fence{}, bad: map[string]error{}}
	data, err := f.read(ctx, globalFenceKey)
	switch {
	case err != nil:
		return nil, err
	case data != nil:
		f.gfence, f.gbad = decodeGlobalFence(data)
	}
	after := ""
	for {
		page, err := store.List(ctx, Bucket, objstore.ListOptions{Prefix: fencePrefix, After: after, MaxKeys: 1000})
		if err != nil {
			return nil, fmt.Errorf("migrate: list fences: %w", err)
		}
		for _, o := range page.Objects {
			wh, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, fencePrefix), fenceSuffix)
			if !ok || wh == "" || strings.Contains(wh, "/") {
				continue
			}
			data, err := f.read(ctx, o.Key)
			if err != nil {
				return nil, err
			}
			if data == nil {
				continue
			}
			fc, err := decodeFence(data, wh)
			if err != nil {
				f.bad[wh] = err
				continue
			}
			f.fences[wh] = fc
		}
		if !page.IsTruncated {
			return f, nil
		}
		after = page.NextMarker
	}
}

// lock returns the lock of warehouse wh.
func (f *Fences) lock(wh string) *sync.RWMutex {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.locks[wh]
	if l == nil {
		l = &sync.RWMutex{}
		f.locks[wh] = l
	}
	return l
}

// Enter implements catalog.Gate: wh "" is the registry.
func (f *Fences) Enter(ctx context.Context, wh string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.store.Shared() { // another node may have put a fence up (shared.go)
		if err := f.reload(ctx, wh); err != nil {
			return nil, err
		}
	}
	if wh == "" {
		f.global.RLock()
		if err := f.registryFenced(); err != nil {
			f.global.RUnlock()
			return nil, err
		}
		return f.global.RUnlock, nil
	}
	l := f.lock(wh)
	l.RLock()
	if err := f.fenced(wh); err != nil {
		l.RUnlock()
		return nil, err
	}
	return l.RUnlock, nil
}

// registryFenced is ErrFenced while the global fence exists.
func (f *Fences) registryFenced() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.gbad != nil:
		return fmt.Errorf("%w: the warehouse registry is fenced by an unreadable global fence: %w", catalog.ErrFenced, f.gbad)
	case f.gfence != nil:
		return fmt.Errorf("%w: the warehouse registry is fenced by migration %s; finish or cancel it first", catalog.ErrFenced, f.gfence.MigrationID)
	}
	return nil
}

// fenced is ErrFenced while warehouse wh has a fence.
func (f *Fences) fenced(wh string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.bad[wh]; err != nil {
		return fmt.Errorf("%w: warehouse %s has an unreadable migration fence: %w", catalog.ErrFenced, wh, err)
	}
	if fc := f.fences[wh]; fc != nil {
		return fmt.Errorf("%w: warehouse %s is fenced by migration %s (%s); object-backed writes are refused until it is cancelled or the server restarts on the durable-strong backing", catalog.ErrFenced, wh, fc.MigrationID, fc.Status)
	}
	return nil
}

// Fence returns warehouse wh's fence (nil when none) or the validation
// error of its document.
func (f *Fences) Fence(wh string) (*catalog.Fence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.bad[wh]; err != nil {
		return nil, err
	}
	if fc := f.fences[wh]; fc != nil {
		c := *fc
		return &c, nil
	}
	return nil, nil
}

// Global returns the global fence (nil when none) or its validation error.
func (f *Fences) Global() (*GlobalFence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gbad != nil {
		return nil, f.gbad
	}
	if f.gfence == nil {
		return nil, nil
	}
	g := *f.gfence
	return &g, nil
}

// fencedWarehouses lists the warehouses holding a fence (valid or not).
func (f *Fences) fencedWarehouses() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for wh := range f.fences {
		out = append(out, wh)
	}
	for wh := range f.bad {
		out = append(out, wh)
	}
	return out
}

// putFence writes warehouse wh's fence document (nil deletes it).
func (f *Fences) putFence(ctx context.Context, wh string, fc *catalog.Fence) error {
	if fc == nil {
		if err := f.delete(ctx, fenceKey(wh)); err != nil {
			return err
		}
		f.mu.Lock()
		delete(f.fences, wh)
		delete(f.bad, wh)
		f.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(fc)
	if err != nil {
		return fmt.Errorf("migrate: encode fence: %w", err)
	}
	if _, err := decodeFence(data, wh); err != nil {
		return fmt.Errorf("migrate: refusing to write an invalid fence: %w", err)
	}
	if err := f.write(ctx, fenceKey(wh), data); err != nil {
		return err
	}
	c := *fc
	f.mu.Lock()
	f.fences[wh] = &c
	delete(f.bad, wh)
	f.mu.Unlock()
	return nil
}

// putGlobal writes the global fence (nil deletes it).
func (f *Fences) putGlobal(ctx context.Context, g *GlobalFence) error {
	if g == nil {
		if err := f.delete(ctx, globalFenceKey); err != nil {
			return err
		}
		f.mu.Lock()
		f.gfence, f.gbad = nil, nil
		f.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("migrate: encode global fence: %w", err)
	}
	if err := f.write(ctx, globalFenceKey, data); err != nil {
		return err
	}
	c := *g
	f.mu.Lock()
	f.gfence, f.gbad = &c, nil
	f.mu.Unlock()
	return nil
}

func (f *Fences) read(ctx context.Context, key string) ([]byte, error) {
	r, err := f.store.Open(ctx, Bucket, key, objstore.GetOptions{})
	if errors.Is(err, objstore.ErrNoSuchKey) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("migrate: read %s: %w", key, err)
	}
	defer func() { _ = r.Close() }()
	data, err := io.ReadAll(io.LimitReader(r, maxFenceDoc+1))
	if err != nil {
		return nil, fmt.Errorf("migrate: read %s: %w", key, err)
	}
	return data, nil
}

func (f *Fences) write(ctx context.Context, key string, data []byte) error {
	_, err := f.store.Put(ctx, Bucket, key, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{ContentType: "application/json"})
	if err != nil {
		return fmt.Errorf("migrate: write %s: %w", key, err)
	}
	return nil
}

func (f *Fences) delete(ctx context.Context, key string) error {
	_, err := f.store.Delete(ctx, Bucket, key, objstore.DeleteOptions{})
	if err != nil && !errors.Is(err, objstore.ErrNoSuchKey) {
		return fmt.Errorf("migrate: delete %s: %w", key, err)
	}
	return nil
}

// decodeFence parses and validates a warehouse fence document: strict
// JSON, version 1 or 2, the right warehouse, a migration id, PREPARING
// without a fingerprint or MATERIALIZED with a fingerprint and an ETag.
// Errors wrap catalog.ErrBadRequest.
func decodeFence(data []byte, wh string) (*catalog.Fence, error) {
	if len(data) > maxFenceDoc {
		return nil, fmt.Errorf("%w: fence of %s: document too large", catalog.ErrBadRequest, wh)
	}
	var fc catalog.Fence
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return nil, fmt.Errorf("%w: fence of %s: %w", catalog.ErrBadRequest, wh, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: fence of %s: trailing data", catalog.ErrBadRequest, wh)
	}
	bad := func(why string) (*catalog.Fence, error) {
		return nil, fmt.Errorf("%w: fence of %s: %s", catalog.ErrBadRequest, wh, why)
	}
	switch {
	case fc.Version != fenceVersion && fc.Version != fenceVersionOld:
		return bad(fmt.Sprintf("version %d", fc.Version))
	case fc.TableBucket != wh:
		return bad(fmt.Sprintf("names table bucket %q", fc.TableBucket))
	case strings.TrimSpace(fc.MigrationID) == "":
		return bad("empty migration id")
	case fc.Status == catalog.FenceStatusPreparing && fc.SourceFingerprint != nil:
		return bad("PREPARING with a source fingerprint")
	case fc.Status == catalog.FenceStatusMaterialized && (fc.SourceFingerprint == nil || *fc.SourceFingerprint == "" || fc.TargetSnapshotETag == nil || *fc.TargetSnapshotETag == ""):
		return bad("MATERIALIZED without a fingerprint and an ETag")
	case fc.Status != catalog.FenceStatusPreparing && fc.Status != catalog.FenceStatusMaterialized:
		return bad(fmt.Sprintf("status %q", fc.Status))
	case fc.TargetBucketExisted && fc.TargetSnapshotETag == nil:
		// The target existed, so its snapshot had an ETag.
		return bad("target_bucket_existed with a known-absent baseline")
	}
	return &fc, nil
}

// decodeGlobalFence parses and validates the global fence document.
func decodeGlobalFence(data []byte) (*GlobalFence, error) {
	var g GlobalFence
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("%w: global fence: %w", catalog.ErrBadRequest, err)
	}
	if g.Version != fenceVersion && g.Version != fenceVersionOld {
		return nil, fmt.Errorf("%w: global fence: version %d", catalog.ErrBadRequest, g.Version)
	}
	if strings.TrimSpace(g.MigrationID) == "" {
		return nil, fmt.Errorf("%w: global fence: empty migration id", catalog.ErrBadRequest)
	}
	return &g, nil
}
