package meta

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Bolt is the bbolt Index.
type Bolt struct {
	db *bolt.DB
}

var _ Index = (*Bolt)(nil)

// OpenBolt opens (creating when absent) the index file at path. It takes
// the file lock, so a second process opening the same index waits up to
// lockTimeout and then fails.
func OpenBolt(path string, lockTimeout time.Duration) (*Bolt, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("meta: %w", err)
	}
	db, err := bolt.Open(path, 0o644, &bolt.Options{
		Timeout:        lockTimeout,
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if err != nil {
		return nil, fmt.Errorf("meta: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, t := range AllTables {
			if _, err := tx.CreateBucketIfNotExists([]byte(t)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("meta: init tables: %w", err)
	}
	return &Bolt{db: db}, nil
}

// View implements Index.
func (b *Bolt) View(ctx context.Context, fn func(Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.db.View(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

// Update implements Index.
func (b *Bolt) Update(ctx context.Context, fn func(Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.db.Update(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

// Close implements Index.
func (b *Bolt) Close() error { return b.db.Close() }

type boltTx struct{ tx *bolt.Tx }

func (t boltTx) bucket(name Table) *bolt.Bucket {
	b := t.tx.Bucket([]byte(name))
	if b == nil {
		panic("meta: unknown table " + string(name)) // programming error: tables are created at open
	}
	return b
}

func (t boltTx) Get(name Table, key []byte) []byte { return t.bucket(name).Get(key) }
func (t boltTx) Put(name Table, key, value []byte) error {
	if err := t.bucket(name).Put(key, value); err != nil {
		return fmt.Errorf("meta: put %s: %w", name, err)
	}
	return nil
}
func (t boltTx) Delete(name Table, key []byte) error {
	if err := t.bucket(name).Delete(key); err != nil {
		return fmt.Errorf("meta: delete %s: %w", name, err)
	}
	return nil
}
func (t boltTx) Cursor(name Table) Cursor { return t.bucket(name).Cursor() }
func (t boltTx) NextSeq() (uint64, error) {
	seq, err := t.bucket(Settings).NextSequence()
	if err != nil {
		return 0, fmt.Errorf("meta: sequence: %w", err)
	}
	return seq, nil
}
func (t boltTx) Writable() bool { return t.tx.Writable() }
