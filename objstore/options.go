package objstore

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Options configures a Store. Only cmd/ fills it from flags and env.
type Options struct {
	// Index is the store's index; required. cmd/ opens the default, bbolt
	// at meta.BoltPath(Dir) (meta.OpenBolt); tests may give meta.NewMem.
	// Open takes it over: Store.Close closes it, and so does an Open (or
	// Fsck, Heal) that fails.
	Index meta.Index
	// Dir is the data directory: drives/d0..dN-1 (unless Drives is set)
	// and tmp/, and by default meta/ for the bbolt index.
	Dir string
	// Drives lists explicit drive directories. Empty means DriveCount
	// directories under Dir/drives.
	Drives []string
	// OpenDrive, when set, supplies the drive of slot index (0..n-1) of
	// drive set set, in place of drive.OpenDir on the Drives directories
	// or Dir/drives/dN: a drive of another kind, or a local one wrapped
	// (objstore/drive/faultdrive in tests). created reports a drive that
	// was missing or empty and was formatted, so its shards must be
	// healed. The count is DriveCount, len(Drives) or the index's. The
	// store does not close drives; they must outlive it.
	OpenDrive func(ctx context.Context, set string, index int) (d drive.Drive, created bool, err error)
	// DriveCount is the number of drives under Dir/drives when Drives is
	// empty. Zero means: the count recorded in the index, or 4 for a new
	// data directory.
	DriveCount int
	// Parity is the number of parity shards. Negative means the default for
	// the drive count (1 drive: 0; 2-3: 1; 4-5: 2; 6-7: 3; 8+: 4).
	Parity int
	// BlockSize is the erasure block size; zero means 1 MiB.
	BlockSize int
	// PackMaxSize is the largest object (size known up front) whose shards
	// go to pack segments instead of a shard file per drive; zero means
	// 128 KiB, negative turns packing off.
	PackMaxSize int64
	// PackSegmentSize is the size at which a new pack segment is started;
	// zero means 256 MiB.
	PackSegmentSize int64
	// MinPartSize is the smallest size of a multipart part that is not the
	// last one; zero means 5 MiB (the S3 rule).
	MinPartSize int64
	// MaxSegments bounds the segments and parts of a version an Append
	// makes (ErrTooManySegments past it); zero means the MaxSegments
	// constant, 10 000, S3's bound on an appended object's parts. Higher
	// values are refused.
	MaxSegments int
	// SegmentCompactMin is the segment count past which a version's small
	// segments are rewritten together by the segment compactor
	// (segcompact.go), and past which Open's scan queues the version for
	// it; zero means 256. Between 1 and MaxSegments.
	SegmentCompactMin int
	// ChunkSegments is the most segments one chunk record of a long
	// version's list holds (chunks.go): a version of more segments than
	// this keeps them in chunks, so that a patch rewrites only the chunks
	// it touches. Zero means 64; negative keeps every list flat. An index
	// that bounds its transactions (meta.Limits) keeps lists flat.
	ChunkSegments int
	// SegmentCompactDelay is how long the segment compactor lets notes
	// of versions to compact gather after the first, so that a burst of
	// writes to one file is compacted once, after it; zero means 1s.
	SegmentCompactDelay time.Duration
	// CleanerInterval is how often the cleaner frees unreferenced data when
	// nothing wakes it; zero means 30s.
	CleanerInterval time.Duration
	// LifecycleInterval is how often expired incomplete multipart uploads
	// are aborted; zero means 1h.
	LifecycleInterval time.Duration
	// ShownSize is the size the faces show for a version where it is not
	// the stored one (an encrypted object's plaintext is shorter than
	// its stream); lifecycle rules' size filters compare it, as S3 users
	// write them. Nil: the stored size.
	ShownSize func(ObjectInfo) int64
	// LifecycleDay is the length of a day for lifecycle rules (their
	// DaysAfterInitiation and Days); zero means 24h. Shorter days let
	// tests and rehearsals see rules act.
	LifecycleDay time.Duration
	// ReaderGrace is how long garbage waits before the cleaner frees it,
	// for readers in other processes that share the index and whose pins
	// this process cannot see; such readers lease what they read, in the
	// index, within ReaderGrace/4 (see lease.go). Zero, for an index only
	// this process opens (bbolt's file lock ensures it), frees garbage as
	// soon as no reader of this process pins it. The grace and the leases
	// protect readers only; writers are told apart by WriterID.
	ReaderGrace time.Duration
	// WriterID tells this process's writes from those of the others that
	// share its index and drives (the nodes of a cluster), each of which
	// must have its own, nonzero: its data ids and pack segment numbers
	// carry it, and it sweeps and compacts only its own (writers.go).
	// Zero, the default, is the sole writer of its store.
	WriterID uint16
	// HealProbe, when positive, is how often one process among those
	// sharing the index (the "heal" job's leader) probes every drive; once
	// a drive that could not be reached answers again, it heals the whole
	// store online (healscan.go). Zero leaves healing to the reads that
	// find a shard missing and to the offline Heal: a store whose drives
	// are all local disks of this host.
	HealProbe time.Duration
	// ReadCacheSize is the memory, in bytes, that keeps decoded blocks of
	// large objects read more than once (objstore/blockcache), so that hot
	// reads skip the shards; zero turns the cache off.
	ReadCacheSize int64
	// WriteBuffers is the memory, in bytes, that the erasure block
	// buffers all writes have handed to the drives may hold together
	// (one buffer is a block's k+m shards, about 2 MiB for 1 MiB blocks
	// on 2+2): a write with a full block waits while they are all taken,
	// so concurrent writes share them instead of each holding its own
	// pipeline. The one buffer each write is filling is its own, outside
	// the bound, so slow clients never stall the others. Zero means 64
	// MiB; negative means no bound.
	WriteBuffers int64
	// NoBackground disables the cleaner, healer and lifecycle goroutines
	// (offline tools and tests that drive them by hand).
	NoBackground bool
	// Logger receives the store's logs; the zero value discards them.
	Logger zerolog.Logger
}

