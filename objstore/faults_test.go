package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/faultdrive"
)

// TestDriveFaults puts and reads through fault drives (4 drives, 2+2,
// write quorum 3): a fault on one or two drives costs nothing but
// redundancy, which heal restores; on more than the parity allows, the
// put fails with the drives' error and leaves nothing behind.
func TestDriveFaults(t *testing.T) {
	const small, large = 10 << 10, 300 << 10
	enospc := func(op faultdrive.Op) []faultdrive.Rule {
		return []faultdrive.Rule{{Op: op, Err: syscall.ENOSPC}}
	}
	tests := []struct {
		name    string
		size    int
		faults  map[int][]faultdrive.Rule // by drive
		readErr map[int][]faultdrive.Rule // set before the read back
		wantErr error                     // nil: the put succeeds
		healed  int                       // shards heal must rebuild
	}{
		{name: "ENOSPC on one drive, shard files", size: large, healed: 1, faults: map[int][]faultdrive.Rule{1: enospc(faultdrive.OpWrite)}},
		{name: "ENOSPC on one drive, packed", size: small, healed: 1, faults: map[int][]faultdrive.Rule{3: enospc(faultdrive.OpWrite)}},
		{name: "ENOSPC on two drives, shard files", size: large, wantErr: syscall.ENOSPC,
			faults: map[int][]faultdrive.Rule{0: enospc(faultdrive.OpWrite), 2: enospc(faultdrive.OpWrite)}},
		{name: "ENOSPC creating shard files on two drives", size: large, wantErr: syscall.ENOSPC,
			faults: map[int][]faultdrive.Rule{0: enospc(faultdrive.OpCreate), 1: enospc(faultdrive.OpCreate)}},
		{name: "short write on one drive, after a block", size: large, healed: 1,
			faults: map[int][]faultdrive.Rule{2: {{Op: faultdrive.OpWrite, After: 2, Short: true}}}},
		{name: "short pack write on one drive", size: small, healed: 1,
			faults: map[int][]faultdrive.Rule{0: {{Op: faultdrive.OpWrite, Short: true}}}},
		{name: "flush fails on two drives, shard files", size: large, wantErr: syscall.EIO,
			faults: map[int][]faultdrive.Rule{1: {{Op: faultdrive.OpSyncFiles, Err: syscall.EIO}}, 3: {{Op: faultdrive.OpSyncFiles, Err: syscall.EIO}}}},
		{name: "flush fails on two drives, packed", size: small, wantErr: syscall.ENOSPC,
			faults: map[int][]faultdrive.Rule{0: enospc(faultdrive.OpSyncPacks), 1: enospc(faultdrive.OpSyncPacks)}},
		{name: "flush fails on one drive", size: large,
			faults: map[int][]faultdrive.Rule{2: {{Op: faultdrive.OpSyncFiles, Err: syscall.EIO}}}},
		{name: "a slow drive", size: large,
			faults: map[int][]faultdrive.Rule{1: {{Op: faultdrive.OpWrite, Delay: time.Millisecond}}}},
		{name: "reads fail on two drives", size: large,
			readErr: map[int][]faultdrive.Rule{0: {{Op: faultdrive.OpRead, Err: syscall.EIO}}, 3: {{Op: faultdrive.OpOpen, Err: syscall.EIO}}}},
		{name: "reads fail on two drives, packed", size: small,
			readErr: map[int][]faultdrive.Rule{1: {{Op: faultdrive.OpRead, Err: syscall.EIO}}, 2: {{Op: faultdrive.OpOpenPack, Err: syscall.EIO}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			opt := Options{Dir: t.TempDir(), DriveCount: 4, Parity: 2, BlockSize: 64 << 10, NoBackground: true}
			fds := make([]*faultdrive.Drive, 4)
			faulty := opt
			faulty.OpenDrive = func(ctx context.Context, set string, i int) (drive.Drive, bool, error) {
				d, created, err := drive.OpenDir(filepath.Join(opt.Dir, "drives", fmt.Sprintf("d%d", i)), set, i)
				if err != nil {
					return nil, false, err
				}
				fds[i] = faultdrive.New(d, faultdrive.Config{})
				return fds[i], created, nil
			}
			s, err := Open(ctx, withBolt(t, faulty))
			if err != nil {
				t.Fatal(err)
			}
			mustBucket(t, s, "bkt")
			mustPut(t, s, "bkt", "before", randBytes(tt.size, 1))
			for i, rules := range tt.faults {
				fds[i].SetRules(rules)
			}
			want := randBytes(tt.size, 2)
			_, err = s.Put(ctx, "bkt", "k", bytes.NewReader(want), int64(len(want)), PutOptions{})
			for _, fd := range fds {
				fd.SetRules(nil)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("put: %v", err)
			case tt.wantErr != nil && (!errors.Is(err, ErrQuorumLost) || !errors.Is(err, tt.wantErr)):
				t.Fatalf("put: %v, want ErrQuorumLost carrying %v", err, tt.wantErr)
			case tt.wantErr != nil:
				if _, err := s.Head(ctx, "bkt", "k", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
					t.Errorf("head after the failed put: %v, want ErrNoSuchKey", err)
				}
			default:
				for i, rules := range tt.readErr {
					fds[i].SetRules(rules)
				}
				if got := readAll(t, s, "bkt", "k", GetOptions{}); !bytes.Equal(got, want) {
					t.Errorf("read back %d bytes, not the %d put", len(got), len(want))
				}
				for _, fd := range fds {
					fd.SetRules(nil)
				}
			}
			if got := readAll(t, s, "bkt", "before", GetOptions{}); !bytes.Equal(got, randBytes(tt.size, 1)) {
				t.Error("the object stored before reads back wrong")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// Heal restores the redundancy the faults cost (it heals
			// through the fault drives' portable paths), then fsck finds
			// nothing amiss.
			hrep, err := Heal(ctx, withBolt(t, faulty), nil)
			if err != nil || !hrep.OK() {
				t.Fatalf("heal: %+v %v", hrep, err)
			}
			if len(hrep.Healed) != tt.healed {
				t.Errorf("heal rebuilt %v, want %d shards", hrep.Healed, tt.healed)
			}
			opt.Parity = -1
			rep, err := Fsck(ctx, withBolt(t, opt), nil)
			if err != nil {
				t.Fatal(err)
			}
			// A failed put's shards are removed at once; a torn pack
			// record is dead space, not an orphan.
			if !rep.Clean() {
				t.Errorf("fsck after heal: %+v", rep)
			}
		})
	}
}
