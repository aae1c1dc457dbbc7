package peer

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// driveCalls are one call of each kind on d, for the tests that expect
// them all to fail alike.
func driveCalls(ctx context.Context, d *Drive) []struct {
	name string
	fn   func() error
} {
	return []struct {
		name string
		fn   func() error
	}{
		{"Open", func() error { _, err := d.Open(ctx, "0a00"); return err }},
		{"Remove", func() error { return d.Remove(ctx, "0a00") }},
		{"Walk", func() error { return d.Walk(ctx, func(string) error { return nil }) }},
		{"Packs", func() error { _, err := d.Packs(ctx); return err }},
		{"OpenPack", func() error { _, err := d.OpenPack(ctx, 1, true); return err }},
		{"RemovePack", func() error { return d.RemovePack(ctx, 1) }},
		{"Sync", func() error { return d.Sync(ctx) }},
		{"SyncFiles", func() error { return d.SyncFiles(ctx, []string{"0a00"}) }},
		{"SyncPacks", func() error { return d.SyncPacks(ctx, []uint64{1}) }},
		{"Create", func() error {
			w, err := d.Create(ctx, "0a00")
			if err != nil {
				return err
			}
			_, werr := w.WriteAt(bytes.Repeat([]byte("z"), 16<<20), 0)
			return errors.Join(werr, w.Close())
		}},
		{"Stage", func() error {
			st, err := d.Stage(ctx, "0a00")
			if err != nil {
				return err
			}
			_, werr := st.WriteAt([]byte("z"), 0)
			return errors.Join(werr, st.Commit())
		}},
	}
}

// TestPeerDown checks that every call to a peer that went away fails
// with ErrUnreachable, promptly, handles opened before included.
func TestPeerDown(t *testing.T) {
	f := newFixture(t, 2*time.Second)
	d := f.drive
	ctx := t.Context()
	putShard(t, d, "0a00", []byte("shard"))
	r, err := d.Open(ctx, "0a00")
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.OpenPack(ctx, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	f.http.Close()

	calls := append(driveCalls(ctx, d), []struct {
		name string
		fn   func() error
	}{
		{"ReadAt", func() error { _, err := r.ReadAt(make([]byte, 5), 0); return err }},
		{"PackFile.ReadAt", func() error { _, err := p.ReadAt(make([]byte, 5), 0); return err }},
		{"PackFile.WriteAt", func() error { _, err := p.WriteAt([]byte("rec"), 0); return err }},
		{"PackFile.Size", func() error { _, err := p.Size(); return err }},
	}...)
	for _, c := range calls {
		start := time.Now()
		err := c.fn()
		if !errors.Is(err, ErrUnreachable) {
			t.Errorf("%s: %v, want ErrUnreachable", c.name, err)
		}
		if el := time.Since(start); el > time.Second {
			t.Errorf("%s took %v to fail", c.name, el)
		}
	}
}

// TestPeerStalled checks that a peer that accepts requests and never
// answers counts as unreachable after the timeout, and that a caller's
// cancelled context is reported as such instead.
func TestPeerStalled(t *testing.T) {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(release) })
	const timeout = 300 * time.Millisecond
	// No cooldown: each call tries the peer.
	d, err := New(Config{URL: hs.URL, Slot: testSlot, Secret: testSecret, Timeout: timeout, Cooldown: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.hc.CloseIdleConnections)
	// The calls run side by side, each waiting out the timeout.
	var wg sync.WaitGroup
	for _, c := range driveCalls(t.Context(), d) {
		wg.Go(func() {
			start := time.Now()
			err := c.fn()
			if !errors.Is(err, ErrUnreachable) {
				t.Errorf("%s: %v, want ErrUnreachable", c.name, err)
			}
			if el := time.Since(start); el > 10*timeout {
				t.Errorf("%s took %v to fail", c.name, el)
			}
		})
	}
	wg.Wait()

	ctx, cancel := context.WithTimeout(t.Context(), timeout/3)
	defer cancel()
	for _, c := range driveCalls(ctx, d) {
		wg.Go(func() {
			if err := c.fn(); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnreachable) {
				t.Errorf("%s with a short context: %v, want context.DeadlineExceeded alone", c.name, err)
			}
		})
	}
	wg.Wait()
}

// TestSlotNotServed checks that a slot the peer does not serve is
// ErrUnreachable (a failed drive), not an absent file.
func TestSlotNotServed(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	d, err := New(Config{URL: f.http.URL, Slot: testSlot + 1, Secret: testSecret, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range driveCalls(t.Context(), d) {
		var re *RemoteError
		err := c.fn()
		if !errors.Is(err, ErrUnreachable) || !errors.As(err, &re) || re.Code != codeNoDrive {
			t.Errorf("%s: %v, want ErrUnreachable with code %s", c.name, err, codeNoDrive)
		}
	}
}

// TestPeerCooldown checks that once a peer stalled past the timeout, the
// drive's calls fail at once for the cooldown without reaching it, and
// try it again after.
func TestPeerCooldown(t *testing.T) {
	var reached atomic.Int64
	stall := atomic.Bool{}
	stall.Store(true)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if stall.Load() {
			<-r.Context().Done()
		}
	}))
	t.Cleanup(hs.Close)
	const cooldown = 500 * time.Millisecond
	d, err := New(Config{URL: hs.URL, Slot: testSlot, Secret: testSecret, Timeout: 100 * time.Millisecond, Cooldown: cooldown})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.hc.CloseIdleConnections)
	if err := d.Sync(t.Context()); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("first call to a stalled peer: %v, want ErrUnreachable", err)
	}
	before := reached.Load()
	for _, c := range driveCalls(t.Context(), d) {
		if err := c.fn(); !errors.Is(err, ErrUnreachable) {
			t.Errorf("%s in the cooldown: %v, want ErrUnreachable", c.name, err)
		}
	}
	if n := reached.Load() - before; n != 0 {
		t.Errorf("%d calls reached the peer in the cooldown, want none", n)
	}
	stall.Store(false)
	time.Sleep(cooldown)
	if err := d.Sync(t.Context()); errors.Is(err, ErrUnreachable) {
		t.Errorf("call after the cooldown: %v", err)
	}
	if reached.Load() == before {
		t.Error("the call after the cooldown did not reach the peer")
	}
}
