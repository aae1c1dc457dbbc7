package catalog_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
)

// TestTokenKeys: the first call creates a key that a reopened store
// returns again; each rotation makes a new current key and keeps the one
// it replaced as the previous one; concurrent first calls agree on one key.
func TestTokenKeys(t *testing.T) {
	ctx := context.Background()
	e := &env{t: t, dir: t.TempDir()}
	e.open()

	var wg sync.WaitGroup
	ids := make([][]byte, 4)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			k, err := e.svc.TokenKeys(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = k.Current.Secret
		}(i)
	}
	wg.Wait()
	for i := range ids {
		if len(ids[i]) != 32 || !bytes.Equal(ids[i], ids[0]) {
			t.Fatalf("concurrent first calls got different keys: %x", ids)
		}
	}
	first, err := e.svc.TokenKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.Current.ID != 1 || first.Previous != nil {
		t.Fatalf("first keys %+v, want id 1 and no previous", first)
	}

	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	e.open()
	again, err := e.svc.TokenKeys(ctx)
	if err != nil || !bytes.Equal(again.Current.Secret, first.Current.Secret) {
		t.Fatalf("after reopening: %+v, %v; want the first key", again, err)
	}

	r1, err := e.svc.RotateTokenKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Current.ID != 2 || bytes.Equal(r1.Current.Secret, first.Current.Secret) || r1.Previous == nil || !bytes.Equal(r1.Previous.Secret, first.Current.Secret) {
		t.Fatalf("first rotation %+v: want a new key 2 with key 1 as previous", r1)
	}
	r2, err := e.svc.RotateTokenKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Current.ID != 3 || r2.Previous == nil || r2.Previous.ID != 2 || !bytes.Equal(r2.Previous.Secret, r1.Current.Secret) {
		t.Fatalf("second rotation %+v: want key 3 with key 2 as previous", r2)
	}
	if got, err := e.svc.TokenKeys(ctx); err != nil || got.Current.ID != 3 || got.Previous.ID != 2 {
		t.Fatalf("keys after two rotations: %+v, %v", got, err)
	}
}
