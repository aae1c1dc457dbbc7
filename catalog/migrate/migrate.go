package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/strong"
	"github.com/rs/zerolog"
)

// Failpoints of a materialize, in order (Hooks.At gets one of these).
const (
	PointAfterGlobalFence  = "materialize.after-global-fence"
	PointAfterPrepareFence = "materialize.after-prepare-fence"
	PointAfterPublish      = "materialize.after-publish"
	PointAfterRegistry     = "materialize.after-registry"
	PointAfterMaterialized = "materialize.after-materialized-fence"
	PointCancelAfterTarget = "cancel.after-target-removed"
)

// Points lists the failpoints, for flag and env validation.
func Points() []string {
	return []string{PointAfterGlobalFence, PointAfterPrepareFence, PointAfterPublish, PointAfterRegistry, PointAfterMaterialized, PointCancelAfterTarget}
}

// Hooks are failpoints for crash tests; nil in production.
type Hooks struct {
	// At runs at each failpoint; an error stops the operation there.
	At func(point string) error
}

func (h Hooks) at(point string) error {
	if h.At == nil {
		return nil
	}
	if err := h.At(point); err != nil {
		return fmt.Errorf("migrate: stopped at %s: %w", point, err)
	}
	return nil
}

// Options configure a Migrator.
type Options struct {
	Logger zerolog.Logger
	Hooks  Hooks
}

// Migrator runs the cutover of warehouses from the object backing (the
// Service's own) to the durable-strong backing. It implements
// catalog.Cutover.
type Migrator struct {
	svc    *catalog.Service
	src    catalog.Backing
	dst    *strong.Backing
	fences *Fences
	opt    Options
}

var _ catalog.Cutover = (*Migrator)(nil)

// New returns a Migrator. svc must be the object-backed Service over src
// whose Options.Gate is fences; dst is the durable-strong backing over
// the same store.
func New(svc *catalog.Service, src catalog.Backing, dst *strong.Backing, fences *Fences, opt Options) (*Migrator, error) {
	if svc == nil || src == nil || dst == nil || fences == nil {
		return nil, errors.New("migrate: New needs a service, both backings and the fences")
	}
	return &Migrator{svc: svc, src: src, dst: dst, fences: fences, opt: opt}, nil
}

// copiedKinds are the kinds of records a warehouse's snapshot holds.
func copiedKinds() []catalog.Kind {
	var out []catalog.Kind
	for _, k := range catalog.Kinds() {
		if k != catalog.KindWarehouse {
			out = append(out, k)
		}
	}
	return out
}

// source is one warehouse's records in the object backing.
type source struct {
	registry []byte // the warehouse's registry record value
	kinds    map[catalog.Kind][]catalog.Record
	counts   map[catalog.Kind]int
	fp       string
}

// collect reads every record of warehouse wh from the object backing.
func (m *Migrator) collect(ctx context.Context, wh string) (*source, error) {
	reg, err := m.src.Get(ctx, "", catalog.KindWarehouse, wh)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", catalog.ErrNoSuchWarehouse, wh)
	}
	if err != nil {
		return nil, fmt.Errorf("migrate: read registry entry of %s: %w", wh, err)
	}
	src := &source{registry: reg.Value, kinds: map[catalog.Kind][]catalog.Record{}, counts: map[catalog.Kind]int{}}
	for _, kind := range copiedKinds() {
		err := catalog.ListAll(ctx, m.src, wh, kind, false, func(r catalog.Record) error {
			src.kinds[kind] = append(src.kinds[kind], r)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("migrate: read %s %s records: %w", wh, kind, err)
		}
		src.counts[kind] = len(src.kinds[kind])
	}
	src.fp = strong.Fingerprint(wh, src.registry, src.kinds)
	return src, nil
}

// target is one warehouse's state in the durable-strong backing.
type target struct {
	etag     string // the snapshot's ETag; "" when it has none
	registry []byte // the registry record value; nil when absent
	kinds    map[catalog.Kind][]catalog.Record
}

// exists: the target has a snapshot or a registry entry.
func (t *target) exists() bool { return t.etag != "" || t.registry != nil }

// fingerprint of the target's records under the given registry value, so
// that records and registry entry can be compared separately.
func (t *target) fingerprint(wh string, registry []byte) string {
	return strong.Fingerprint(wh, registry, t.kinds)
}

// observe reads warehouse wh's durable-strong state.
func (m *Migrator) observe(ctx context.Context, wh string) (*target, error) {
	kinds, etag, err := m.dst.Records(ctx, wh)
	if err != nil {
		return nil, fmt.Errorf("migrate: read the durable-strong snapshot of %s: %w", wh, err)
	}
	t := &target{etag: etag, kinds: kinds}
	reg, err := m.dst.Get(ctx, "", catalog.KindWarehouse, wh)
	switch {
	case err == nil:
		t.registry = reg.Value
	case !errors.Is(err, catalog.ErrNotFound):
		return nil, fmt.Errorf("migrate: read the durable-strong registry: %w", err)
	}
	return t, nil
}

// registryNames lists the warehouses a backing's registry holds.
func registryNames(ctx context.Context, b catalog.Backing) ([]string, error) {
	var out []string
	err := catalog.ListAll(ctx, b, "", catalog.KindWarehouse, true, func(r catalog.Record) error {
		out = append(out, r.Key)
		return nil
	})
	return out, err
}

// unknownTargets lists the warehouses the durable-strong registry holds
// and the object registry does not.
func (m *Migrator) unknownTargets(ctx context.Context) ([]string, error) {
	srcNames, err := registryNames(ctx, m.src)
	if err != nil {
		return nil, fmt.Errorf("migrate: list warehouses: %w", err)
	}
	dstNames, err := registryNames(ctx, m.dst)
	if err != nil {
		return nil, fmt.Errorf("migrate: list durable-strong warehouses: %w", err)
	}
	known := map[string]bool{}
	for _, n := range srcNames {
		known[n] = true
	}
	var out []string
	for _, n := range dstNames {
		if !known[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// lockExclusive takes the global lock, then warehouse wh's, exclusively:
// in-flight writers drain and new ones wait. It returns the unlock.
func (m *Migrator) lockExclusive(wh string) func() {
	m.fences.global.Lock()
	l := m.fences.lock(wh)
	l.Lock()
	return func() {
		l.Unlock()
		m.fences.global.Unlock()
	}
}

func conflictf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", catalog.ErrMigrationConflict, fmt.Sprintf(format, args...))
}

func ptr(s string) *string { return &s }
