package migrate

// Golden files pin the fence documents of the cutover (doc.go, "Fences"):
// testdata/ holds the global fence and warehouse fences as this package
// writes them (version 2), and version-1 documents as older writers left
// them. The tests check both ways for what this package writes, against
// documents written out here rather than derived from the encoder: each
// committed file decodes to its fence, and encoding the fence gives
// exactly the committed bytes. Version-1 files are read only (nothing
// writes them any more): they must decode to the expected fence. Fences
// opened on a store holding the files load them all.
//
// go test ./catalog/migrate -run Golden -update rewrites the files written
// by this package (not the version-1 ones). Doing so means the fence
// format changed: a cutover in progress would no longer read its fences
// the same, so that change needs a new fence version read beside 1 and 2,
// not just new fixtures.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cairnstore/cairn/internal/goldentest"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func strp(s string) *string { return &s }

var (
	fenceT0 = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)
	fenceT1 = time.Date(2025, 11, 2, 8, 0, 0, 0, time.UTC)
)

// goldenFences are warehouse fences; written says this package writes
// the form (two-way check) rather than only reading it.
var goldenFences = []struct {
	file    string
	fence   catalog.Fence
	written bool
}{
	{"fence-v2-preparing.json", catalog.Fence{Version: 2, TableBucket: "lake", MigrationID: "1b4e28ba-2fa1-4d3b-8c1e-6f9a7b5c3d2e",
		Status: catalog.FenceStatusPreparing, Created: fenceT0}, true},
	{"fence-v2-preparing-existed.json", catalog.Fence{Version: 2, TableBucket: "sea", MigrationID: "1b4e28ba-2fa1-4d3b-8c1e-6f9a7b5c3d2e",
		Status: catalog.FenceStatusPreparing, TargetBucketExisted: true, TargetSnapshotETag: strp("9e107d9d372bb6826bd81d3542a419d6"), Created: fenceT0}, true},
	{"fence-v2-materialized.json", catalog.Fence{Version: 2, TableBucket: "pond", MigrationID: "1b4e28ba-2fa1-4d3b-8c1e-6f9a7b5c3d2e",
		Status: catalog.FenceStatusMaterialized, SourceFingerprint: strp("5f0e8c1a2b3d4e5f60718293a4b5c6d75f0e8c1a2b3d4e5f60718293a4b5c6d7"),
		TargetSnapshotETag: strp("acbd18db4cc2f85cedef654fccc4a4d8"), Created: fenceT0}, true},
	// A version-1 fence has no baseline (target_snapshot_etag) and no
	// target_bucket_existed.
	{"fence-v1-preparing.json", catalog.Fence{Version: 1, TableBucket: "old", MigrationID: "legacy-0001",
		Status: catalog.FenceStatusPreparing, Created: fenceT1}, false},
}

var goldenGlobals = []struct {
	file    string
	g       GlobalFence
	written bool
}{
	{"global-fence-v2.json", GlobalFence{Version: 2, MigrationID: "1b4e28ba-2fa1-4d3b-8c1e-6f9a7b5c3d2e", Created: fenceT0}, true},
	{"global-fence-v1.json", GlobalFence{Version: 1, MigrationID: "legacy-0001", Created: fenceT1}, false},
}

// goldenDoc returns testdata/name, written from v first with -update when
// written; for a written form it checks that v encodes to the file.
func goldenDoc(t *testing.T, name string, v any, written bool) []byte {
	t.Helper()
	path := filepath.Join("testdata", name)
	enc, err := json.Marshal(v) // as putFence and putGlobal write it
	if err != nil {
		t.Fatal(err)
	}
	if written {
		return goldentest.Compare(t, path, enc, *update, "the fence format")
	}
	raw, err := os.ReadFile(path) // a form no code writes any more: read only
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestGoldenFences(t *testing.T) {
	for _, tc := range goldenFences {
		t.Run(tc.file, func(t *testing.T) {
			raw := goldenDoc(t, tc.file, tc.fence, tc.written)
			got, err := decodeFence(raw, tc.fence.TableBucket)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.fence) {
				t.Fatalf("decoded\n %+v\nwant\n %+v", *got, tc.fence)
			}
		})
	}
	for _, tc := range goldenGlobals {
		t.Run(tc.file, func(t *testing.T) {
			raw := goldenDoc(t, tc.file, tc.g, tc.written)
			got, err := decodeGlobalFence(raw)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.g) {
				t.Fatalf("decoded\n %+v\nwant\n %+v", *got, tc.g)
			}
		})
	}
}

// TestGoldenFencesLoaded: OpenFences on a store holding the committed
// documents at their keys loads every one and reports none bad.
func TestGoldenFencesLoaded(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storeOptions(t.TempDir())) // fsck at cleanup
	if err := st.EnsureSystemBucket(ctx, Bucket); err != nil {
		t.Fatal(err)
	}
	put := func(key, file string) {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, Bucket, key, bytes.NewReader(raw), int64(len(raw)), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(globalFenceKey, "global-fence-v2.json")
	want := map[string]catalog.Fence{}
	for _, tc := range goldenFences {
		put(fenceKey(tc.fence.TableBucket), tc.file)
		want[tc.fence.TableBucket] = tc.fence
	}
	f, err := OpenFences(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.bad) != 0 || f.gbad != nil {
		t.Fatalf("bad fences: %v, global %v", f.bad, f.gbad)
	}
	if f.gfence == nil || *f.gfence != goldenGlobals[0].g {
		t.Fatalf("global fence %+v", f.gfence)
	}
	got := map[string]catalog.Fence{}
	for wh, fc := range f.fences {
		got[wh] = *fc
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fences\n %+v\nwant\n %+v", got, want)
	}
}
