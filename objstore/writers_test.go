package objstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// TestSeveralWriters runs two stores on one index and one set of drives,
// as two nodes of a cluster do, both writing: small objects go to pack
// segments of each writer's own, and a writer that restarts in the middle
// of the other's large put sweeps only its own orphans, so the put
// commits whole. With one writer id for both (the control case) the
// segments collide or the sweep takes the other's shards: the test can
// fail.
func TestSeveralWriters(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wa, wb uint16
		intact bool
	}{
		{"distinct writer ids", 1, 2, true},
		{"one writer id (control)", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := meta.NewMem(meta.Limits{MaxWrites: 128, MaxBytes: 1536 << 10})
			opt := Options{Dir: t.TempDir(), DriveCount: 3, Parity: 1, BlockSize: 64 << 10, NoBackground: true, ReaderGrace: time.Minute}
			oa, ob := opt, opt
			oa.WriterID, ob.WriterID = tc.wa, tc.wb
			a := openOn(t, db, oa)
			b := openOn(t, db, ob)
			mustBucket(t, a, "bkt")
			want := map[string][]byte{}
			for i := range 20 {
				s, who := a, "a"
				if i%2 == 1 {
					s, who = b, "b"
				}
				key := fmt.Sprintf("small/%s%02d", who, i)
				want[key] = randBytes(3000+i, uint64(i))
				mustPut(t, s, "bkt", key, want[key])
			}
			// A large put of a in flight while b restarts.
			big := randBytes(600<<10, 99)
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				_, err := a.Put(ctx, "bkt", "big", pr, int64(len(big)), PutOptions{})
				done <- err
			}()
			if _, err := pw.Write(big[:300<<10]); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			b = openOn(t, db, ob) // sweeps at Open
			if _, err := pw.Write(big[300<<10:]); err != nil {
				t.Fatal(err)
			}
			_ = pw.Close()
			if err := <-done; err != nil {
				t.Fatalf("large put: %v", err)
			}
			want["big"] = big
			var damaged []string
			for key, body := range want {
				for _, s := range []*Store{a, b} {
					got, err := readAllErr(ctx, s, "bkt", key)
					if err != nil || !bytes.Equal(got, body) {
						damaged = append(damaged, fmt.Sprintf("%s (%v)", key, err))
					}
				}
			}
			switch {
			case tc.intact && len(damaged) > 0:
				t.Fatalf("objects damaged by the other writer: %v", damaged)
			case !tc.intact && len(damaged) == 0:
				t.Fatal("one writer id for two writers damaged nothing: the test cannot tell")
			case !tc.intact:
				return
			}
			for _, s := range []*Store{a, b} {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			fo := opt
			fo.Index = db.Open()
			fo.Parity = -1
			rep, err := Fsck(ctx, fo, nil)
			if err != nil || !rep.Clean() {
				t.Fatalf("fsck: %+v, %v", rep, err)
			}
		})
	}
}

// readAllErr reads an object whole, returning the error instead of
// failing the test.
func readAllErr(ctx context.Context, s *Store, bucket, key string) ([]byte, error) {
	r, err := s.Open(ctx, bucket, key, GetOptions{})
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	return io.ReadAll(r)
}

// TestWriterTags checks where a writer's id goes: the last two bytes of
// its data ids and the top 16 bits of its segment numbers, which start
// at the Unix time; a single writer owns everything.
func TestWriterTags(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		writer    uint16
		firstSeg  uint64
		ownsOther bool
	}{
		{0, 1, true},
		{3, 3<<48 | 1_800_000_000, false},
	} {
		s := &Store{opt: Options{WriterID: tc.writer}}
		id := s.newDataID()
		if !s.ownsData(id) {
			t.Errorf("writer %d: does not own its own data id %s", tc.writer, id)
		}
		if tc.writer != 0 && (id[14] != 0 || id[15] != byte(tc.writer)) {
			t.Errorf("writer %d: data id %s does not end with it", tc.writer, id)
		}
		if got := s.firstSeg(now); got != tc.firstSeg {
			t.Errorf("writer %d: first segment %x, want %x", tc.writer, got, tc.firstSeg)
		}
		if !s.ownsSeg(s.firstSeg(now)) {
			t.Errorf("writer %d: does not own its first segment", tc.writer)
		}
		other := &Store{opt: Options{WriterID: 7}}
		if got := s.ownsSeg(other.firstSeg(now)) && s.ownsData(other.newDataID()); got != tc.ownsOther {
			t.Errorf("writer %d: owns writer 7's segment and data: %v, want %v", tc.writer, got, tc.ownsOther)
		}
	}
}
