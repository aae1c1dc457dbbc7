// Package workerstore opens a data directory's store the way cmd/cairn
// does with only --data given, for the crash tests' child processes
// (integration/internal/catalogcrash, txncrash).
package workerstore

import (
	"context"
	"fmt"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Open opens the store of data directory dir.
func Open(ctx context.Context, dir string) (*objstore.Store, error) {
	idx, err := meta.OpenBolt(meta.BoltPath(dir), 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	st, err := objstore.Open(ctx, objstore.Options{Index: idx, Dir: dir, Parity: -1})
	if err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	return st, nil
}
