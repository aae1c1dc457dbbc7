package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// lostAnswer is an index whose Updates commit but, while lose is set,
// answer that their outcome is unknown, as a replicated index does when
// its cluster goes away between the commit and the answer.
type lostAnswer struct {
	meta.Index
	lose atomic.Bool
}

func (l *lostAnswer) Update(ctx context.Context, fn func(meta.Tx) error) error {
	if err := l.Index.Update(ctx, fn); err != nil || !l.lose.Load() {
		return err
	}
	return fmt.Errorf("test index: answer lost: %w", meta.ErrOutcomeUnknown)
}

// TestCommitOutcomeUnknown: a put whose commit applied but answered
// meta.ErrOutcomeUnknown fails, yet its data stays: the version the
// index now holds reads back whole, and fsck finds nothing missing.
func TestCommitOutcomeUnknown(t *testing.T) {
	opt := Options{Dir: t.TempDir(), DriveCount: 3, Parity: 1, BlockSize: 64 << 10, MinPartSize: 1, PackMaxSize: -1, NoBackground: true}
	bolt, err := meta.OpenBolt(meta.BoltPath(opt.Dir), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	idx := &lostAnswer{Index: bolt}
	o := opt
	o.Index = idx
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.CreateBucket(ctx, "bkt", BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("kept"), 64<<10) // several blocks, its own shard files
	idx.lose.Store(true)
	_, err = s.Put(ctx, "bkt", "k", bytes.NewReader(body), int64(len(body)), PutOptions{})
	idx.lose.Store(false)
	if !errors.Is(err, meta.ErrOutcomeUnknown) {
		t.Fatalf("put: %v, want the unknown outcome", err)
	}
	r, err := s.Open(ctx, "bkt", "k", GetOptions{})
	if err != nil {
		t.Fatalf("the committed version: %v", err)
	}
	got, err := io.ReadAll(r)
	_ = r.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read back %d bytes (%v), want the %d put: its data was discarded", len(got), err, len(body))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opt.Parity = -1
	rep, err := Fsck(ctx, withBolt(t, opt), nil)
	if err != nil || !rep.Clean() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
}
