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
	"syscall"

	"golang.org/x/sys/unix"
)

// Dir is a Drive on a local directory; it implements Local.
type Dir struct {
	root   string
	index  int
	dev    uint64
	stages *stagePool // ShardFile staging buffers
}

var _ Local = (*Dir)(nil)

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

// String implements Drive: the directory.
func (d *Dir) String() string { return d.root }

// Root implements Local.
func (d *Dir) Root() string { return d.root }

// Dev implements Local.
func (d *Dir) Dev() uint64 { return d.dev }

// Path implements Local.
func (d *Dir) Path(name string) string {
	if len(name) < 2 {
		return filepath.Join(d.root, "data", "00", name)
	}
	return filepath.Join(d.root, "data", name[:2], name)
}

// CheckName returns ErrInvalidName (wrapped, with the name) for a name no
// Drive accepts, nil otherwise.
func CheckName(name string) error {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("%w %q", ErrInvalidName, name)
	}
	return nil
}

// create opens the shard file for name for writing, truncated.
func (d *Dir) create(ctx context.Context, name string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckName(name); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(d.Path(name), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("drive %d: %w", d.index, err)
	}
	return f, nil
}

// Create implements Drive: the file goes through the page cache (see
// CreateShard for direct I/O).
func (d *Dir) Create(ctx context.Context, name string) (ShardWriter, error) {
	f, err := d.create(ctx, name)
	if err != nil {
		return nil, err
	}
	return fileWriter{f}, nil
}

// fileWriter is a ShardWriter on a plain file.
type fileWriter struct{ *os.File }

func (w fileWriter) Abort() { _ = w.Close() }

// Open implements Drive; the reader is an *os.File.
func (d *Dir) Open(ctx context.Context, name string) (ShardReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckName(name); err != nil {
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
	if err := CheckName(name); err != nil {
		return err
	}
	err := os.Remove(d.Path(name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("drive %d: %w", d.index, err)
	}
	return nil
}

// staged is a shard file being rebuilt in tmp/: Commit fsyncs it,
// renames it over the shard and syncs the directory; Abort removes it.
type staged struct {
	*os.File
	final string
}

// Stage implements Drive with a file in tmp/.
func (d *Dir) Stage(ctx context.Context, name string) (StagedFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckName(name); err != nil {
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
	return &staged{File: f, final: final}, nil
}

func (st *staged) Commit() error {
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

func (st *staged) Abort() {
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

// Sync implements Drive with syncfs(2) of the drive's filesystem.
func (d *Dir) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := syncfs(d.root); err != nil {
		return fmt.Errorf("drive %d: %w", d.index, err)
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
		if err := CheckName(name); err != nil {
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
