package drive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// PackPath implements Drive.
func (d *Dir) PackPath(seg uint64) string {
	return filepath.Join(d.root, "packs", fmt.Sprintf("%016x", seg))
}

// OpenPack implements Drive. A created segment's directory entry is made
// durable at once, so a later fdatasync of the file suffices.
func (d *Dir) OpenPack(ctx context.Context, seg uint64, create bool) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	flags := os.O_RDWR
	if create {
		if err := os.MkdirAll(filepath.Join(d.root, "packs"), 0o755); err != nil {
			return nil, fmt.Errorf("drive %d: %w", d.index, err)
		}
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(d.PackPath(seg), flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("drive %d: %w", d.index, err)
	}
	if create {
		if err := syncDir(filepath.Join(d.root, "packs")); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("drive %d: %w", d.index, err)
		}
	}
	return f, nil
}

// RemovePack implements Drive.
func (d *Dir) RemovePack(ctx context.Context, seg uint64) error {
	err := os.Remove(d.PackPath(seg))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("drive %d: %w", d.index, err)
	}
	return nil
}

// Packs implements Drive.
func (d *Dir) Packs(ctx context.Context) ([]uint64, error) {
	ents, err := os.ReadDir(filepath.Join(d.root, "packs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("drive %d: %w", d.index, err)
	}
	var segs []uint64
	for _, e := range ents {
		if seg, err := strconv.ParseUint(e.Name(), 16, 64); err == nil && len(e.Name()) == 16 {
			segs = append(segs, seg)
		}
	}
	return segs, nil
}
