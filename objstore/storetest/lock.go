package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// testObjectLock: a locked version is refused removal on every engine,
// and gives way only as the lock says (objstore/lock.go).
func testObjectLock(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
	if err := s.CreateBucket(ctx, "locked", objstore.BucketOptions{ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	held := put(t, s, "locked", "k", []byte("held"), objstore.PutOptions{Attrs: objstore.Attrs{LegalHold: true}})
	gov, err := s.Put(ctx, "locked", "k", bytes.NewReader([]byte("gov")), 3, objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetRetention(ctx, "locked", "k", gov.VersionID,
		objstore.Retention{Mode: objstore.RetentionGovernance, Until: time.Now().Add(time.Hour)}, false); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"delete held", func() error { return del(ctx, s, held.VersionID, true) }, objstore.ErrObjectLocked},
		{"delete governed", func() error { return del(ctx, s, gov.VersionID, false) }, objstore.ErrObjectLocked},
		{"remove governance", func() error {
			_, err := s.SetRetention(ctx, "locked", "k", gov.VersionID, objstore.Retention{}, false)
			return err
		}, objstore.ErrObjectLocked},
		{"suspend versioning", func() error { return s.SetVersioning(ctx, "locked", objstore.VersioningSuspended) }, objstore.ErrInvalidBucketState},
		{"delete marker", func() error { _, err := s.Delete(ctx, "locked", "k", objstore.DeleteOptions{}); return err }, nil},
		{"delete governed with bypass", func() error { return del(ctx, s, gov.VersionID, true) }, nil},
		{"lift hold", func() error { _, err := s.SetLegalHold(ctx, "locked", "k", held.VersionID, false); return err }, nil},
		{"delete once free", func() error { return del(ctx, s, held.VersionID, false) }, nil},
	}
	for _, st := range steps {
		if err := st.do(); !errors.Is(err, st.want) || (st.want == nil) != (err == nil) {
			t.Fatalf("%s: %v, want %v", st.name, err, st.want)
		}
	}
	if _, err := s.Head(ctx, "locked", "k", objstore.GetOptions{VersionID: held.VersionID}); !errors.Is(err, objstore.ErrNoSuchVersion) {
		t.Fatalf("the freed version: %v", err)
	}
}

func del(ctx context.Context, s *objstore.Store, version string, bypass bool) error {
	_, err := s.Delete(ctx, "locked", "k", objstore.DeleteOptions{VersionID: version, BypassGovernance: bypass})
	return err
}
