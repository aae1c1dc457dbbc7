package objectbacked

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

// Bucket is the system bucket holding the catalog's records.
const Bucket = ".cairn.sys"

// noWarehouse stands for the warehouse "" in object keys.
const noWarehouse = "-"

// maxRecord bounds the size of a record read back (metadata files are not
// records; records are small).
const maxRecord = 64 << 20

// Backing keeps catalog records as objects in the system bucket.
type Backing struct {
	store *objstore.Store
}

var _ catalog.Backing = (*Backing)(nil)

// New returns the object backing over store, creating the system bucket
// when absent.
func New(ctx context.Context, store *objstore.Store) (*Backing, error) {
	if err := store.EnsureSystemBucket(ctx, Bucket); err != nil {
		return nil, fmt.Errorf("objectbacked: %w", err)
	}
	return &Backing{store: store}, nil
}

// dir is the key prefix of one (warehouse, kind).
func dir(warehouse string, kind catalog.Kind) string {
	if warehouse == "" {
		warehouse = noWarehouse
	}
	return string(kind) + "/" + warehouse + "/"
}

// checkDir refuses a (warehouse, kind) outside the Backing contract: a
// warehouse with "/" or NUL, not UTF-8, "." or "..", or a kind not in
// catalog.Kinds.
func checkDir(warehouse string, kind catalog.Kind) error {
	if strings.ContainsAny(warehouse, "/\x00") || !utf8.ValidString(warehouse) || warehouse == "." || warehouse == ".." {
		return fmt.Errorf("objectbacked: invalid warehouse name %q", warehouse)
	}
	if !slices.Contains(catalog.Kinds(), kind) {
		return fmt.Errorf("objectbacked: unknown kind %q", kind)
	}
	return nil
}

func objectKey(warehouse string, kind catalog.Kind, key string) (string, error) {
	if err := checkDir(warehouse, kind); err != nil {
		return "", err
	}
	if key == "" || strings.ContainsRune(key, 0) || !utf8.ValidString(key) {
		return "", fmt.Errorf("objectbacked: invalid key %q", key)
	}
	return dir(warehouse, kind) + key, nil
}

// Get implements catalog.Backing.
func (b *Backing) Get(ctx context.Context, warehouse string, kind catalog.Kind, key string) (catalog.Record, error) {
	ok, err := objectKey(warehouse, kind, key)
	if err != nil {
		return catalog.Record{}, err
	}
	r, err := b.store.Open(ctx, Bucket, ok, objstore.GetOptions{})
	if err != nil {
		return catalog.Record{}, mapErr(err, ok)
	}
	defer func() { _ = r.Close() }()
	body, err := io.ReadAll(io.LimitReader(r, maxRecord))
	if err != nil {
		return catalog.Record{}, fmt.Errorf("objectbacked: read %s: %w", ok, err)
	}
	i := bytes.IndexByte(body, '\n')
	if i < 0 {
		return catalog.Record{}, fmt.Errorf("objectbacked: record %s has no nonce line", ok)
	}
	return catalog.Record{Key: key, Value: body[i+1:], Version: r.Info().ETag}, nil
}

// Put implements catalog.Backing.
func (b *Backing) Put(ctx context.Context, warehouse string, kind catalog.Kind, key string, value []byte, ifVersion string) (string, error) {
	ok, err := objectKey(warehouse, kind, key)
	if err != nil {
		return "", err
	}
	body, err := recordBody(value)
	if err != nil {
		return "", err
	}
	info, err := b.store.Put(ctx, Bucket, ok, bytes.NewReader(body), int64(len(body)), putOptions(ifVersion))
	if err != nil {
		return "", mapErr(err, ok)
	}
	return info.ETag, nil
}

var _ catalog.BatchBacking = (*Backing)(nil)

