package catalogctl

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/frontends/control"
)

// Controls are what the catalog controls need; cmd/ fills them.
type Controls struct {
	// Warehouses lists the warehouse names (one directory each).
	// Required.
	Warehouses func(ctx context.Context) ([]string, error)
	// Cutover runs migrations; nil on a durable-strong server.
	Cutover catalog.Cutover
	// Status reports a warehouse's catalog status; nil leaves the status
	// files out.
	Status interface {
		Status(ctx context.Context, wh string) (catalog.Status, error)
	}
}

// The words of a warehouse's migration file.
const (
	migrationPreflight   = "preflight"
	migrationMaterialize = "materialize"
	migrationCancel      = "cancel"
)

// MigrationResult is the result of a write to a warehouse's
// migration file, shown in full by its last-result file: the field of the
// word written is set (also when the run failed with a partial result).
type MigrationResult struct {
	Preflight   *catalog.Preflight         `json:"preflight,omitempty"`
	Materialize *catalog.MaterializeResult `json:"materialize,omitempty"`
	Cancel      *catalog.CancelResult      `json:"cancel,omitempty"`
}

// migrationUnsupported is what reading a warehouse's migration file shows
// on a server without a Cutover (a durable-strong server); writes to it
// fail with control.ErrUnsupported.
type migrationUnsupported struct {
	TableBucket string `json:"table_bucket"`
	Backing     string `json:"backing"`
	Message     string `json:"message"`
}

// unsupportedMessage says why a durable-strong server has no migration.
const unsupportedMessage = "catalog migration is served by an object-backed server; this server runs the durable-strong backing"

// Tree returns the catalog's controls: a directory with one directory per
// warehouse that c.Warehouses lists, which cmd/ adds to the control root
// as "catalog" (the mount shows .cairn/catalog/<wh>/...):
//
//	<wh>/migration    read: Cutover.Preflight as JSON (catalog.Preflight);
//	                  write one word, preflight, materialize or cancel: run
//	                  it (EBUSY while fenced or on a migration conflict,
//	                  ENOENT for an unknown warehouse, EINVAL for another
//	                  word, EPERM on a durable-strong server)
//	<wh>/last-result  the control.Outcome of the last write, its
//	                  MigrationResult or error in full
//	<wh>/status       read: Status.Status as JSON (catalog.Status)
//
// A warehouse's files, and so its last result, live as long as the tree,
// also while the warehouse is not listed. Names that are not valid
// control names (control.ValidName) are left out, as are repeated ones; a
// lookup of a name not listed fails with control.ErrNotFound. Errors of
// the catalog become control's sentinels, their text kept:
// catalog.ErrFenced and catalog.ErrMigrationConflict ErrBusy,
// catalog.ErrNoSuchWarehouse ErrNotFound, catalog.ErrBadRequest
// ErrInvalid, catalog.ErrUnsupported ErrUnsupported; others stay as they
// are (EIO). Tree panics when c.Warehouses is nil, a wiring mistake.
func Tree(c Controls) *control.Dir {
	if c.Warehouses == nil {
		panic("catalogctl: Tree needs Warehouses")
	}
	t := &catalogTree{c: c, dirs: make(map[string]*control.Dir)}
	return control.NewDirFunc(t.list)
}

// catalogTree keeps the warehouse directories, so that each keeps its Op
// (and its last result) across listings and lookups.
type catalogTree struct {
	c Controls

	mu   sync.Mutex // protects dirs
	dirs map[string]*control.Dir
}

func (t *catalogTree) list(ctx context.Context) ([]control.Entry, error) {
	names, err := t.c.Warehouses(ctx)
	if err != nil {
		return nil, catalogError(fmt.Errorf("list warehouses: %w", err))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]control.Entry, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, wh := range names {
		if seen[wh] || control.ValidName(wh) != nil {
			continue
		}
		seen[wh] = true
		d, ok := t.dirs[wh]
		if !ok {
			d = t.warehouseDir(wh)
			t.dirs[wh] = d
		}
		out = append(out, control.Entry{Name: wh, Node: d})
	}
	return out, nil
}

