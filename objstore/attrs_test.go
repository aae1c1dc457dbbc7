package objstore

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

func TestAttrsFollowTheirVersion(t *testing.T) {
	s, _ := newTestStore(t, 4, 1)
	ctx := context.Background()
	if err := s.CreateBucket(ctx, "locked", BucketOptions{Owner: "alice", ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	b, err := s.HeadBucket(ctx, "locked")
	if err != nil || b.Owner != "alice" || !b.ObjectLock || b.Versioning != VersioningEnabled {
		t.Fatalf("bucket %+v %v", b, err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	a := Attrs{Owner: "alice", Sys: map[string]string{"tags": "a=1"}, Retention: Retention{Mode: RetentionGovernance, Until: until}}
	v1, err := s.Put(ctx, "locked", "k", bytes.NewReader([]byte("one")), 3, PutOptions{Attrs: a})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := s.Put(ctx, "locked", "k", bytes.NewReader([]byte("two")), 3, PutOptions{Attrs: Attrs{Owner: "bob"}})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		vid  string
		want Attrs
	}{
		{"current", "", Attrs{Owner: "bob"}},
		{"older version", v1.VersionID, a},
		{"newest by id", v2.VersionID, Attrs{Owner: "bob"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := s.Head(ctx, "locked", "k", GetOptions{VersionID: tc.vid})
			if err != nil {
				t.Fatal(err)
			}
			if info.Attrs.Owner != tc.want.Owner || info.Attrs.Sys["tags"] != tc.want.Sys["tags"] || !info.Attrs.Retention.Until.Equal(tc.want.Retention.Until) {
				t.Fatalf("attrs %+v, want %+v", info.Attrs, tc.want)
			}
		})
	}

	// SetAttrs edits in place: no new version, the current record follows.
	if _, err := s.SetAttrs(ctx, "locked", "k", "", func(cur ObjectInfo, a *Attrs) error {
		if cur.VersionID != v2.VersionID {
			t.Fatalf("current is %s, want %s", cur.VersionID, v2.VersionID)
		}
		a.Sys = map[string]string{"tags": "b=2"}
		a.LegalHold = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	info, err := s.Head(ctx, "locked", "k", GetOptions{})
	if err != nil || info.VersionID != v2.VersionID || info.Attrs.Sys["tags"] != "b=2" || !info.Attrs.LegalHold {
		t.Fatalf("after SetAttrs: %+v %v", info, err)
	}
	byID, err := s.Head(ctx, "locked", "k", GetOptions{VersionID: v2.VersionID})
	if err != nil || !byID.Attrs.LegalHold {
		t.Fatalf("version record not updated: %+v %v", byID, err)
	}
	page, err := s.ListVersions(ctx, "locked", ListVersionsOptions{})
	if err != nil || len(page.Versions) != 2 {
		t.Fatalf("SetAttrs made a version: %+v %v", page, err)
	}

	// The editor's error changes nothing.
	refuse := errors.New("no")
	if _, err := s.SetAttrs(ctx, "locked", "k", v1.VersionID, func(_ ObjectInfo, a *Attrs) error {
		a.Sys["tags"] = "changed"
		return refuse
	}); !errors.Is(err, refuse) {
		t.Fatalf("err %v", err)
	}
	old, _ := s.Head(ctx, "locked", "k", GetOptions{VersionID: v1.VersionID})
	if old.Attrs.Sys["tags"] != "a=1" {
		t.Fatalf("failed SetAttrs changed the version: %+v", old.Attrs)
	}

	// Copy gives the attributes AttrsFor returns, or none.
	if _, err := s.Copy(ctx, "locked", "k", "locked", "plain", CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Head(ctx, "locked", "plain", GetOptions{}); c.Attrs.Owner != "" || c.Attrs.LegalHold || c.Attrs.Sys != nil {
		t.Fatalf("copy without AttrsFor kept attrs: %+v", c.Attrs)
	}
	if _, err := s.Copy(ctx, "locked", "k", "locked", "tagged", CopyOptions{AttrsFor: func(src ObjectInfo) Attrs {
		return Attrs{Owner: "carol", Sys: map[string]string{"tags": src.Attrs.Sys["tags"]}}
	}}); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Head(ctx, "locked", "tagged", GetOptions{}); c.Attrs.Owner != "carol" || c.Attrs.Sys["tags"] != "b=2" {
		t.Fatalf("copy attrs: %+v", c.Attrs)
	}

	// A multipart upload gives its attributes to the version it completes.
	id, err := s.CreateMultipartUpload(ctx, "locked", "mp", PutOptions{Attrs: Attrs{Owner: "dave", Sys: map[string]string{"acl": "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PutPart(ctx, "locked", "mp", id, 1, bytes.NewReader([]byte("part")), 4, PartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompleteMultipartUpload(ctx, "locked", "mp", id, []CompletePart{{Number: 1, ETag: p.ETag}}, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Head(ctx, "locked", "mp", GetOptions{}); m.Attrs.Owner != "dave" || m.Attrs.Sys["acl"] != "x" {
		t.Fatalf("multipart attrs: %+v", m.Attrs)
	}

	// A delete marker carries no attributes.
	if _, err := s.Delete(ctx, "locked", "plain", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	vs, _ := s.ListVersions(ctx, "locked", ListVersionsOptions{Prefix: "plain"})
	if _, err := s.SetAttrs(ctx, "locked", "plain", vs.Versions[0].VersionID, func(ObjectInfo, *Attrs) error { return nil }); !errors.Is(err, ErrDeleteMarker) {
		t.Fatalf("SetAttrs on a delete marker: %v", err)
	}
}

func TestBucketConfig(t *testing.T) {
	s, _ := newTestStore(t, 4, 1)
	ctx := context.Background()
	mustBucket(t, s, "docs")
	for _, step := range []struct {
		name string
		doc  []byte
		want map[string]string
	}{
		{"cors", []byte("<CORS/>"), map[string]string{"cors": "<CORS/>"}},
		{"policy", []byte(`{"Statement":[]}`), map[string]string{"cors": "<CORS/>", "policy": `{"Statement":[]}`}},
		{"cors", nil, map[string]string{"policy": `{"Statement":[]}`}},
	} {
		if err := s.SetBucketConfig(ctx, "docs", step.name, step.doc); err != nil {
			t.Fatal(err)
		}
		b, err := s.HeadBucket(ctx, "docs")
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Config) != len(step.want) {
			t.Fatalf("after %s=%q: %q", step.name, step.doc, b.Config)
		}
		for k, v := range step.want {
			if string(b.Config[k]) != v {
				t.Fatalf("after %s=%q: %s is %q, want %q", step.name, step.doc, k, b.Config[k], v)
			}
		}
	}
	if err := s.SetBucketConfig(ctx, "nope", "cors", []byte("x")); !errors.Is(err, ErrNoSuchBucket) {
		t.Fatalf("no bucket: %v", err)
	}
}