// PutBatch implements catalog.BatchBacking: the records' objects are
// installed in one index transaction (objstore.Store.PutBatch), each
// under its Put condition, all of them or none.
func (b *Backing) PutBatch(ctx context.Context, warehouse string, puts []catalog.BatchPut) ([]string, error) {
	batch := make([]objstore.BatchPut, len(puts))
	for i, p := range puts {
		ok, err := objectKey(warehouse, p.Kind, p.Key)
		if err != nil {
			return nil, err
		}
		body, err := recordBody(p.Value)
		if err != nil {
			return nil, err
		}
		batch[i] = objstore.BatchPut{Key: ok, Body: body, Opt: putOptions(p.IfVersion)}
	}
	infos, err := b.store.PutBatch(ctx, Bucket, batch)
	if err != nil {
		return nil, mapErr(err, dir(warehouse, puts[0].Kind))
	}
	vers := make([]string, len(infos))
	for i, info := range infos {
		vers[i] = info.ETag
	}
	return vers, nil
}

// putOptions are the store's conditions for a Put's ifVersion.
func putOptions(ifVersion string) objstore.PutOptions {
	var opt objstore.PutOptions
	switch ifVersion {
	case "":
		opt.IfNoneMatch = "*"
	case catalog.AnyVersion:
	default:
		opt.IfMatch = ifVersion
	}
	return opt
}

// recordBody is a record's object: a random nonce line, so that every
// Put gets a new ETag (no ABA), then the value.
func recordBody(value []byte) ([]byte, error) {
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("objectbacked: nonce: %w", err)
	}
	body := make([]byte, 0, 33+len(value))
	body = hex.AppendEncode(body, nonce[:])
	body = append(body, '\n')
	return append(body, value...), nil
}

// Delete implements catalog.Backing.
func (b *Backing) Delete(ctx context.Context, warehouse string, kind catalog.Kind, key, ifVersion string) error {
	ok, err := objectKey(warehouse, kind, key)
	if err != nil {
		return err
	}
	var opt objstore.DeleteOptions
	if ifVersion != "" && ifVersion != catalog.AnyVersion {
		opt.IfMatch = ifVersion
	}
	if _, err := b.store.Delete(ctx, Bucket, ok, opt); err != nil {
		return mapErr(err, ok)
	}
	return nil
}

// List implements catalog.Backing.
func (b *Backing) List(ctx context.Context, warehouse string, kind catalog.Kind, opt catalog.ListOptions) ([]catalog.Record, bool, error) {
	if err := checkDir(warehouse, kind); err != nil {
		return nil, false, err
	}
	d := dir(warehouse, kind)
	after := ""
	if opt.After != "" {
		after = d + opt.After
	}
	var recs []catalog.Record
	for {
		want := 1000
		if opt.Limit > 0 && opt.Limit-len(recs) < want {
			want = opt.Limit - len(recs)
		}
		page, err := b.store.List(ctx, Bucket, objstore.ListOptions{Prefix: d + opt.Prefix, After: after, MaxKeys: want})
		if err != nil {
			return nil, false, mapErr(err, d)
		}
		for _, o := range page.Objects {
			key := strings.TrimPrefix(o.Key, d)
			if opt.KeysOnly {
				recs = append(recs, catalog.Record{Key: key})
				continue
			}
			rec, err := b.Get(ctx, warehouse, kind, key)
			if errors.Is(err, catalog.ErrNotFound) {
				continue // deleted since listed
			}
			if err != nil {
				return nil, false, err
			}
			recs = append(recs, rec)
		}
		if !page.IsTruncated {
			return recs, false, nil
		}
		if opt.Limit > 0 && len(recs) >= opt.Limit {
			return recs, true, nil
		}
		after = page.NextMarker
	}
}

// mapErr turns store errors into the backing's.
func mapErr(err error, key string) error {
	switch {
	case errors.Is(err, objstore.ErrPreconditionFailed):
		return fmt.Errorf("%w: %s: %w", catalog.ErrConflict, key, err)
	case errors.Is(err, objstore.ErrNoSuchKey):
		return fmt.Errorf("%w: %s: %w", catalog.ErrNotFound, key, err)
	}
	return fmt.Errorf("objectbacked: %s: %w", key, err)
}
