package migrate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// BenchmarkMaterialize1000 measures the materialize of a warehouse of
// 1 000 tables (each created through the catalog, so with its metadata
// file, pointer and prefix records) on a production-like store (4 drives,
// parity 2): preflight, fences, the source walk, one snapshot publish,
// the registry entry. Each round is cancelled (untimed) before the next.
//
//	go test -run '^$' -bench BenchmarkMaterialize1000 -benchtime 5x ./catalog/migrate/
func BenchmarkMaterialize1000(b *testing.B) {
	e := &env{t: b, dir: b.TempDir(), storeOpt: func(dir string) objstore.Options {
		return objstore.Options{Dir: dir, DriveCount: 4, Parity: 2}
	}}
	e.reopen()
	ctx := context.Background()
	if _, err := e.svc.CreateWarehouse(ctx, "big"); err != nil {
		b.Fatal(err)
	}
	if err := e.svc.CreateNamespace(ctx, "big", []string{"ns"}, nil); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	for i := range 1000 {
		e.createTable("big", fmt.Sprintf("t%04d", i))
	}
	b.Logf("created 1000 tables in %v", time.Since(t0))
	var size int64
	b.ResetTimer()
	for b.Loop() {
		res, err := e.m.Materialize(ctx, "big")
		if err != nil {
			b.Fatal(err)
		}
		if res.TableCount != 1000 {
			b.Fatalf("materialized %d tables", res.TableCount)
		}
		b.StopTimer()
		if info, err := e.store.Head(ctx, Bucket, "strong/warehouses/big.snapshot", objstore.GetOptions{}); err == nil {
			size = info.Size
		}
		if _, err := e.m.Cancel(ctx, "big"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(size)/(1<<20), "snapshot-MiB")
}
