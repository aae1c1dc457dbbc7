package drive

import (
	"context"
	"errors"
	"io"
	"sync"
)

// ErrForeign means the directory holds a drive of another set or index.
var ErrForeign = errors.New("drive: directory belongs to another drive set or slot")

// ErrInvalidName means a shard name is empty, ".", ".." or holds a path
// separator. Every method taking a name refuses such names with it.
var ErrInvalidName = errors.New("drive: invalid shard name")

// Drive is one drive of a set: shard files named by data id, pack segments
// named by number, and the flushes that make them durable. It hands out
// small handles, never paths or *os.File; what only a local directory can
// do (paths, O_DIRECT, syncfs per filesystem) is behind Local.
//
// Absence: Open, and OpenPack without create, return an error wrapping
// fs.ErrNotExist for a file that is not there; Remove and RemovePack of an
// absent file succeed; SyncFiles and SyncPacks of an absent file return an
// error wrapping fs.ErrNotExist. A name that is empty, ".", ".." or holds
// a path separator is refused with ErrInvalidName by every method.
//
// Durability: nothing is durable on return of a write. Bytes written
// through a handle, and the file's name, are durable once a flush covering
// the file returns nil after the write returned (after Close, for a
// ShardWriter, which may hold bytes back): SyncFiles of the shard's name,
// SyncPacks of the segment, or Sync, which covers every file of the drive.
// Until then a crash may lose any part of them, and a file created since
// the last flush may vanish. Remove and RemovePack are durable after the
// next Sync; until then a crash may bring the file back, so callers must
// treat a file that reappears as an orphan. StagedFile.Commit is durable
// on its own return.
//
// Concurrency: a Drive is safe for concurrent use, as are ShardReader,
// PackFile and their ReadAt/WriteAt calls on disjoint ranges (concurrent
// writes to overlapping ranges leave either's bytes). ShardWriter and
// StagedFile are used by one goroutine at a time. Walk and Packs running
// beside creates and removes may or may not report those files.
type Drive interface {
	// Index is the drive's slot in the set (shard i lives on drive i).
	Index() int
	// String describes the drive for messages and reports (a local
	// drive's directory).
	String() string

	// Create makes (or truncates) the shard file for name, ready for
	// WriteAt. Its bytes are complete once Close returns nil.
	Create(ctx context.Context, name string) (ShardWriter, error)
	// Open opens the shard file for reading; fs.ErrNotExist when absent.
	Open(ctx context.Context, name string) (ShardReader, error)
	// Remove deletes the shard file; absent is not an error. Durable
	// after the next Sync.
	Remove(ctx context.Context, name string) error
	// Stage starts a replacement for the shard file that Commit puts in
	// its place atomically and durably, so a crash leaves the old or the
	// new (heal uses it). The old file is readable until Commit.
	Stage(ctx context.Context, name string) (StagedFile, error)
	// Walk calls fn for every shard file on the drive, in no set order;
	// an error from fn ends the walk and is returned.
	Walk(ctx context.Context, fn func(name string) error) error

	// OpenPack opens pack segment seg for reading and writing, creating
	// it empty when absent and create is set (fs.ErrNotExist when absent
	// otherwise). Opening never truncates.
	OpenPack(ctx context.Context, seg uint64, create bool) (PackFile, error)
	// RemovePack deletes a pack segment; absent is not an error. Durable
	// after the next Sync.
	RemovePack(ctx context.Context, seg uint64) error
	// Packs lists the pack segments on the drive, in no set order.
	Packs(ctx context.Context) ([]uint64, error)

	// Sync makes everything done to the drive before the call durable:
	// every write that returned, creates, removes and renames.
	Sync(ctx context.Context) error
	// SyncFiles makes the named shard files durable, content and name,
	// leaving the rest alone. It stops at the first error; an absent name
	// is fs.ErrNotExist.
	SyncFiles(ctx context.Context, names []string) error
	// SyncPacks makes the given pack segments durable, content and name.
	// It stops at the first error; an absent segment is fs.ErrNotExist.
	SyncPacks(ctx context.Context, segs []uint64) error
}

// ShardReader reads one shard file. ReadAt follows io.ReaderAt: io.EOF
// at the end of the file.
type ShardReader interface {
	io.ReaderAt
	io.Closer
}

// ShardWriter is a shard file being written. Close finishes it (an error
// means the shard is incomplete); Abort closes it without finishing, for
// a file about to be removed. One of them must be called.
type ShardWriter interface {
	io.WriterAt
	Close() error
	Abort()
}

// PackFile is an open pack segment: records are appended at offsets the
// caller chooses and read back by offset. Size is the file's length.
type PackFile interface {
	io.ReaderAt
	io.WriterAt
	Size() (int64, error)
	Close() error
}

// StagedFile is a replacement shard file being written: Commit puts it in
// place of the shard durably (the shard holds it once Commit returns nil),
// Abort drops it. One of them must be called.
type StagedFile interface {
	io.WriterAt
	Commit() error
	Abort()
}

// Local is what a drive on a local directory offers besides Drive: paths
// for reports and tools, direct I/O for large shard files, and the device
// id that lets SyncAll flush each filesystem once. The store asks for it
// with a type assertion and keeps to Drive when it is absent. Open of a
// Local drive returns an *os.File, which lets reads use preadv(2).
type Local interface {
	Drive
	// Root is the drive directory.
	Root() string
	// Path is the shard file's path.
	Path(name string) string
	// PackPath is the pack segment's path.
	PackPath(seg uint64) string
	// Dev identifies the filesystem holding the drive.
	Dev() uint64
	// CreateShard is Create for a shard file written front to back: large
	// appends bypass the page cache (see ShardFile).
	CreateShard(ctx context.Context, name string) (*ShardFile, error)
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

// SyncAll runs Sync on every drive in parallel and returns the per-drive
// errors (nil entries for success). Local drives sharing a filesystem
// (Dev) sync it once, through the first of them whose directory still
// exists, and share its result.
func SyncAll(ctx context.Context, drives []Drive) []error {
	errs := make([]error, len(drives))
	var groups [][]int
	byDev := map[uint64]int{} // Dev -> index in groups
	for i, d := range drives {
		if d == nil {
			continue
		}
		l, ok := d.(Local)
		if !ok {
			groups = append(groups, []int{i})
			continue
		}
		g, seen := byDev[l.Dev()]
		if !seen {
			g = len(groups)
			byDev[l.Dev()] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	var wg sync.WaitGroup
	for _, idx := range groups {
		wg.Go(func() {
			var err error
			for _, i := range idx {
				if err = drives[i].Sync(ctx); err == nil {
					break
				}
			}
			for _, i := range idx {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	return errs
}
