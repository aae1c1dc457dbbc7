package catalog_test

import (
	"context"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/backingtest"
	"github.com/cairnstore/cairn/objstore"
)

// TestMultiTableTransactionObject runs the multi-table transaction suite
// on the object backing (catalog/strong runs it on the other).
func TestMultiTableTransactionObject(t *testing.T) {
	backingtest.RunTransactions(t, func(t *testing.T) backingtest.TxEnv {
		ctx := context.Background()
		var hook func() error
		e := newEnv(t, func(o *catalog.Options) {
			o.Hooks.BeforePointerFlip = func(context.Context, catalog.Ident, string) error {
				if h := hook; h != nil {
					hook = nil
					return h()
				}
				return nil
			}
		})
		for _, n := range []string{"t1", "t2", "t3"} {
			e.mustCreate(n)
		}
		return backingtest.TxEnv{Svc: e.svc, Hook: &hook, Files: func() int {
			page, err := e.store.List(ctx, "lake", objstore.ListOptions{Prefix: "ns/"})
			if err != nil {
				t.Fatal(err)
			}
			return len(page.Objects)
		}}
	})
}