// Progress reports the advance of a long offline run (fsck, heal).
type Progress struct {
	Phase string
	Done  int64
	Total int64
}

const (
	defaultBlockSize       = 1 << 20
	defaultMinPartSize     = 5 << 20
	defaultPackMaxSize     = 128 << 10
	defaultPackSegmentSize = 256 << 20
	defaultDriveCount      = 4
	defaultWriteBuffers    = 64 << 20

	defaultSegmentCompactMin   = 256
	defaultSegmentCompactDelay = time.Second
)

func (o Options) withDefaults() Options {
	if o.BlockSize == 0 {
		o.BlockSize = defaultBlockSize
	}
	if o.PackMaxSize == 0 {
		o.PackMaxSize = defaultPackMaxSize
	}
	if o.PackSegmentSize == 0 {
		o.PackSegmentSize = defaultPackSegmentSize
	}
	if o.MinPartSize == 0 {
		o.MinPartSize = defaultMinPartSize
	}
	if o.MaxSegments == 0 {
		o.MaxSegments = MaxSegments
	}
	if o.SegmentCompactMin == 0 {
		o.SegmentCompactMin = defaultSegmentCompactMin
	}
	if o.ChunkSegments == 0 {
		o.ChunkSegments = defaultChunkSegments
	}
	if o.SegmentCompactDelay == 0 {
		o.SegmentCompactDelay = defaultSegmentCompactDelay
	}
	if o.WriteBuffers == 0 {
		o.WriteBuffers = defaultWriteBuffers
	}
	if o.CleanerInterval == 0 {
		o.CleanerInterval = 30 * time.Second
	}
	if o.LifecycleInterval == 0 {
		o.LifecycleInterval = time.Hour
	}
	if o.LifecycleDay == 0 {
		o.LifecycleDay = 24 * time.Hour
	}
	return o
}

// Validate reports an options error before anything is opened. It does
// not ask for Index, which the caller opens once the options are valid.
func (o Options) Validate() error {
	if o.Dir == "" {
		return fmt.Errorf("%w: data directory is required", ErrInvalidArgument)
	}
	if o.DriveCount < 0 {
		return fmt.Errorf("%w: drive count %d", ErrInvalidArgument, o.DriveCount)
	}
	if len(o.Drives) > 0 && o.DriveCount > 0 && len(o.Drives) != o.DriveCount {
		return fmt.Errorf("%w: %d drive paths given with a drive count of %d", ErrInvalidArgument, len(o.Drives), o.DriveCount)
	}
	if n := len(o.Drives) + o.DriveCount; n > 256 {
		return fmt.Errorf("%w: at most 256 drives", ErrInvalidArgument)
	}
	if o.BlockSize < 0 || o.MinPartSize < 0 || o.ReadCacheSize < 0 {
		return fmt.Errorf("%w: negative size", ErrInvalidArgument)
	}
	if o.MaxSegments < 0 || o.MaxSegments > MaxSegments {
		return fmt.Errorf("%w: max segments %d: between 1 and %d (0 for %d)", ErrInvalidArgument, o.MaxSegments, MaxSegments, MaxSegments)
	}
	if o.SegmentCompactMin < 0 || o.SegmentCompactMin > MaxSegments {
		return fmt.Errorf("%w: segment compaction threshold %d: between 1 and %d (0 for %d)", ErrInvalidArgument, o.SegmentCompactMin, MaxSegments, defaultSegmentCompactMin)
	}
	if o.CleanerInterval < 0 || o.LifecycleInterval < 0 || o.LifecycleDay < 0 || o.ReaderGrace < 0 || o.SegmentCompactDelay < 0 || o.HealProbe < 0 {
		return fmt.Errorf("%w: negative interval", ErrInvalidArgument)
	}
	return nil
}

func (o Options) tmpDir() string { return filepath.Join(o.Dir, "tmp") }
