package objstore

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestReadCurrentDeleteMarker: a read without a version id of a key whose
// newest version is a delete marker fails ErrNoSuchKey and ErrDeleteMarker,
// Head naming the marker; a key merely absent is ErrNoSuchKey alone.
func TestReadCurrentDeleteMarker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	for _, tc := range []struct {
		name       string
		versioning string
		// fill writes the key and returns the marker's version id ("" when
		// the newest version is no delete marker).
		fill func(t *testing.T, b string) string
	}{
		{"enabled", VersioningEnabled, func(t *testing.T, b string) string {
			mustPut(t, s, b, "k", []byte("x"))
			return mustDelete(t, s, b, "k", "").VersionID
		}},
		{"suspended null marker", VersioningSuspended, func(t *testing.T, b string) string {
			mustPut(t, s, b, "k", []byte("x"))
			return mustDelete(t, s, b, "k", "").VersionID
		}},
		{"marker of a key never written", VersioningEnabled, func(t *testing.T, b string) string {
			return mustDelete(t, s, b, "k", "").VersionID
		}},
		{"unversioned delete", "", func(t *testing.T, b string) string {
			mustPut(t, s, b, "k", []byte("x"))
			mustDelete(t, s, b, "k", "")
			return ""
		}},
		{"marker removed", VersioningEnabled, func(t *testing.T, b string) string {
			v := mustPut(t, s, b, "k", []byte("x"))
			m := mustDelete(t, s, b, "k", "")
			mustDelete(t, s, b, "k", m.VersionID)
			mustDelete(t, s, b, "k", v.VersionID)
			return ""
		}},
		{"a longer key with a marker", VersioningEnabled, func(t *testing.T, b string) string {
			mustDelete(t, s, b, "k2", "")
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := "dm-" + strings.ReplaceAll(tc.name, " ", "-")
			mustBucket(t, s, b)
			if tc.versioning != "" {
				setVersioning(t, s, b, tc.versioning)
			}
			marker := tc.fill(t, b)
			info, err := s.Head(ctx, b, "k", GetOptions{})
			if !errors.Is(err, ErrNoSuchKey) {
				t.Fatalf("head: %v, want ErrNoSuchKey", err)
			}
			_, oerr := s.Open(ctx, b, "k", GetOptions{})
			if !errors.Is(oerr, ErrNoSuchKey) {
				t.Fatalf("open: %v, want ErrNoSuchKey", oerr)
			}
			if marker == "" {
				if errors.Is(err, ErrDeleteMarker) || errors.Is(oerr, ErrDeleteMarker) || info.DeleteMarker {
					t.Fatalf("no current marker: head %+v %v, open %v", info, err, oerr)
				}
				return
			}
			if !errors.Is(err, ErrDeleteMarker) || !errors.Is(oerr, ErrDeleteMarker) {
				t.Fatalf("current marker: head %v, open %v, want ErrDeleteMarker too", err, oerr)
			}
			if !info.DeleteMarker || info.VersionID != marker || !info.IsLatest {
				t.Fatalf("head of a current marker: %+v, want marker %s, latest", info, marker)
			}
		})
	}
}
