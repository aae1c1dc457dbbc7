package objstore

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// lockBucket makes a bucket with object lock and one version of key k
// carrying a.
func lockBucket(t *testing.T, s *Store, name string, a Attrs) ObjectInfo {
	t.Helper()
	if err := s.CreateBucket(context.Background(), name, BucketOptions{ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	info, err := s.Put(context.Background(), name, "k", bytes.NewReader([]byte("data")), 4, PutOptions{Attrs: a})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestDeleteLockedVersion(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 1)
	future, past := time.Now().Add(24*time.Hour).UTC(), time.Now().Add(-time.Hour).UTC()
	gov := Retention{Mode: RetentionGovernance, Until: future}
	comp := Retention{Mode: RetentionCompliance, Until: future}
	for i, tc := range []struct {
		name    string
		attrs   Attrs
		bypass  bool
		wantErr error
	}{
		{"no lock", Attrs{}, false, nil},
		{"governance", Attrs{Retention: gov}, false, ErrObjectLocked},
		{"governance bypassed", Attrs{Retention: gov}, true, nil},
		{"compliance", Attrs{Retention: comp}, false, ErrObjectLocked},
		{"compliance is not bypassed", Attrs{Retention: comp}, true, ErrObjectLocked},
		{"legal hold", Attrs{LegalHold: true}, false, ErrObjectLocked},
		{"legal hold is not bypassed", Attrs{LegalHold: true, Retention: gov}, true, ErrObjectLocked},
		{"retention over", Attrs{Retention: Retention{Mode: RetentionCompliance, Until: past}}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := "lock" + string(rune('a'+i))
			v := lockBucket(t, s, b, tc.attrs)
			// A DELETE without version id only hides the version.
			dm, err := s.Delete(ctx, b, "k", DeleteOptions{})
			if err != nil || !dm.DeleteMarker {
				t.Fatalf("delete without version: %+v %v", dm, err)
			}
			_, err = s.Delete(ctx, b, "k", DeleteOptions{VersionID: v.VersionID, BypassGovernance: tc.bypass})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("delete version: %v, want %v", err, tc.wantErr)
			}
			_, err = s.Head(ctx, b, "k", GetOptions{VersionID: v.VersionID})
			if (err == nil) != (tc.wantErr != nil) {
				t.Fatalf("head of the version after delete: %v", err)
			}
			// Clean up so that the bucket could go.
			if tc.wantErr != nil {
				if _, err := s.SetLegalHold(ctx, b, "k", v.VersionID, false); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestRetentionChanges(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 1)
	now := time.Now().UTC()
	d1, d2 := now.Add(24*time.Hour), now.Add(48*time.Hour)
	gov := func(t time.Time) Retention { return Retention{Mode: RetentionGovernance, Until: t} }
	comp := func(t time.Time) Retention { return Retention{Mode: RetentionCompliance, Until: t} }
	for i, tc := range []struct {
		name      string
		cur, next Retention
		bypass    bool
		wantErr   error
	}{
		{"set on an unlocked version", Retention{}, gov(d1), false, nil},
		{"lengthen governance", gov(d1), gov(d2), false, nil},
		{"shorten governance", gov(d2), gov(d1), false, ErrObjectLocked},
		{"shorten governance bypassed", gov(d2), gov(d1), true, nil},
		{"remove governance", gov(d1), Retention{}, false, ErrObjectLocked},
		{"remove governance bypassed", gov(d1), Retention{}, true, nil},
		{"governance to compliance", gov(d1), comp(d1), false, ErrObjectLocked},
		{"governance to compliance bypassed", gov(d1), comp(d1), true, nil},
		{"lengthen compliance", comp(d1), comp(d2), false, nil},
		{"shorten compliance", comp(d2), comp(d1), true, ErrObjectLocked},
		{"remove compliance", comp(d1), Retention{}, true, ErrObjectLocked},
		{"compliance to governance", comp(d1), gov(d2), true, ErrObjectLocked},
		{"same compliance", comp(d1), comp(d1), false, nil},
		{"expired compliance removed", comp(now.Add(-time.Hour)), Retention{}, false, nil},
		{"mode without date", Retention{}, Retention{Mode: RetentionGovernance}, false, ErrInvalidArgument},
		{"unknown mode", Retention{}, Retention{Mode: "FOREVER", Until: d1}, false, ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := "ret" + string(rune('a'+i))
			v := lockBucket(t, s, b, Attrs{Retention: tc.cur})
			info, err := s.SetRetention(ctx, b, "k", v.VersionID, tc.next, tc.bypass)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("SetRetention: %v, want %v", err, tc.wantErr)
			}
			got, herr := s.Head(ctx, b, "k", GetOptions{VersionID: v.VersionID})
			if herr != nil {
				t.Fatal(herr)
			}
			want := tc.next
			if err != nil {
				want = tc.cur
			} else if info.Attrs.Retention.Mode != want.Mode || !info.Attrs.Retention.Until.Equal(want.Until) {
				t.Fatalf("SetRetention returned %+v, want %+v", info.Attrs.Retention, want)
			}
			if got.Attrs.Retention.Mode != want.Mode || !got.Attrs.Retention.Until.Equal(want.Until) {
				t.Fatalf("retention %+v, want %+v", got.Attrs.Retention, want)
			}
		})
	}
	// SetAttrs never bypasses: it cannot weaken a retention either.
	v := lockBucket(t, s, "viaattrs", Attrs{Retention: gov(d1)})
	_, err := s.SetAttrs(ctx, "viaattrs", "k", v.VersionID, func(_ ObjectInfo, a *Attrs) error {
		a.Retention = Retention{}
		return nil
	})
	if !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("SetAttrs removing governance: %v", err)
	}
}

func TestObjectLockBucketState(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 1)
	mustBucket(t, s, "plain")
	mustPut(t, s, "plain", "k", []byte("x"))
	steps := []struct {
		name    string
		do      func() error
		wantErr error
	}{
		{"retention without lock", func() error {
			_, err := s.SetRetention(ctx, "plain", "k", "", Retention{Mode: RetentionGovernance, Until: time.Now().Add(time.Hour)}, false)
			return err
		}, ErrInvalidBucketState},
		{"legal hold without lock", func() error { _, err := s.SetLegalHold(ctx, "plain", "k", "", true); return err }, ErrInvalidBucketState},
		{"lock unversioned", func() error { return s.SetObjectLock(ctx, "plain") }, ErrInvalidBucketState},
		{"suspend", func() error { return s.SetVersioning(ctx, "plain", VersioningSuspended) }, nil},
		{"lock suspended", func() error { return s.SetObjectLock(ctx, "plain") }, ErrInvalidBucketState},
		{"enable", func() error { return s.SetVersioning(ctx, "plain", VersioningEnabled) }, nil},
		{"lock enabled", func() error { return s.SetObjectLock(ctx, "plain") }, nil},
		{"lock again", func() error { return s.SetObjectLock(ctx, "plain") }, nil},
		{"suspend locked", func() error { return s.SetVersioning(ctx, "plain", VersioningSuspended) }, ErrInvalidBucketState},
		{"legal hold with lock", func() error { _, err := s.SetLegalHold(ctx, "plain", "k", "", true); return err }, nil},
		{"lift legal hold", func() error { _, err := s.SetLegalHold(ctx, "plain", "k", "", false); return err }, nil},
		{"no such bucket", func() error { return s.SetObjectLock(ctx, "nope") }, ErrNoSuchBucket},
	}
	for _, st := range steps {
		if err := st.do(); !errors.Is(err, st.wantErr) || (st.wantErr == nil) != (err == nil) {
			t.Fatalf("%s: %v, want %v", st.name, err, st.wantErr)
		}
	}
	b, err := s.HeadBucket(ctx, "plain")
	if err != nil || !b.ObjectLock || b.Versioning != VersioningEnabled {
		t.Fatalf("bucket %+v %v", b, err)
	}
}

