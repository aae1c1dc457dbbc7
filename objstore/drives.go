package objstore

import (
	"context"
	"fmt"

	"github.com/cairnstore/cairn/objstore/drive"
)

// The store speaks drive.Drive. The local fast paths (direct I/O for large
// shard files, one syncfs per filesystem, paths in reports, statfs) ask
// for drive.Local and fall back to the portable calls without it.

// createShard creates a shard file written front to back: with direct I/O
// on a local drive (drive.ShardFile), through the drive's own writer
// otherwise.
func createShard(ctx context.Context, d drive.Drive, name string) (drive.ShardWriter, error) {
	if l, ok := d.(drive.Local); ok {
		return l.CreateShard(ctx, name)
	}
	return d.Create(ctx, name)
}

// shardDesc names data name's shard file on drive i for reports: its path
// on a local drive, the drive's description and the name otherwise.
func (s *Store) shardDesc(i int, name string) string {
	d := s.drives[i]
	if l, ok := d.(drive.Local); ok {
		return l.Path(name)
	}
	return fmt.Sprintf("%s:data/%s", d, name)
}

// packDesc names pack segment seg on drive i for reports, like shardDesc.
func (s *Store) packDesc(i int, seg uint64) string {
	d := s.drives[i]
	if l, ok := d.(drive.Local); ok {
		return l.PackPath(seg)
	}
	return fmt.Sprintf("%s:packs/%s", d, drive.PackName(seg))
}

// allLocal reports whether every drive is a local directory, where the
// group commit's choice between syncfs and per-file flushes applies.
func allLocal(drives []drive.Drive) bool {
	for _, d := range drives {
		if _, ok := d.(drive.Local); !ok {
			return false
		}
	}
	return true
}
