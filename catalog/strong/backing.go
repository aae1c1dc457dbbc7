package strong

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

// Bucket is the system bucket holding the snapshots.
const Bucket = ".cairn.sys"

// Object keys of the snapshots in Bucket.
const (
	registryKey     = "strong/registry.snapshot"
	warehousePrefix = "strong/warehouses/"
	snapshotSuffix  = ".snapshot"
)

// SnapshotKey is the object key of warehouse wh's snapshot ("" = the
// registry).
func SnapshotKey(wh string) string {
	if wh == "" {
		return registryKey
	}
	return warehousePrefix + wh + snapshotSuffix
}

// Backing is the durable-strong backing: one snapshot per warehouse plus
// the registry, each published with an ETag compare-and-swap.
type Backing struct {
	store *objstore.Store
	opt   Options

	mu        sync.Mutex // protects the following; never held during I/O
	whs       map[string]*warehouse
	unhealthy map[string]error
	quarant   map[string][]string
}

var _ catalog.Backing = (*Backing)(nil)

// warehouse is the cached state of one snapshot.
type warehouse struct {
	name string
	key  string

	qmu   sync.Mutex // protects queue; never held with mu waiting
	queue []*pending // mutations waiting for the next publish (batch.go)

	mu     sync.Mutex // serialises loads and writes; protects the following
	seen   bool       // a snapshot object has been observed
	etag   string     // ETag of the object snap (or bad) came from; "" = none
	snap   *snapshot  // valid state; nil while bad or before the first load
	bad    error      // validation failure of the object at etag
	hwm    int        // highest format read or written by this process
	loaded bool
}

// Open returns the durable-strong backing over store: it creates the
// system bucket when absent, then loads and validates the registry and
// every warehouse snapshot. A snapshot failing validation does not fail
// Open: that warehouse is reported by Unhealthy and its operations fail
// with ErrSnapshotInvalid while the others are served. Open fails only on
// store errors.
func Open(ctx context.Context, store *objstore.Store, opt Options) (*Backing, error) {
	if err := store.EnsureSystemBucket(ctx, Bucket); err != nil {
		return nil, fmt.Errorf("strong: %w", err)
	}
	b := &Backing{store: store, opt: opt, whs: map[string]*warehouse{}, unhealthy: map[string]error{}, quarant: map[string][]string{}}
	names := []string{""}
	after := ""
	for {
		page, err := store.List(ctx, Bucket, objstore.ListOptions{Prefix: warehousePrefix, After: after, MaxKeys: 1000})
		if err != nil {
			return nil, fmt.Errorf("strong: list snapshots: %w", err)
		}
		for _, o := range page.Objects {
			name, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, warehousePrefix), snapshotSuffix)
			if ok && validWarehouse(name, false) == nil {
				names = append(names, name)
			}
		}
		if !page.IsTruncated {
			break
		}
		after = page.NextMarker
	}
	for _, n := range names {
		w := b.warehouse(n)
		w.mu.Lock()
		_, err := b.refreshLocked(ctx, w)
		w.mu.Unlock()
		if err != nil && !b.isBad(n) {
			return nil, err // a store error, not a bad snapshot
		}
	}
	return b, nil
}

// Unhealthy returns the warehouses not served because their snapshot
// failed validation (or vanished), with the reason; "" is the registry.
// It does no I/O.
func (b *Backing) Unhealthy() map[string]error {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]error, len(b.unhealthy))
	for k, v := range b.unhealthy {
		out[k] = v
	}
	return out
}

// Quarantined returns the warehouses in cleanup-only mode with their
// colliding identifiers (table keys). It does no I/O.
func (b *Backing) Quarantined() map[string][]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string][]string, len(b.quarant))
	for k, v := range b.quarant {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// Format returns the format of warehouse wh's current snapshot (0 when it
// has none or it is not served) and the process high-water mark for it,
// from the cache (no I/O).
func (b *Backing) Format(wh string) (current, highWater int) {
	w := b.warehouse(wh)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.snap != nil && w.etag != "" {
		current = w.snap.Format
	}
	return current, w.hwm
}

func (b *Backing) isBad(wh string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.unhealthy[wh] != nil
}

// warehouse returns the cache entry of wh, creating it.
func (b *Backing) warehouse(wh string) *warehouse {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.whs[wh]
	if w == nil {
		w = &warehouse{name: wh, key: SnapshotKey(wh)}
		b.whs[wh] = w
	}
	return w
}

// setHealth records w's health and quarantine after a load or publish.
func (b *Backing) setHealth(w *warehouse) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.bad != nil {
		b.unhealthy[w.name] = w.bad
	} else {
		delete(b.unhealthy, w.name)
	}
	var c []string
	if w.snap != nil {
		c = collisions(w.snap)
	}
	if len(c) > 0 {
		b.quarant[w.name] = c
	} else {
		delete(b.quarant, w.name)
	}
}

