package fs

import (
	"slices"
	"testing"
	"time"
)

// TestStagePoolReserve: the pool makes a reserve in the background, a get
// takes from it (refilling), a released file comes back empty, and drain
// closes what is kept and stops the refill.
func TestStagePoolReserve(t *testing.T) {
	p := &stagePool{dir: t.TempDir()}
	p.start()
	free := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.free)
	}
	deadline := time.Now().Add(10 * time.Second)
	for free() < stageReserve {
		if time.Now().After(deadline) {
			t.Fatalf("reserve: %d of %d files after 10 s", free(), stageReserve)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var got []*staged
	for range stageReserve {
		s, err := p.get()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.f.Write([]byte("data")); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	for free() < stageReserve/2 { // the gets started a refill
		if time.Now().After(deadline) {
			t.Fatalf("no refill: %d free", free())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, s := range got {
		s.release()
	}
	s, err := p.get()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := s.f.Stat(); err != nil || fi.Size() != 0 {
		t.Fatalf("a reused staging file is not empty: %v %v", fi.Size(), err)
	}
	s.release()
	p.drain()
	for { // a refill running at drain stops at its next file
		p.mu.Lock()
		filling, n := p.filling, len(p.free)
		p.mu.Unlock()
		if !filling {
			if n != 0 {
				t.Fatalf("%d files kept after drain", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("refill still running after drain")
		}
		time.Sleep(time.Millisecond)
	}
	p.mu.Lock()
	p.refillLocked() // closed: starts nothing
	filling := p.filling
	p.mu.Unlock()
	if filling {
		t.Fatal("refill after drain")
	}
}

// TestStagePoolLargeNotKept: a released staging file that held more than
// stageReuseMax is closed, not kept for reuse; a small one is kept.
func TestStagePoolLargeNotKept(t *testing.T) {
	p := &stagePool{dir: t.TempDir()}
	t.Cleanup(p.drain)
	for _, tc := range []struct {
		name string
		size int64
		kept bool
	}{
		{"small", 4 << 10, true},
		{"at the limit", stageReuseMax, true},
		{"large", stageReuseMax + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := p.get()
			if err != nil {
				t.Fatal(err)
			}
			if err := s.f.Truncate(tc.size); err != nil {
				t.Fatal(err)
			}
			f := s.f
			s.release()
			p.mu.Lock() // a refill the get started may add files too
			kept := slices.Contains(p.free, f)
			p.mu.Unlock()
			if kept != tc.kept {
				t.Errorf("a released file of %d bytes kept = %v, want %v", tc.size, kept, tc.kept)
			}
		})
	}
}
