package etcd_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
)

// BenchmarkIndex compares the etcd index, on one embedded member that
// syncs its writes, with bbolt on the same disk: an Update that reads a
// key and writes it (one of 1000, 200 bytes), a View that reads one key,
// and a View that scans 100 keys. Run with -count 1 several times to
// interleave the engines, and compare medians.
func BenchmarkIndex(b *testing.B) {
	engines := []struct {
		name string
		open func(b *testing.B) meta.Index
	}{
		{"bolt", func(b *testing.B) meta.Index {
			x, err := meta.OpenBolt(filepath.Join(b.TempDir(), "index.db"), time.Second)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = x.Close() })
			return x
		}},
		{"etcd", func(b *testing.B) meta.Index {
			m := etcdtest.Start(b, etcdtest.Options{Fsync: true})
			return openIndex(b, etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/bench"})
		}},
	}
	const keys = 1000
	key := func(i int) []byte { return []byte(fmt.Sprintf("bucket\x00key-%06d", i%keys)) }
	value := make([]byte, 200)
	ctx := context.Background()
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			idx := e.open(b)
			for lo := 0; lo < keys; lo += 100 {
				err := idx.Update(ctx, func(tx meta.Tx) error {
					for i := lo; i < lo+100; i++ {
						if err := tx.Put(meta.Objects, key(i), value); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.Run("Update", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					err := idx.Update(ctx, func(tx meta.Tx) error {
						v, err := tx.Get(meta.Objects, key(i*7))
						if err != nil {
							return err
						}
						return tx.Put(meta.Objects, key(i*7), v)
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("View", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					err := idx.View(ctx, func(tx meta.Tx) error {
						_, err := tx.Get(meta.Objects, key(i*13))
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("Scan100", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					err := idx.View(ctx, func(tx meta.Tx) error {
						n := 0
						return meta.Scan(tx, meta.Objects, []byte("bucket\x00"), func(_, _ []byte) error {
							if n++; n == 100 {
								return meta.ErrStop
							}
							return nil
						})
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