// warehouseDir builds the directory of warehouse wh.
func (t *catalogTree) warehouseDir(wh string) *control.Dir {
	op := &control.Op[any, *MigrationResult]{
		Words:   []string{migrationPreflight, migrationMaterialize, migrationCancel},
		Preview: func(ctx context.Context) (any, error) { return t.preview(ctx, wh) },
		Run: func(ctx context.Context, word string) (*MigrationResult, error) {
			res, err := t.run(ctx, wh, word)
			return res, catalogError(err)
		},
	}
	migration, lastResult := op.Files()
	d := control.NewDir().Add("migration", migration).Add("last-result", lastResult)
	if st := t.c.Status; st != nil {
		d.Add("status", control.ReadOnly(func(ctx context.Context) (catalog.Status, error) {
			s, err := st.Status(ctx, wh)
			return s, catalogError(err)
		}))
	}
	return d
}

func (t *catalogTree) preview(ctx context.Context, wh string) (any, error) {
	if t.c.Cutover == nil {
		return migrationUnsupported{
			TableBucket: wh,
			Backing:     catalog.BackingDurableStrong,
			Message:     unsupportedMessage,
		}, nil
	}
	p, err := t.c.Cutover.Preflight(ctx, wh)
	if err != nil {
		return nil, catalogError(err)
	}
	return p, nil
}

// run runs word on warehouse wh. The result is nil when the run failed
// with nothing to show.
func (t *catalogTree) run(ctx context.Context, wh, word string) (*MigrationResult, error) {
	if t.c.Cutover == nil {
		return nil, fmt.Errorf("%w: %s of warehouse %s: %s", control.ErrUnsupported, word, wh, unsupportedMessage)
	}
	var res MigrationResult
	var err error
	switch word {
	case migrationPreflight:
		var p catalog.Preflight
		p, err = t.c.Cutover.Preflight(ctx, wh)
		res.Preflight = kept(p, err)
	case migrationMaterialize:
		var m catalog.MaterializeResult
		m, err = t.c.Cutover.Materialize(ctx, wh)
		res.Materialize = kept(m, err)
	case migrationCancel:
		var c catalog.CancelResult
		c, err = t.c.Cutover.Cancel(ctx, wh)
		res.Cancel = kept(c, err)
	default: // the Op checks the words; this is a wiring mistake
		return nil, fmt.Errorf("%w: unknown word %q", control.ErrInvalid, word)
	}
	if res == (MigrationResult{}) {
		return nil, err
	}
	return &res, err
}

// kept returns &v, unless the call failed and v is its zero value.
func kept[T any](v T, err error) *T {
	if err != nil && reflect.ValueOf(&v).Elem().IsZero() {
		return nil
	}
	return &v
}

// catalogError translates an error of the catalog into control's
// sentinels, keeping its text, so that control.Errno and
// control.HTTPStatus map it: ErrFenced and ErrMigrationConflict are
// ErrBusy, ErrNoSuchWarehouse is ErrNotFound, ErrBadRequest is ErrInvalid
// and the catalog's ErrUnsupported is control.ErrUnsupported. Other errors
// (and those that already wrap a sentinel of control) are returned as
// they are.
func catalogError(err error) error {
	if err == nil {
		return nil
	}
	if control.WrapsSentinel(err) {
		return err
	}
	switch {
	case errors.Is(err, catalog.ErrFenced), errors.Is(err, catalog.ErrMigrationConflict):
		return fmt.Errorf("%w: %w", control.ErrBusy, err)
	case errors.Is(err, catalog.ErrNoSuchWarehouse):
		return fmt.Errorf("%w: %w", control.ErrNotFound, err)
	case errors.Is(err, catalog.ErrBadRequest):
		return fmt.Errorf("%w: %w", control.ErrInvalid, err)
	case errors.Is(err, catalog.ErrUnsupported):
		return fmt.Errorf("%w: %w", control.ErrUnsupported, err)
	}
	return err
}
