package iceberg

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// countingKeys is a real catalog's TokenKeyStore that counts its key
// reads and can hold them until released.
type countingKeys struct {
	TokenKeyStore
	loads   atomic.Int64
	hold    atomic.Pointer[chan struct{}] // non-nil: reads wait for it to close
	entered chan struct{}                 // a held read has started
}

func (c *countingKeys) TokenKeys(ctx context.Context) (catalog.TokenKeys, error) {
	c.loads.Add(1)
	if h := c.hold.Load(); h != nil {
		c.entered <- struct{}{}
		<-*h
	}
	return c.TokenKeyStore.TokenKeys(ctx)
}

func tokenKeyService(t *testing.T) *catalog.Service {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 1, Parity: -1, NoBackground: true})
	b, err := objectbacked.New(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := catalog.New(st, b, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// forgedToken is a token naming key kid with a MAC made of nothing.
func forgedToken(kid int, exp time.Time) string {
	raw, _ := json.Marshal(claims{Principal: Principal{AccessKey: "mallory"}, Key: kid, Expires: exp.Unix()})
	return base64.RawURLEncoding.EncodeToString(raw) + ".bm90LWEtbWFj"
}

// TestForgedKidReloads: tokens naming a key newer than the current one,
// which anyone can send, force at most one store read per
// forcedReloadGap; a real rotation through another server on the store is
// still picked up from a token of the new key; and a read of the store
// does not hold up tokens checked against the cached keys.
func TestForgedKidReloads(t *testing.T) {
	ctx := context.Background()
	svc := tokenKeyService(t)
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	store := &countingKeys{TokenKeyStore: svc, entered: make(chan struct{})}
	tk, err := newTokens(store, time.Hour, clock)
	if err != nil {
		t.Fatal(err)
	}
	other, err := newTokens(svc, time.Hour, clock)
	if err != nil {
		t.Fatal(err)
	}
	valid, _, err := tk.issue(ctx, Principal{AccessKey: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := tk.verify(ctx, forgedToken(999+i, now.Add(time.Hour))); !errors.Is(err, errBadToken) {
			t.Fatalf("forged token %d: %v, want errBadToken", i, err)
		}
	}
	if n := store.loads.Load(); n > 2 {
		t.Fatalf("100 forged tokens made %d key reads, want at most 2 (the first load and one forced)", n)
	}

	// Another server rotates; its new token is refused inside the gap
	// (the forged tokens used the reload), taken once the gap has passed.
	if _, err := other.rotate(ctx); err != nil {
		t.Fatal(err)
	}
	rotated, _, err := other.issue(ctx, Principal{AccessKey: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tk.verify(ctx, rotated); !errors.Is(err, errBadToken) {
		t.Fatalf("a token of the new key inside the gap: %v, want errBadToken", err)
	}
	now = now.Add(forcedReloadGap)
	if p, err := tk.verify(ctx, rotated); err != nil || p.AccessKey != "bob" {
		t.Fatalf("a token of the rotated key after the gap: %+v %v", p, err)
	}
	if p, err := tk.verify(ctx, valid); err != nil || p.AccessKey != "alice" {
		t.Fatalf("a token of the previous key: %+v %v", p, err)
	}

	// A forced read held in the store: a token of a cached key is checked
	// and a new one issued meanwhile.
	now = now.Add(forcedReloadGap)
	release := make(chan struct{})
	store.hold.Store(&release)
	forced := make(chan error, 1)
	go func() {
		_, err := tk.verify(ctx, forgedToken(5000, now.Add(time.Hour)))
		forced <- err
	}()
	select {
	case <-store.entered:
	case err := <-forced:
		t.Fatalf("a forged token after the gap did not read the store: %v", err)
	}
	store.hold.Store(nil)
	done := make(chan error, 1)
	go func() {
		_, err := tk.verify(ctx, rotated)
		if err == nil {
			_, _, err = tk.issue(ctx, Principal{AccessKey: "carol"})
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("verify and issue during a key read: %v", err)
		}
	case <-time.After(30 * time.Second): // a deadlock, not a slow run
		t.Errorf("verify and issue waited for the store read of the keys")
	}
	close(release)
	if err := <-forced; !errors.Is(err, errBadToken) {
		t.Errorf("forged token with a held read: %v, want errBadToken", err)
	}
}

// TestStaleLoadKeepsRotation: a key read that started before a rotation
// finished does not replace the rotated keys.
func TestStaleLoadKeepsRotation(t *testing.T) {
	ctx := context.Background()
	svc := tokenKeyService(t)
	now := time.Unix(1_800_000_000, 0)
	store := &countingKeys{TokenKeyStore: svc, entered: make(chan struct{})}
	tk, err := newTokens(store, time.Hour, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tk.current(ctx); err != nil {
		t.Fatal(err)
	}
	stale, err := svc.TokenKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := tk.rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := tk.swap(stale); got.Current.ID != rotated.Current.ID {
		t.Fatalf("after a stale read: key %d cached, want the rotated key %d", got.Current.ID, rotated.Current.ID)
	}
}
