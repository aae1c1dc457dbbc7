package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// BenchmarkCatalogCommitIndex measures one client's Iceberg table commits
// (a set-properties update: a new metadata file and the pointer's
// compare-and-swap, as any commit) through the catalog on a store whose
// index is bbolt and one whose index is a three-member etcd on this
// machine (members fsyncing as a real cluster does), side by side. It
// reports the p50 and p99 latency of a commit.
//
//	go test -run '^$' -bench BenchmarkCatalogCommitIndex -benchtime 300x ./integration/
func BenchmarkCatalogCommitIndex(b *testing.B) {
	cluster := etcdtest.StartCluster(b, 3, etcdtest.Options{Fsync: true})
	for _, index := range []string{"bbolt", "etcd"} {
		b.Run("index="+index, func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			var idx meta.Index
			if index == "etcd" {
				x, err := etcd.Open(ctx, etcd.Config{Endpoints: cluster.Endpoints(), Prefix: fmt.Sprintf("/bench/%s/%d/", strings.ReplaceAll(b.Name(), "/", "-"), time.Now().UnixNano())})
				if err != nil {
					b.Fatal(err)
				}
				idx = x
			} else {
				idx = storetest.OpenBolt(b, dir)
			}
			st, err := objstore.Open(ctx, objstore.Options{Dir: dir, DriveCount: 4, Parity: 2, Index: idx})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = st.Close() }()
			back, err := objectbacked.New(ctx, st)
			if err != nil {
				b.Fatal(err)
			}
			svc, err := catalog.New(st, back, catalog.Options{S3Endpoint: "http://127.0.0.1:9000"})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := svc.CreateWarehouse(ctx, "lake"); err != nil {
				b.Fatal(err)
			}
			if err := svc.CreateNamespace(ctx, "lake", []string{"ns"}, nil); err != nil {
				b.Fatal(err)
			}
			schema := `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]}`
			if _, err := svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(`{"name":"t","schema":`+schema+`}`)); err != nil {
				b.Fatal(err)
			}
			ident := catalog.Ident{Namespace: []string{"ns"}, Name: "t"}
			lats := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				body := fmt.Appendf(nil, `{"requirements":[],"updates":[{"action":"set-properties","updates":{"n":"%d"}}]}`, i)
				t0 := time.Now()
				if _, err := svc.CommitTable(ctx, "lake", ident, body); err != nil {
					b.Fatal(err)
				}
				lats = append(lats, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lats)
			b.ReportMetric(float64(lats[len(lats)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
