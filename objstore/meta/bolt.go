package meta

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
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

// Path is the index file's path.
func (b *Bolt) Path() string { return b.db.Path() }

// BoltPath is where a data directory keeps its bbolt index.
func BoltPath(dataDir string) string { return filepath.Join(dataDir, "meta", "index.db") }

// View implements Index.
func (b *Bolt) View(ctx context.Context, fn func(Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return boltErr(b.db.View(func(tx *bolt.Tx) error {
		t := &boltTx{tx: tx}
		return t.finish(fn(t))
	}))
}

// Update implements Index.
func (b *Bolt) Update(ctx context.Context, fn func(Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return boltErr(b.db.Update(func(tx *bolt.Tx) error {
		t := &boltTx{tx: tx}
		return t.finish(fn(t))
	}))
}

// Limits implements Index: bbolt bounds a transaction only by memory.
func (b *Bolt) Limits() Limits { return Limits{} }

// Close implements Index.
func (b *Bolt) Close() error { return b.db.Close() }

func boltErr(err error) error {
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

// boltTx is a Tx over a bbolt transaction. bbolt's reads cannot fail; a
// table that does not exist is the one error, kept in err so that the
// transaction fails as the contract says.
type boltTx struct {
	tx  *bolt.Tx
	err error
}

// finish returns fn's error, or the first failed read's.
func (t *boltTx) finish(err error) error {
	if err != nil {
		return err
	}
	return t.err
}

func (t *boltTx) bucket(name Table) (*bolt.Bucket, error) {
	b := t.tx.Bucket([]byte(name))
	if b == nil {
		return nil, t.fail(fmt.Errorf("%w: %q", ErrUnknownTable, name))
	}
	return b, nil
}

// fail records the first failed call: the transaction cannot commit.
func (t *boltTx) fail(err error) error {
	if t.err == nil {
		t.err = err
	}
	return err
}

func (t *boltTx) Get(name Table, key []byte) ([]byte, error) {
	b, err := t.bucket(name)
	if err != nil {
		return nil, err
	}
	return b.Get(key), nil
}

func (t *boltTx) Put(name Table, key, value []byte) error {
	b, err := t.bucket(name)
	if err != nil {
		return err
	}
	if err := b.Put(key, value); err != nil {
		return t.fail(fmt.Errorf("meta: put %s: %w", name, err))
	}
	return nil
}

func (t *boltTx) Delete(name Table, key []byte) error {
	b, err := t.bucket(name)
	if err != nil {
		return err
	}
	if err := b.Delete(key); err != nil {
		return t.fail(fmt.Errorf("meta: delete %s: %w", name, err))
	}
	return nil
}

func (t *boltTx) Cursor(name Table) Cursor {
	b, err := t.bucket(name)
	if err != nil {
		return errCursor{err}
	}
	return boltCursor{b.Cursor()}
}

func (t *boltTx) NextSeq() (uint64, error) {
	b, err := t.bucket(Settings)
	if err != nil {
		return 0, err
	}
	seq, err := b.NextSequence()
	if err != nil {
		return 0, t.fail(fmt.Errorf("meta: sequence: %w", err))
	}
	return seq, nil
}

type boltCursor struct{ c *bolt.Cursor }

func (c boltCursor) Seek(key []byte) (k, v []byte) { return c.c.Seek(key) }
func (c boltCursor) First() (k, v []byte)          { return c.c.First() }
func (c boltCursor) Next() (k, v []byte)           { return c.c.Next() }
func (c boltCursor) Err() error                    { return nil }

// errCursor is a cursor that failed before it started.
type errCursor struct{ err error }

func (c errCursor) Seek([]byte) (k, v []byte) { return nil, nil }
func (c errCursor) First() (k, v []byte)      { return nil, nil }
func (c errCursor) Next() (k, v []byte)       { return nil, nil }
func (c errCursor) Err() error                { return c.err }
