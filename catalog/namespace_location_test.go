package catalog_test

import (
	"context"
	"strings"
	"testing"
)

// TestNamespaceLocation: a namespace reports a location, its default one
// unless it set its own, and a table created in it without a location
// lies under it. Trino reads it to place new tables; without it Trino's
// CREATE TABLE failed ("non-empty location") after the table was made.
func TestNamespaceLocation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	wantErr(t, e.svc.CreateNamespace(ctx, "lake", []string{"a", "b"}, nil), nil)
	wantErr(t, e.svc.CreateNamespace(ctx, "lake", []string{"own"}, map[string]string{"location": "s3://lake/elsewhere"}), nil)
	for _, tc := range []struct {
		ns    []string
		want  string
		owner string
	}{
		{[]string{"ns"}, "s3://lake/ns", "t"},
		{[]string{"a", "b"}, "s3://lake/a/b", ""},
		{[]string{"own"}, "s3://lake/elsewhere", ""},
	} {
		props, err := e.svc.LoadNamespace(ctx, "lake", tc.ns)
		if err != nil || props["location"] != tc.want || props["owner"] != tc.owner {
			t.Errorf("LoadNamespace %v: %v, %v; want location %s, owner %q", tc.ns, props, err, tc.want, tc.owner)
		}
	}

	props, err := e.svc.LoadNamespace(ctx, "lake", []string{"ns"})
	if err != nil {
		t.Fatal(err)
	}
	r := e.mustCreate("events")
	if loc, _ := meta(t, r.Metadata)["location"].(string); !strings.HasPrefix(loc, props["location"]+"/") {
		t.Fatalf("table location %q is not under the namespace location %q", loc, props["location"])
	}

	// The default is reported, not stored: removing it finds nothing to
	// remove, and it is still reported afterwards.
	_, _, missing, err := e.svc.UpdateNamespaceProperties(ctx, "lake", []string{"ns"}, []string{"location"}, nil)
	if err != nil || len(missing) != 1 || missing[0] != "location" {
		t.Fatalf("remove location: missing %v, %v; want [location]", missing, err)
	}
	if props, err := e.svc.LoadNamespace(ctx, "lake", []string{"ns"}); err != nil || props["location"] != "s3://lake/ns" {
		t.Fatalf("after the removal: %v, %v", props, err)
	}
	if _, err := e.svc.LoadNamespace(ctx, "lake", []string{"missing"}); err == nil {
		t.Fatal("LoadNamespace of a missing namespace succeeded")
	}
}
