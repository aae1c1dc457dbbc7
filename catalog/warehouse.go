package catalog

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/cairnstore/cairn/objstore"
)

// CreateWarehouse implements Catalog.
func (s *Service) CreateWarehouse(ctx context.Context, name string) (Warehouse, error) {
	release, err := s.enter(ctx, "")
	if err != nil {
		return Warehouse{}, err
	}
	defer release()
	if objstore.IsSystemBucket(name) {
		return Warehouse{}, fmt.Errorf("%w: %q is a system bucket name", ErrBadRequest, name)
	}
	if err := objstore.ValidateBucketName(name); err != nil {
		return Warehouse{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if err := s.store.CreateBucket(ctx, name, objstore.BucketOptions{}); err != nil && !errors.Is(err, objstore.ErrBucketExists) {
		return Warehouse{}, fmt.Errorf("catalog: create bucket %s: %w", name, err)
	}
	rec := warehouseRec{Name: name, Created: s.now().UTC()}
	if _, err := s.putJSON(ctx, "", KindWarehouse, name, rec, ""); err != nil {
		if errors.Is(err, ErrConflict) {
			return Warehouse{}, fmt.Errorf("%w: warehouse %s", ErrAlreadyExists, name)
		}
		return Warehouse{}, err
	}
	s.log.Info().Str("warehouse", name).Msg("warehouse created")
	return Warehouse(rec), nil
}

// ListWarehouses implements Catalog.
func (s *Service) ListWarehouses(ctx context.Context) ([]Warehouse, error) {
	recs, _, err := s.b.List(ctx, "", KindWarehouse, ListOptions{KeysOnly: true})
	if err != nil {
		return nil, err
	}
	out := make([]Warehouse, 0, len(recs))
	for _, r := range recs {
		w, err := s.GetWarehouse(ctx, r.Key)
		if errors.Is(err, ErrNoSuchWarehouse) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// GetWarehouse implements Catalog.
func (s *Service) GetWarehouse(ctx context.Context, name string) (Warehouse, error) {
	if name == "" || objstore.IsSystemBucket(name) {
		return Warehouse{}, fmt.Errorf("%w: %q", ErrNoSuchWarehouse, name)
	}
	var rec warehouseRec
	if _, err := s.getJSON(ctx, "", KindWarehouse, name, &rec); err != nil {
		return Warehouse{}, backingErr(err, fmt.Errorf("%w: %s", ErrNoSuchWarehouse, name))
	}
	return Warehouse(rec), nil
}

// requireWarehouse answers ErrNoSuchWarehouse for an unknown warehouse.
func (s *Service) requireWarehouse(ctx context.Context, wh string) error {
	_, err := s.GetWarehouse(ctx, wh)
	return err
}

// DeleteWarehouse implements Catalog.
func (s *Service) DeleteWarehouse(ctx context.Context, name string) error {
	release, err := s.enter(ctx, "", name)
	if err != nil {
		return err
	}
	defer release()
	if err := s.requireWarehouse(ctx, name); err != nil {
		return err
	}
	for _, k := range []Kind{KindNamespace, KindTable, KindView} {
		recs, _, err := s.b.List(ctx, name, k, ListOptions{Limit: 1, KeysOnly: true})
		if err != nil {
			return err
		}
		if len(recs) > 0 {
			return fmt.Errorf("%w: warehouse %s holds %s records", ErrNamespaceNotEmpty, name, k)
		}
	}
	if err := s.b.Delete(ctx, "", KindWarehouse, name, AnyVersion); err != nil {
		return err
	}
	for _, k := range []Kind{KindCommit, KindIdempotency, KindPrefix, KindMaintenance, KindPolicy} {
		if err := s.deleteAll(ctx, name, k); err != nil {
			s.log.Warn().Err(err).Str("warehouse", name).Msg("forgetting warehouse records")
		}
	}
	if err := s.store.DeleteBucket(ctx, name); err != nil && !errors.Is(err, objstore.ErrBucketNotEmpty) && !errors.Is(err, objstore.ErrNoSuchBucket) {
		return fmt.Errorf("catalog: delete bucket %s: %w", name, err)
	}
	s.log.Info().Str("warehouse", name).Msg("warehouse deleted")
	return nil
}

// deleteAll removes every record of a kind in a warehouse.
func (s *Service) deleteAll(ctx context.Context, wh string, kind Kind) error {
	for {
		recs, more, err := s.b.List(ctx, wh, kind, ListOptions{Limit: 1000, KeysOnly: true})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := s.b.Delete(ctx, wh, kind, r.Key, AnyVersion); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
	}
}
