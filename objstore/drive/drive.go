package drive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrForeign means the directory holds a drive of another set or index.
var ErrForeign = errors.New("drive: directory belongs to another drive set or slot")

// Drive is one directory of shard files. Implementations are safe for
// concurrent use. Names are data ids (lowercase hex); Drive does not check
// them beyond refusing path separators.
type Drive interface {
	// Index is the drive's slot in the set (shard i lives on drive i).
	Index() int
	// Root is the directory, for messages and fsck reports.
	Root() string
	// Create makes (or truncates) the shard file for name, ready for
	// WriteAt. It does not fsync; see Sync.
	Create(ctx context.Context, name string) (*os.File, error)
	// CreateShard is Create for a shard file written front to back: large
	// appends bypass the page cache (see ShardFile).
	CreateShard(ctx context.Context, name string) (*ShardFile, error)
	// Open opens the shard file for reading; fs.ErrNotExist when absent.
	Open(ctx context.Context, name string) (*os.File, error)
	// Remove deletes the shard file; absent files are not an error.
	Remove(ctx context.Context, name string) error
	// Stage starts a new shard file in tmp/ that Commit renames over the
	// old one, so a crash leaves the old or the new (heal uses it).
	Stage(ctx context.Context, name string) (*Staged, error)
	// Walk calls fn for every shard file name on the drive.
	Walk(ctx context.Context, fn func(name string) error) error
	// Path returns the shard file's path.
	Path(name string) string
	// Sync makes every write done before the call durable (syncfs).
	Sync(ctx context.Context) error
	// SyncFiles makes the named shard files durable, names included,
	// leaving the filesystem's other dirty data alone.
	SyncFiles(ctx context.Context, names []string) error
	// Dev identifies the filesystem, so SyncAll flushes each one once.
	Dev() uint64

	// OpenPack opens pack segment seg for reading and writing, creating
	// it when create is set (fs.ErrNotExist otherwise when absent).
	OpenPack(ctx context.Context, seg uint64, create bool) (*os.File, error)
	// RemovePack deletes a pack segment; absent is not an error.
	RemovePack(ctx context.Context, seg uint64) error
	// Packs lists the pack segments on the drive.
	Packs(ctx context.Context) ([]uint64, error)
	// PackPath returns the pack segment's path.
	PackPath(seg uint64) string
}

// Dir is a Drive on a local directory.
type Dir struct {
	root   string
	index  int
	dev    uint64
	stages *stagePool // ShardFile staging buffers
}

var _ Drive = (*Dir)(nil)

type format struct {
	Format int    `json:"format"`
	Set    string `json:"set"`
	Index  int    `json:"index"`
}

// OpenDir opens (creating when absent) the drive directory root for slot
// index of set. created reports whether the directory was missing or empty
// and had to be formatted, which means every shard on it must be healed.
func OpenDir(root string, set string, index int) (d *Dir, created bool, err error) {
	fpath := filepath.Join(root, "format.json")
	raw, err := os.ReadFile(fpath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		created = true
		if err := writeFormat(root, format{Format: 1, Set: set, Index: index}); err != nil {
			return nil, false, err
		}
	case err != nil:
		return nil, false, fmt.Errorf("drive %s: %w", root, err)
	default:
		var f format
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, false, fmt.Errorf("drive %s: format.json: %w", root, err)
		}
		if f.Set != set || f.Index != index {
			return nil, false, fmt.Errorf("%w: %s is slot %d of set %s, expected slot %d of set %s", ErrForeign, root, f.Index, f.Set, index, set)
		}
	}
	dirs := []string{filepath.Join(root, "packs")}
	for i := 0; i < 256; i++ {
		dirs = append(dirs, filepath.Join(root, "data", fmt.Sprintf("%02x", i)))
	}
	made := false
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err == nil {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, false, fmt.Errorf("drive %s: %w", root, err)
		}
		made = true
	}
	tmp := filepath.Join(root, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return nil, false, fmt.Errorf("drive %s: clear tmp: %w", root, err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, false, fmt.Errorf("drive %s: %w", root, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(root, &st); err != nil {
		return nil, false, fmt.Errorf("drive %s: %w", root, err)
	}
	// Directories just made must outlast a power loss before the first
	// shard file in them is synced on its own (SyncFiles syncs only a
	// file's own directory). tmp/ need not: heal syncs what it renames
	// out of it.
	if made {
		if err := syncfs(root); err != nil {
			return nil, false, fmt.Errorf("drive %s: %w", root, err)
		}
	}
	return &Dir{root: root, index: index, dev: uint64(st.Dev), stages: newStagePool()}, created, nil
}

func writeFormat(root string, f format) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("drive %s: %w", root, err)
	}
	raw, _ := json.Marshal(f)
	tmp := filepath.Join(root, "format.json.tmp")
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return fmt.Errorf("drive %s: %w", root, err)
	}
	if err := os.Rename(tmp, filepath.Join(root, "format.json")); err != nil {
		return fmt.Errorf("drive %s: %w", root, err)
	}
	return syncDir(root)
}

// Index implements Drive.
func (d *Dir) Index() int { return d.index }

// Root implements Drive.
func (d *Dir) Root() string { return d.root }

// Dev implements Drive.
func (d *Dir) Dev() uint64 { return d.dev }

// Path implements Drive.
func (d *Dir) Path(name string) string {
	if len(name) < 2 {
		return filepath.Join(d.root, "data", "00", name)
	}
	return filepath.Join(d.root, "data", name[:2], name)
}

