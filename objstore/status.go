package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Status is a snapshot of the store for operators: its geometry, its
// drives and what each bucket holds. It is what `.cairn/store/status`
// shows, so its JSON form is part of the operator contract.
type Status struct {
	// DataShards and ParityShards are the k and m of new writes; older
	// data keeps the geometry it was written with.
	DataShards   int `json:"data_shards"`
	ParityShards int `json:"parity_shards"`
	// BlockSize is the erasure block size of new writes, in bytes.
	BlockSize int           `json:"block_size"`
	Drives    []DriveStatus `json:"drives"`
	// BucketCount counts the buckets clients see (S3, the mount): the
	// entries of Buckets that are not System.
	BucketCount int            `json:"bucket_count"`
	Buckets     []BucketStatus `json:"buckets"`
	// ReadCache describes the block cache; nil when the store has none.
	ReadCache *ReadCacheStatus `json:"read_cache,omitempty"`
}

// ReadCacheStatus is the block cache's part of a Status.
type ReadCacheStatus struct {
	SizeBytes uint64 `json:"size_bytes"`
	UsedBytes uint64 `json:"used_bytes"`
	Hits      uint64 `json:"hits"`
	Misses    uint64 `json:"misses"`
	Admitted  uint64 `json:"admitted"`
	Evicted   uint64 `json:"evicted"`
}

// DriveStatus is one drive of a Status.
type DriveStatus struct {
	Index int `json:"index"`
	// Path is the drive directory (a drive that is not local: its
	// description, drive.Drive's String).
	Path string `json:"path"`
	// Online reports that the drive directory is present and readable
	// (not local: that it lists its pack segments).
	Online bool `json:"online"`
	// TotalBytes, FreeBytes and AvailableBytes describe the filesystem
	// holding the drive (statfs: blocks, free blocks, blocks available to
	// unprivileged users); zero when it could not be asked or the drive
	// is not local.
	TotalBytes     uint64 `json:"total_bytes"`
	FreeBytes      uint64 `json:"free_bytes"`
	AvailableBytes uint64 `json:"available_bytes"`
	// IOErrors counts the shard reads and writes on this drive that
	// failed since the server started (an absent shard file is not one);
	// ChecksumFailures the shard blocks and headers read from it that
	// failed verification (bitrot, a torn or foreign file).
	IOErrors         uint64 `json:"io_errors"`
	ChecksumFailures uint64 `json:"checksum_failures"`
	// Error says why the drive is offline or statfs failed.
	Error string `json:"error,omitempty"`
}

