package catalog_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

func TestSwapMetadataLocation(t *testing.T) {
	for _, durable := range []bool{false, true} {
		e := &env{t: t, dir: t.TempDir(), durable: durable}
		e.open()
		ctx := context.Background()
		if _, err := e.svc.CreateWarehouse(ctx, "lake"); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.CreateNamespace(ctx, "lake", []string{"ns"}, nil); err != nil {
			t.Fatal(err)
		}
		cur := e.mustCreate("t")
		other := e.mustCreate("u")
		// The engine's new metadata file: the current one with a property.
		var md map[string]any
		if err := json.Unmarshal(cur.Metadata, &md); err != nil {
			t.Fatal(err)
		}
		md["properties"] = map[string]any{"written-by": "engine"}
		body, _ := json.Marshal(md)
		put := func(key string, b []byte) string {
			if _, err := e.store.Put(ctx, "lake", key, strings.NewReader(string(b)), int64(len(b)), objstore.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			return "s3://lake/" + key
		}
		mine := put("ns/t/metadata/00001-engine.metadata.json", body)
		cases := []struct {
			name, token, loc string
			want             error
		}{
			{"stale token", "0123", mine, catalog.ErrCommitFailed},
			{"missing file", cur.ETag, "s3://lake/ns/t/metadata/nope.metadata.json", catalog.ErrBadRequest},
			{"outside the bucket", cur.ETag, "s3://elsewhere/x.metadata.json", catalog.ErrBadRequest},
			{"not metadata", cur.ETag, put("ns/t/metadata/junk.json", []byte(`{"a":1}`)), catalog.ErrBadRequest},
			{"another table's", cur.ETag, other.MetadataLocation, catalog.ErrBadRequest},
			{"swap", cur.ETag, mine, nil},
			{"token of before the swap", cur.ETag, mine, catalog.ErrCommitFailed},
		}
		for _, c := range cases {
			res, err := e.svc.SwapMetadataLocation(ctx, "lake", id("t"), c.token, c.loc)
			wantErr(t, err, c.want)
			if c.want == nil && (res.MetadataLocation != mine || res.ETag == cur.ETag) {
				t.Errorf("%s: result %s (etag %s)", c.name, res.MetadataLocation, res.ETag)
			}
		}
		got, err := e.svc.LoadTable(ctx, "lake", id("t"), "")
		if err != nil {
			t.Fatal(err)
		}
		if got.MetadataLocation != mine || !strings.Contains(string(got.Metadata), "written-by") {
			t.Errorf("after the swap the table loads %s", got.MetadataLocation)
		}
	}
}