func checkName(name string) error {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("drive: invalid shard name %q", name)
	}
	return nil
}

// Create implements Drive.
func (d *Dir) Create(ctx context.Context, name string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(d.Path(name), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("drive %d: %w", d.index, err)
	}
	return f, nil
}

// Open implements Drive.
func (d *Dir) Open(ctx context.Context, name string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	f, err := os.Open(d.Path(name))
	if err != nil {
		return nil, fmt.Errorf("drive %d: %w", d.index, err)
	}
	return f, nil
}

// Remove implements Drive.
func (d *Dir) Remove(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	err := os.Remove(d.Path(name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("drive %d: %w", d.index, err)
	}
	return nil
}

// Staged is a shard file being rebuilt in tmp/: Commit fsyncs it and
// renames it over the shard, Abort removes it.
type Staged struct {
	*os.File
	final string
}

// Stage implements Drive.
func (d *Dir) Stage(ctx context.Context, name string) (*Staged, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	tmpDir := filepath.Join(d.root, "tmp")
	final := d.Path(name)
	for _, dir := range []string{tmpDir, filepath.Dir(final)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("drive %d: %w", d.index, err)
		}
	}
	f, err := os.CreateTemp(tmpDir, name+".*")
	if err != nil {
		return nil, fmt.Errorf("drive %d: %w", d.index, err)
	}
	return &Staged{File: f, final: final}, nil
}

// Commit makes the staged file the shard, durably.
func (st *Staged) Commit() error {
	defer func() { _ = os.Remove(st.Name()) }()
	if err := st.Sync(); err != nil {
		_ = st.Close()
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	if err := os.Rename(st.Name(), st.final); err != nil {
		return err
	}
	return syncDir(filepath.Dir(st.final))
}

// Abort drops the staged file.
func (st *Staged) Abort() {
	_ = st.Close()
	_ = os.Remove(st.Name())
}

// Walk implements Drive. Files in a fan-out directory that are not shard
// names (no leading fan-out prefix) are reported too, so fsck sees them.
func (d *Dir) Walk(ctx context.Context, fn func(name string) error) error {
	top := filepath.Join(d.root, "data")
	fans, err := os.ReadDir(top)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("drive %d: %w", d.index, err)
	}
	for _, fan := range fans {
		if !fan.IsDir() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := os.ReadDir(filepath.Join(top, fan.Name()))
		if err != nil {
			return fmt.Errorf("drive %d: %w", d.index, err)
		}
		for _, e := range ents {
			if e.Type().IsRegular() {
				if err := fn(e.Name()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Sync implements Drive with syncfs(2).
func (d *Dir) Sync(ctx context.Context) error {
	if err := syncfs(d.root); err != nil {
		return fmt.Errorf("drive %d: %w", d.index, err)
	}
	return nil
}

// syncfs flushes the filesystem holding path.
func syncfs(path string) error {
	return onFile(path, "syncfs", unix.Syncfs)
}

// datasync fdatasyncs the file at path.
func datasync(path string) error {
	return onFile(path, "fdatasync", unix.Fdatasync)
}

// onFile opens path read-only and runs the call named what on it.
func onFile(path, what string, call func(fd int) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if err := call(int(f.Fd())); err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	return nil
}

// SyncFiles implements Drive: fdatasync of each named shard file, then
// fsync of each directory holding one. Unlike Sync it does not write the
// filesystem's other dirty data (a staging file the mount writes beside
// the drive, another program's files), which syncfs would, at the cost
// of one device flush per file and directory.
func (d *Dir) SyncFiles(ctx context.Context, names []string) error {
	dirs := map[string]bool{}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := checkName(name); err != nil {
			return err
		}
		p := d.Path(name)
		if err := datasync(p); err != nil {
			return fmt.Errorf("drive %d: %w", d.index, err)
		}
		dirs[filepath.Dir(p)] = true
	}
	for dir := range dirs {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("drive %d: %w", d.index, err)
		}
	}
	return nil
}

// SyncFilesAll runs SyncFiles on every drive i with names[i] to sync, in
// parallel, and returns the per-drive errors (nil entries for success
// and for drives with nothing to sync).
func SyncFilesAll(ctx context.Context, drives []Drive, names [][]string) []error {
	errs := make([]error, len(drives))
	var wg sync.WaitGroup
	for i, d := range drives {
		if d == nil || i >= len(names) || len(names[i]) == 0 {
			continue
		}
		wg.Go(func() { errs[i] = d.SyncFiles(ctx, names[i]) })
	}
	wg.Wait()
	return errs
}

// SyncAll flushes every distinct filesystem among drives once, in parallel,
// and returns the per-drive errors (nil entries for success). A drive
// sharing a filesystem with a synced one shares its result.
func SyncAll(ctx context.Context, drives []Drive) []error {
	errs := make([]error, len(drives))
	byDev := map[uint64][]int{}
	var order []uint64
	for i, d := range drives {
		if d == nil {
			continue
		}
		if _, ok := byDev[d.Dev()]; !ok {
			order = append(order, d.Dev())
		}
		byDev[d.Dev()] = append(byDev[d.Dev()], i)
	}
	done := make(chan struct{}, len(order))
	for _, dev := range order {
		idx := byDev[dev]
		go func() {
			defer func() { done <- struct{}{} }()
			// Sync through the first drive whose directory still exists.
			var err error
			for _, i := range idx {
				if err = drives[i].Sync(ctx); err == nil {
					break
				}
			}
			for _, i := range idx {
				errs[i] = err
			}
		}()
	}
	for range order {
		<-done
	}
	return errs
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