// A locked version written to a bucket without versioning (only the write
// path can make one: SetAttrs refuses) is neither overwritten, deleted
// nor expired.
func TestLockedNullVersionStays(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 1)
	mustBucket(t, s, "plain")
	if _, err := s.Put(ctx, "plain", "logs/k", bytes.NewReader([]byte("held")), 4, PutOptions{Attrs: Attrs{LegalHold: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "plain", "logs/k", bytes.NewReader([]byte("new")), 3, PutOptions{}); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("overwrite of a held null version: %v", err)
	}
	if _, err := s.Delete(ctx, "plain", "logs/k", DeleteOptions{}); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("delete of a held null version: %v", err)
	}
	if err := s.SetLifecycle(ctx, "plain", []LifecycleRule{{ID: "x", Prefix: "logs/", Enabled: true, ExpirationDays: 1}}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := s.Watch(wctx, "plain", "")
	if n, err := s.ExpireObjects(ctx, time.Now().Add(48*time.Hour)); err != nil || n != 0 {
		t.Fatalf("expire: %d %v", n, err)
	}
	select { // notify is synchronous: an event would be queued by now
	case e := <-events:
		t.Fatalf("the lifecycle announced %+v for a key it did not expire", e)
	default:
	}
	if got := readAll(t, s, "plain", "logs/k", GetOptions{}); string(got) != "held" {
		t.Fatalf("read %q", got)
	}
}

// In a bucket with object lock the lifecycle's expiration only adds a
// delete marker: the retained version stays, and a DELETE of it by id
// still fails.
func TestLifecycleKeepsLockedVersions(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 1)
	v := lockBucket(t, s, "locked", Attrs{Retention: Retention{Mode: RetentionCompliance, Until: time.Now().Add(24 * time.Hour)}})
	if err := s.SetLifecycle(ctx, "locked", []LifecycleRule{{ID: "x", Enabled: true, ExpirationDays: 1}}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ExpireObjects(ctx, time.Now().Add(48*time.Hour)); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	if got := readAll(t, s, "locked", "k", GetOptions{VersionID: v.VersionID}); string(got) != "data" {
		t.Fatalf("read %q", got)
	}
	if _, err := s.Delete(ctx, "locked", "k", DeleteOptions{VersionID: v.VersionID, BypassGovernance: true}); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("delete: %v", err)
	}
}
