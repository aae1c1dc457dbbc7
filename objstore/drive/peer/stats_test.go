package peer

import (
	"errors"
	"io/fs"
	"testing"
	"time"
)

// TestStats: a link's counters follow its exchanges: the bytes of a
// shard written and read back, a refusal (an absent file), and a peer
// gone (unreachable, then down for the cooldown).
func TestStats(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t, 2*time.Second)
	d := f.drive
	if st := d.Stats(); st != (Stats{}) {
		t.Fatalf("a new drive's stats: %+v", st)
	}
	w, err := d.Create(ctx, "0a0b")
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 3000)
	if _, err := w.WriteAt(body, 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := d.Open(ctx, "0a0b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(make([]byte, 1000), 0); err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	if _, err := d.Open(ctx, "0c0d"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of an absent shard: %v", err)
	}
	st := d.Stats()
	if st.BytesSent != 3000 || st.BytesReceived != 1000 || st.Requests < 4 || st.Refused != 1 || st.Unreachable != 0 || st.Down {
		t.Fatalf("after a write, a read and a refusal: %+v", st)
	}
	f.http.Close()
	if err := d.Sync(ctx); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("sync with the peer gone: %v", err)
	}
	_ = d.Sync(ctx) // in the cooldown
	st = d.Stats()
	if st.Unreachable != 2 || !st.Down {
		t.Fatalf("with the peer gone: %+v, want 2 unreachable and down", st)
	}
}