// BucketStatus is one bucket of a Status.
type BucketStatus struct {
	Name string `json:"name"`
	// System marks the server's own buckets (see EnsureSystemBucket),
	// which no client can address.
	System     bool   `json:"system,omitempty"`
	Versioning string `json:"versioning,omitempty"`
	// Objects counts current versions (delete markers are not objects);
	// Bytes sums their sizes. Noncurrent versions are not counted.
	Objects int64 `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// Shadowed counts the keys K a POSIX mount cannot show because another
	// key starts with K+"/": S3 allows "a/b" and "a/b/c" together, the
	// mount shows the directory "a/b" and hides the object. Such keys stay
	// reachable over S3.
	Shadowed int64 `json:"shadowed"`
}

// Status reports the store's geometry, the state of every drive and, from
// one index snapshot, the contents of every bucket (system buckets
// included, marked). It reads every current object's index entry, so it
// costs time in proportion to the number of objects.
func (s *Store) Status(ctx context.Context) (Status, error) {
	if err := s.checkOpen(); err != nil {
		return Status{}, err
	}
	k, m, bs := s.geometry()
	st := Status{DataShards: k, ParityShards: m, BlockSize: bs, Drives: []DriveStatus{}, Buckets: []BucketStatus{}}
	if cs, ok := s.CacheStats(); ok {
		st.ReadCache = &ReadCacheStatus{
			SizeBytes: uint64(cs.Slots) * uint64(cs.SlotSize), UsedBytes: uint64(cs.Used) * uint64(cs.SlotSize),
			Hits: cs.Hits, Misses: cs.Misses, Admitted: cs.Admitted, Evicted: cs.Evicted,
		}
	}
	drives, err := s.DriveStatuses(ctx)
	if err != nil {
		return Status{}, err
	}
	st.Drives = drives
	err = s.idx.View(ctx, func(tx meta.Tx) error {
		return meta.Scan(tx, meta.Buckets, nil, func(_, raw []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var b meta.Bucket
			if err := meta.Decode(raw, &b); err != nil {
				return err
			}
			bst, err := bucketStatus(ctx, tx, b.Name)
			if err != nil {
				return err
			}
			bst.System = IsSystemBucket(b.Name)
			bst.Versioning = b.Versioning
			if !bst.System {
				st.BucketCount++
			}
			st.Buckets = append(st.Buckets, bst)
			return nil
		})
	})
	if err != nil {
		return Status{}, fmt.Errorf("status: %w", err)
	}
	return st, nil
}

// bucketStatus walks the bucket's current objects in key order. A key K is
// shadowed when some key starts with K+"/"; such keys sort after K but not
// necessarily right after it (K+"-x" comes between K and K+"/x"), so a
// second cursor seeks to K+"/" for each key.
func bucketStatus(ctx context.Context, tx meta.Tx, bucket string) (BucketStatus, error) {
	bst := BucketStatus{Name: bucket}
	bp := meta.BucketPrefix(bucket)
	var child []byte
	err := meta.Scan(tx, meta.Objects, bp, func(k, v []byte) error {
		if bst.Objects%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var ver meta.Version
		if err := meta.Decode(v, &ver); err != nil {
			return err
		}
		bst.Objects++
		bst.Bytes += ver.Size
		child = append(append(child[:0], k...), '/')
		shadowed, err := meta.HasAny(tx, meta.Objects, child)
		if shadowed {
			bst.Shadowed++
		}
		return err
	})
	return bst, err
}

// FSStat is the space of the store as a filesystem sees it (statfs on the
// mount), in bytes of user data.
type FSStat struct {
	// TotalBytes, FreeBytes and AvailableBytes sum the filesystems holding
	// the online drives, each filesystem once however many drives share
	// it, scaled by k/(k+m) of new writes: the room for object bytes, not
	// for shards.
	TotalBytes     uint64 `json:"total_bytes"`
	FreeBytes      uint64 `json:"free_bytes"`
	AvailableBytes uint64 `json:"available_bytes"`
	// Files estimates the number of objects: the current versions of all
	// buckets, system ones included.
	Files uint64 `json:"files"`
}

// MinDriveAvail returns the least room (bytes available to the server)
// on any online drive: how much a write that puts a shard on every drive
// can count on. Drives that cannot be asked are left out; with none, it
// returns 0. It asks each drive's filesystem, so callers on a hot path
// keep its answer for a while.
func (s *Store) MinDriveAvail(ctx context.Context) (uint64, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	least, seen := uint64(0), false
	for _, d := range s.drives {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		l, ok := d.(drive.Local)
		if !ok {
			continue // no filesystem to ask
		}
		var sf unix.Statfs_t
		if err := unix.Statfs(l.Root(), &sf); err != nil {
			continue
		}
		if avail := sf.Bavail * statfsUnit(&sf); !seen || avail < least {
			least, seen = avail, true
		}
	}
	return least, nil
}

// StatFS reports the room for user data and the number of objects. Drives
// that cannot be asked are left out. Two drives are on the same
// filesystem when their directories have the same device id (st_dev);
// f_fsid is not used because some filesystems (tmpfs on older kernels)
// report zero for all of them.
func (s *Store) StatFS(ctx context.Context) (FSStat, error) {
	if err := s.checkOpen(); err != nil {
		return FSStat{}, err
	}
	var samples []fsSample
	for _, d := range s.drives {
		if err := ctx.Err(); err != nil {
			return FSStat{}, err
		}
		fsst, err := probeDrive(ctx, d)
		if err != nil {
			continue
		}
		samples = append(samples, fsst)
	}
	k, m, _ := s.geometry()
	out := usableSpace(samples, k, m)
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		return meta.Scan(tx, meta.Objects, nil, func(_, _ []byte) error {
			if out.Files%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			out.Files++
			return nil
		})
	})
	if err != nil {
		return FSStat{}, fmt.Errorf("statfs: %w", err)
	}
	return out, nil
}

// fsSample is what statfs and stat say about one drive's filesystem.
type fsSample struct {
	dev                uint64
	total, free, avail uint64
}

// errDriveUnreadable marks a drive directory that is absent or cannot be
// listed (as opposed to one whose statfs failed).
var errDriveUnreadable = errors.New("drive directory unreadable")

// errNotLocal marks a drive that answers but has no local filesystem to
// ask for its size.
var errNotLocal = errors.New("drive is not local")

// probeDrive checks that a local drive's directory is readable and asks
// its filesystem for its size. A drive that is not local (drive.Local) is
// asked to list its pack segments instead and, when it answers, reported
// as errNotLocal: online, with no size to report.
func probeDrive(ctx context.Context, d drive.Drive) (fsSample, error) {
	l, ok := d.(drive.Local)
	if !ok {
		if _, err := d.Packs(ctx); err != nil {
			return fsSample{}, fmt.Errorf("%w: %w", errDriveUnreadable, err)
		}
		return fsSample{}, errNotLocal
	}
	root := l.Root()
	f, err := os.Open(root)
	if err != nil {
		return fsSample{}, fmt.Errorf("%w: %w", errDriveUnreadable, err)
	}
	_, err = f.Readdirnames(1)
	_ = f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return fsSample{}, fmt.Errorf("%w: %w", errDriveUnreadable, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(root, &st); err != nil {
		return fsSample{}, fmt.Errorf("%w: stat %s: %w", errDriveUnreadable, root, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fsSample{}, fmt.Errorf("%w: %s is not a directory", errDriveUnreadable, root)
	}
	var sf unix.Statfs_t
	if err := unix.Statfs(root, &sf); err != nil {
		return fsSample{}, fmt.Errorf("statfs %s: %w", root, err)
	}
	bsize := statfsUnit(&sf)
	return fsSample{
		dev:   uint64(st.Dev),
		total: sf.Blocks * bsize,
		free:  sf.Bfree * bsize,
		avail: sf.Bavail * bsize,
	}, nil
}

// statfsUnit is the unit of statfs's block counts: the fragment size,
// or the block size where the filesystem reports none.
func statfsUnit(sf *unix.Statfs_t) uint64 {
	if sf.Frsize > 0 {
		return uint64(sf.Frsize)
	}
	return uint64(sf.Bsize)
}

// usableSpace sums the samples, each device once (the first sample of a
// device wins), and scales the sums by k/(k+m).
func usableSpace(samples []fsSample, k, m int) FSStat {
	var out FSStat
	seen := map[uint64]bool{}
	for _, sm := range samples {
		if seen[sm.dev] {
			continue
		}
		seen[sm.dev] = true
		out.TotalBytes = addSat(out.TotalBytes, sm.total)
		out.FreeBytes = addSat(out.FreeBytes, sm.free)
		out.AvailableBytes = addSat(out.AvailableBytes, sm.avail)
	}
	out.TotalBytes = scale(out.TotalBytes, k, m)
	out.FreeBytes = scale(out.FreeBytes, k, m)
	out.AvailableBytes = scale(out.AvailableBytes, k, m)
	return out
}

// scale returns n*k/(k+m) without overflowing.
func scale(n uint64, k, m int) uint64 {
	if k <= 0 || m < 0 {
		return 0
	}
	hi, lo := bits.Mul64(n, uint64(k))
	q, _ := bits.Div64(hi, lo, uint64(k+m)) // hi < k+m since k <= k+m
	return q
}

func addSat(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return ^uint64(0)
	}
	return s
}
