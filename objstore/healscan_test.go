package objstore

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/faultdrive"
)

// TestHealScan: writes made while a drive is out (every call fails, as a
// node that is down) commit on the others; the heal leader notes the
// drive out, and once it answers again heals the store whole without a
// read asking for it. Then two other drives fail: every object still
// reads, which needs the shards the heal restored.
func TestHealScan(t *testing.T) {
	ctx := context.Background()
	fds := make([]*faultdrive.Drive, 4)
	s, _ := newTestStore(t, 4, 2, func(o *Options) {
		dir := o.Dir
		o.PackMaxSize = 0 // small objects packed, large ones in shard files
		o.NoBackground = false
		o.HealProbe = 20 * time.Millisecond
		o.OpenDrive = func(ctx context.Context, set string, i int) (drive.Drive, bool, error) {
			d, created, err := drive.OpenDir(filepath.Join(dir, "drives", fmt.Sprintf("d%d", i)), set, i)
			if err != nil {
				return nil, false, err
			}
			if fds[i] == nil {
				fds[i] = faultdrive.New(d, faultdrive.Config{})
			}
			return fds[i], created, nil
		}
	})
	mustBucket(t, s, "bkt")
	out := []faultdrive.Rule{{Err: syscall.EIO}}
	fds[3].SetRules(out)
	waitFor(t, "the heal record", func() bool {
		_, pending, err := s.HealPending(ctx)
		return err == nil && pending
	})
	want := map[string][]byte{}
	for i := range 6 {
		n := 2000 + i
		if i%2 == 1 {
			n = 300<<10 + i
		}
		key := fmt.Sprintf("k%d", i)
		want[key] = randBytes(n, uint64(i))
		mustPut(t, s, "bkt", key, want[key])
	}
	fds[3].SetRules(nil)
	waitFor(t, "the heal pass", func() bool {
		_, pending, err := s.HealPending(ctx)
		return err == nil && !pending
	})
	fds[0].SetRules(out)
	fds[1].SetRules(out)
	for key, body := range want {
		got, err := readAllErr(ctx, s, "bkt", key)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%s after the heal, with drives 0 and 1 out: %v", key, err)
		}
	}
	fds[0].SetRules(nil)
	fds[1].SetRules(nil)
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
