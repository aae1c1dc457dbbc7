package catalog_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// benchStoreOptions are a production-like store for the commit benchmarks:
// 4 drives, parity 2, 1 MiB blocks, background workers on.
func benchStoreOptions(dir string) objstore.Options {
	return objstore.Options{Dir: dir, DriveCount: 4, Parity: 2}
}

// BenchmarkCommit measures table commits (a set-properties update, which
// writes a new metadata file and flips the pointer like any commit) on
// one table from one client, and on 16 and 64 tables from as many clients
// at once, under the object backing and the durable-strong backing. It reports
// commits/s and the p50/p99 latency of one commit.
//
//	go test -run '^$' -bench BenchmarkCommit -benchtime 5s ./catalog/
func BenchmarkCommit(b *testing.B) {
	for _, bc := range []struct {
		backing string
		tables  int
	}{{"object", 1}, {"object", 16}, {"object", 64}, {"durable-strong", 1}, {"durable-strong", 16}, {"durable-strong", 64}} {
		tables := bc.tables
		b.Run(fmt.Sprintf("backing=%s/tables=%d", bc.backing, tables), func(b *testing.B) {
			e := &env{t: b, dir: b.TempDir(), durable: bc.backing == "durable-strong"}
			e.openWith(benchStoreOptions(e.dir))
			ctx := context.Background()
			if _, err := e.svc.CreateWarehouse(ctx, "lake"); err != nil {
				b.Fatal(err)
			}
			if err := e.svc.CreateNamespace(ctx, "lake", []string{"ns"}, nil); err != nil {
				b.Fatal(err)
			}
			for i := range tables {
				e.mustCreate(fmt.Sprintf("t%02d", i))
			}
			var (
				mu   sync.Mutex
				lats []time.Duration
				seq  atomic.Int64
				wg   sync.WaitGroup
			)
			per := (b.N + tables - 1) / tables
			b.ResetTimer()
			start := time.Now()
			for i := range tables {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ident := id(fmt.Sprintf("t%02d", i))
					mine := make([]time.Duration, 0, per)
					for range per {
						n := seq.Add(1)
						body := fmt.Appendf(nil, `{"requirements":[],"updates":[{"action":"set-properties","updates":{"n":"%d"}}]}`, n)
						t0 := time.Now()
						if _, err := e.svc.CommitTable(ctx, "lake", ident, body); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(t0))
					}
					mu.Lock()
					lats = append(lats, mine...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if len(lats) == 0 {
				return
			}
			slices.Sort(lats)
			b.ReportMetric(float64(len(lats))/elapsed.Seconds(), "commits/s")
			b.ReportMetric(float64(lats[len(lats)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
