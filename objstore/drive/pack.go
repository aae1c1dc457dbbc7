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

// PackName is a pack segment's file name: 16 hex digits.
func PackName(seg uint64) string { return fmt.Sprintf("%016x", seg) }

// PackPath implements Local.
func (d *Dir) PackPath(seg uint64) string {
	return filepath.Join(d.root, "packs", PackName(seg))
}

// packFile is a PackFile on a local file.
type packFile struct{ *os.File }

func (p packFile) Size() (int64, error) {
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// OpenPack implements Drive. A created segment's directory entry is made
// durable at once, so a later fdatasync of the file (SyncPacks) suffices.
func (d *Dir) OpenPack(ctx context.Context, seg uint64, create bool) (PackFile, error) {
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
	return packFile{f}, nil
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
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

// SyncPacks implements Drive: fdatasync of each segment file (OpenPack
// made its directory entry durable when it created it).
func (d *Dir) SyncPacks(ctx context.Context, segs []uint64) error {
	for _, seg := range segs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := datasync(d.PackPath(seg)); err != nil {
			return fmt.Errorf("drive %d: %w", d.index, err)
		}
	}
	return nil
}
