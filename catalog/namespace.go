package catalog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
)

// ListNamespaces implements Catalog.
func (s *Service) ListNamespaces(ctx context.Context, wh string, parent []string, pageToken string, pageSize int) ([][]string, string, error) {
	if err := s.requireWarehouse(ctx, wh); err != nil {
		return nil, "", err
	}
	prefix := ""
	if len(parent) > 0 {
		if err := s.requireNamespace(ctx, wh, parent); err != nil {
			return nil, "", err
		}
		prefix = nsKey(parent) + NamespaceSep
	}
	after, err := decodeToken(pageToken)
	if err != nil {
		return nil, "", err
	}
	var out [][]string
	for {
		recs, more, err := s.b.List(ctx, wh, KindNamespace, ListOptions{Prefix: prefix, After: after, Limit: 1000, KeysOnly: true})
		if err != nil {
			return nil, "", err
		}
		for _, r := range recs {
			after = r.Key
			if strings.Contains(r.Key[len(prefix):], NamespaceSep) {
				continue // deeper than one level
			}
			out = append(out, nsFromKey(r.Key))
			if pageSize > 0 && len(out) == pageSize {
				return out, encodeToken(after), nil
			}
		}
		if !more {
			return out, "", nil
		}
	}
}

// CreateNamespace implements Catalog.
func (s *Service) CreateNamespace(ctx context.Context, wh string, ns []string, props map[string]string) error {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	if err := validNamespace(ns); err != nil {
		return err
	}
	if err := s.requireWarehouse(ctx, wh); err != nil {
		return err
	}
	if props == nil {
		props = map[string]string{}
	}
	rec := namespaceRec{Properties: props, Created: s.now().UTC()}
	if _, err := s.putJSON(ctx, wh, KindNamespace, nsKey(ns), rec, ""); err != nil {
		if errors.Is(err, ErrConflict) {
			return fmt.Errorf("%w: namespace %s", ErrAlreadyExists, strings.Join(ns, "."))
		}
		return err
	}
	return nil
}

// loadNamespace reads a namespace record and its version.
func (s *Service) loadNamespace(ctx context.Context, wh string, ns []string) (namespaceRec, string, error) {
	var rec namespaceRec
	if err := validNamespace(ns); err != nil {
		return rec, "", err
	}
	if err := s.requireWarehouse(ctx, wh); err != nil {
		return rec, "", err
	}
	v, err := s.getJSON(ctx, wh, KindNamespace, nsKey(ns), &rec)
	if err != nil {
		return rec, "", backingErr(err, fmt.Errorf("%w: %s", ErrNoSuchNamespace, strings.Join(ns, ".")))
	}
	if rec.Properties == nil {
		rec.Properties = map[string]string{}
	}
	return rec, v, nil
}

// requireNamespace answers ErrNoSuchNamespace for an unknown namespace.
func (s *Service) requireNamespace(ctx context.Context, wh string, ns []string) error {
	_, _, err := s.loadNamespace(ctx, wh, ns)
	return err
}

// LoadNamespace implements Catalog. A namespace that sets no "location"
// reports its default one (namespaceLocation), under which the tables and
// views created in it without a location lie. Engines that place tables
// themselves read it: Trino stages a create at <location>/<name>-<uuid>;
// given no location it creates the table unstaged and then refuses the
// location as non-empty (the create wrote the first metadata file there),
// so CREATE TABLE failed although the table was made.
func (s *Service) LoadNamespace(ctx context.Context, wh string, ns []string) (map[string]string, error) {
	rec, _, err := s.loadNamespace(ctx, wh, ns)
	if err != nil {
		return nil, err
	}
	props := maps.Clone(rec.Properties)
	if _, ok := props[NamespaceLocationProperty]; !ok {
		props[NamespaceLocationProperty] = namespaceLocation(wh, ns)
	}
	return props, nil
}

// NamespaceExists implements Catalog.
func (s *Service) NamespaceExists(ctx context.Context, wh string, ns []string) (bool, error) {
	err := s.requireNamespace(ctx, wh, ns)
	if errors.Is(err, ErrNoSuchNamespace) {
		return false, nil
	}
	return err == nil, err
}

// DropNamespace implements Catalog.
func (s *Service) DropNamespace(ctx context.Context, wh string, ns []string) error {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	return s.dropNamespace(ctx, wh, ns)
}

// dropNamespace is DropNamespace inside the gate.
func (s *Service) dropNamespace(ctx context.Context, wh string, ns []string) error {
	_, ver, err := s.loadNamespace(ctx, wh, ns)
	if err != nil {
		return err
	}
	k := nsKey(ns)
	for _, c := range []struct {
		kind   Kind
		prefix string
	}{{KindTable, k + tableSep}, {KindView, k + tableSep}, {KindNamespace, k + NamespaceSep}} {
		recs, _, err := s.b.List(ctx, wh, c.kind, ListOptions{Prefix: c.prefix, Limit: 1, KeysOnly: true})
		if err != nil {
			return err
		}
		if len(recs) > 0 {
			return fmt.Errorf("%w: %s holds %s records", ErrNamespaceNotEmpty, strings.Join(ns, "."), c.kind)
		}
	}
	if err := s.b.Delete(ctx, wh, KindNamespace, k, ver); err != nil {
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("%w: %s", ErrNoSuchNamespace, strings.Join(ns, "."))
		}
		if errors.Is(err, ErrConflict) {
			return s.dropNamespace(ctx, wh, ns) // properties changed meanwhile
		}
		return err
	}
	return nil
}

// UpdateNamespaceProperties implements Catalog.
func (s *Service) UpdateNamespaceProperties(ctx context.Context, wh string, ns []string, removals []string, updates map[string]string) ([]string, []string, []string, error) {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return nil, nil, nil, err
	}
	defer release()
	for _, r := range removals {
		if _, ok := updates[r]; ok {
			return nil, nil, nil, fmt.Errorf("%w: property %q is both removed and updated", ErrUnprocessable, r)
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		rec, ver, err := s.loadNamespace(ctx, wh, ns)
		if err != nil {
			return nil, nil, nil, err
		}
		props := maps.Clone(rec.Properties)
		updated, removed, missing := []string{}, []string{}, []string{}
		for _, r := range removals {
			if _, ok := props[r]; ok {
				delete(props, r)
				removed = append(removed, r)
			} else {
				missing = append(missing, r)
			}
		}
		for k, v := range updates {
			props[k] = v
			updated = append(updated, k)
		}
		sort.Strings(updated)
		rec.Properties = props
		_, err = s.putJSON(ctx, wh, KindNamespace, nsKey(ns), rec, ver)
		if errors.Is(err, ErrConflict) {
			continue // a concurrent update: redo on the new properties
		}
		if errors.Is(err, ErrNotFound) {
			return nil, nil, nil, fmt.Errorf("%w: %s", ErrNoSuchNamespace, strings.Join(ns, "."))
		}
		if err != nil {
			return nil, nil, nil, err
		}
		return updated, removed, missing, nil
	}
}