func checkAddr(wh string, kind catalog.Kind, key string) error {
	if err := validWarehouse(wh, true); err != nil {
		return fmt.Errorf("strong: %w", err)
	}
	if !knownKind(kind) {
		return fmt.Errorf("strong: unknown kind %q", kind)
	}
	if err := validKey(key); err != nil {
		return fmt.Errorf("strong: %w", err)
	}
	return nil
}

// quarantinedKey reports whether (kind, key) is a colliding identifier.
func quarantinedKey(s *snapshot, kind catalog.Kind, key string) bool {
	if kind != catalog.KindTable && kind != catalog.KindView {
		return false
	}
	c := collisions(s)
	i := sort.SearchStrings(c, key)
	return i < len(c) && c[i] == key
}

// Get implements catalog.Backing.
func (b *Backing) Get(ctx context.Context, wh string, kind catalog.Kind, key string) (catalog.Record, error) {
	if err := checkAddr(wh, kind, key); err != nil {
		return catalog.Record{}, err
	}
	s, err := b.current(ctx, wh)
	if err != nil {
		return catalog.Record{}, err
	}
	if quarantinedKey(s, kind, key) {
		return catalog.Record{}, fmt.Errorf("%w: %q: %s %q needs operator cleanup", ErrQuarantined, wh, kind, key)
	}
	r, ok := s.get(kind, key)
	if !ok {
		return catalog.Record{}, fmt.Errorf("%w: %q %s %q", catalog.ErrNotFound, wh, kind, key)
	}
	return r, nil
}

// List implements catalog.Backing. Listing tables or views of a
// quarantined warehouse fails when the page touches a colliding key.
func (b *Backing) List(ctx context.Context, wh string, kind catalog.Kind, opt catalog.ListOptions) ([]catalog.Record, bool, error) {
	if err := validWarehouse(wh, true); err != nil {
		return nil, false, fmt.Errorf("strong: %w", err)
	}
	if !knownKind(kind) {
		return nil, false, fmt.Errorf("strong: unknown kind %q", kind)
	}
	s, err := b.current(ctx, wh)
	if err != nil {
		return nil, false, err
	}
	recs, more := s.list(kind, opt)
	for _, r := range recs {
		if quarantinedKey(s, kind, r.Key) {
			return nil, false, fmt.Errorf("%w: %q: listing touches %s %q", ErrQuarantined, wh, kind, r.Key)
		}
	}
	return recs, more, nil
}

// Put implements catalog.Backing.
func (b *Backing) Put(ctx context.Context, wh string, kind catalog.Kind, key string, value []byte, ifVersion string) (string, error) {
	if err := checkAddr(wh, kind, key); err != nil {
		return "", err
	}
	var ver string
	err := b.mutate(ctx, wh, func(s *snapshot) error {
		if err := s.check(kind, key, ifVersion, true); err != nil {
			return err
		}
		s.put(kind, key, value, s.Generation)
		ver = s.version(s.Generation)
		return nil
	})
	return ver, err
}

// Delete implements catalog.Backing. Deleting an absent record
// unconditionally publishes nothing.
func (b *Backing) Delete(ctx context.Context, wh string, kind catalog.Kind, key, ifVersion string) error {
	if err := checkAddr(wh, kind, key); err != nil {
		return err
	}
	return b.mutate(ctx, wh, func(s *snapshot) error {
		if err := s.check(kind, key, ifVersion, false); err != nil {
			return err
		}
		if !s.del(kind, key) {
			return errNoChange
		}
		return nil
	})
}

var _ catalog.SnapshotBacking = (*Backing)(nil)

// RewritesWarehouse implements catalog.SnapshotBacking: every write
// publishes a new snapshot of the whole warehouse.
func (b *Backing) RewritesWarehouse() {}

// PutBatch implements catalog.BatchBacking: every Put's condition is
// checked against the same state and all are published together, with
// one generation each, or nothing is.
func (b *Backing) PutBatch(ctx context.Context, wh string, puts []catalog.BatchPut) ([]string, error) {
	seen := make(map[string]bool, len(puts))
	for _, p := range puts {
		if err := checkAddr(wh, p.Kind, p.Key); err != nil {
			return nil, err
		}
		k := string(p.Kind) + "/" + p.Key
		if seen[k] {
			return nil, fmt.Errorf("strong: batch writes %s twice", k)
		}
		seen[k] = true
	}
	vers := make([]string, len(puts))
	err := b.mutate(ctx, wh, func(s *snapshot) error {
		for _, p := range puts {
			if err := s.check(p.Kind, p.Key, p.IfVersion, true); err != nil {
				return err
			}
		}
		base := s.Generation
		for i, p := range puts {
			s.Generation = base + uint64(i)
			s.put(p.Kind, p.Key, p.Value, s.Generation)
			vers[i] = s.version(s.Generation)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return vers, nil
}
