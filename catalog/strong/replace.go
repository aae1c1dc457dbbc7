package strong

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

// Whole-state operations of a warehouse, for the cutover and for
// operators: read the state with its ETag, replace it or remove it under
// an ETag condition, fingerprint it.

// SnapshotETag refreshes warehouse wh and returns its snapshot object's
// current ETag, "" when it has none (never published, or removed). A
// warehouse that is not served returns its error (ErrSnapshotInvalid,
// ErrSnapshotMissing); ObjectETag reads the ETag of such a snapshot.
func (b *Backing) SnapshotETag(ctx context.Context, wh string) (string, error) {
	if err := validWarehouse(wh, true); err != nil {
		return "", fmt.Errorf("strong: %w", err)
	}
	w := b.warehouse(wh)
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := b.refreshLocked(ctx, w); err != nil {
		return "", err
	}
	return w.etag, nil
}

// ObjectETag returns the ETag of warehouse wh's snapshot object ("" when
// there is none) from a HEAD alone: nothing is decoded and the cache is
// untouched, so it also answers for a damaged snapshot (the ETag a
// Restore or Remove over it must name).
func (b *Backing) ObjectETag(ctx context.Context, wh string) (string, error) {
	if err := validWarehouse(wh, true); err != nil {
		return "", fmt.Errorf("strong: %w", err)
	}
	return b.headETag(ctx, SnapshotKey(wh))
}

// headETag returns the current ETag of key, "" when absent.
func (b *Backing) headETag(ctx context.Context, key string) (string, error) {
	info, err := b.store.Head(ctx, Bucket, key, objstore.GetOptions{})
	if errors.Is(err, objstore.ErrNoSuchKey) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("strong: head %s: %w", key, err)
	}
	return info.ETag, nil
}

// Records returns the whole current state of warehouse wh (values
// copied; only kinds that have records) and the ETag of the snapshot it
// was read from ("" when there is none), in one consistent read. A
// quarantined warehouse returns everything, colliding records included.
func (b *Backing) Records(ctx context.Context, wh string) (map[catalog.Kind][]catalog.Record, string, error) {
	if err := validWarehouse(wh, true); err != nil {
		return nil, "", fmt.Errorf("strong: %w", err)
	}
	w := b.warehouse(wh)
	w.mu.Lock()
	defer w.mu.Unlock()
	s, err := b.refreshLocked(ctx, w)
	if err != nil {
		return nil, "", err
	}
	out := make(map[catalog.Kind][]catalog.Record, len(s.Kinds))
	for _, g := range s.Kinds {
		recs := make([]catalog.Record, len(g.Records))
		for i, r := range g.Records {
			recs[i] = catalog.Record{Key: r.Key, Value: append([]byte{}, r.Value...), Version: s.version(r.Gen)}
		}
		out[g.Kind] = recs
	}
	return out, w.etag, nil
}

// Replace publishes kinds (keys and values; versions are ignored) as the
// whole state of warehouse wh, in one publish, when the snapshot's
// current ETag equals ifETag ("": there must be none). Every record gets
// the new generation. A mismatch, or a lost swap, is catalog.ErrConflict
// and is not retried. Unknown kinds, invalid or repeated keys and wh ""
// (the registry changes only with Put and Delete) are plain errors; a
// state with a table/view identifier collision is catalog.ErrConflict.
// A warehouse that is not served is refused with its error, as writes
// are (Restore and Remove work over a damaged snapshot).
func (b *Backing) Replace(ctx context.Context, wh string, kinds map[catalog.Kind][]catalog.Record, ifETag string) (string, error) {
	if err := validWarehouse(wh, false); err != nil {
		return "", fmt.Errorf("strong: replace: %w", err)
	}
	groups, err := toGroups(kinds)
	if err != nil {
		return "", fmt.Errorf("strong: replace %q: %w", wh, err)
	}
	w := b.warehouse(wh)
	w.mu.Lock()
	defer w.mu.Unlock()
	cur, err := b.refreshLocked(ctx, w)
	if err != nil {
		return "", err
	}
	if w.etag != ifETag {
		return "", fmt.Errorf("%w: %q: snapshot ETag is %q, not %q", catalog.ErrConflict, wh, w.etag, ifETag)
	}
	next := &snapshot{Warehouse: wh, Epoch: cur.Epoch, Generation: cur.Generation + 1, Kinds: groups}
	setGen(next)
	if c := collisions(next); len(c) > 0 {
		return "", fmt.Errorf("%w: %q: identifier %q would be both a table and a view", catalog.ErrConflict, wh, c[0])
	}
	next.Format = max(cur.Format, b.opt.configuredFormat(), w.hwm)
	etag, err := b.installLocked(ctx, w, next)
	if errors.Is(err, errLostCAS) {
		return "", fmt.Errorf("%w: %q: the snapshot changed during the replace", catalog.ErrConflict, wh)
	}
	return etag, err
}

// toGroups validates kinds and turns them into sorted groups (generation
// 0; setGen sets it), copying the values and omitting empty kinds.
func toGroups(kinds map[catalog.Kind][]catalog.Record) ([]group, error) {
	var out []group
	for k, recs := range kinds {
		if !knownKind(k) {
			return nil, fmt.Errorf("unknown kind %q", k)
		}
		if len(recs) == 0 {
			continue
		}
		g := group{Kind: k, Records: make([]record, len(recs))}
		for i, r := range recs {
			if err := validKey(r.Key); err != nil {
				return nil, fmt.Errorf("kind %q: %w", k, err)
			}
			g.Records[i] = record{Key: r.Key, Value: append([]byte{}, r.Value...)}
		}
		sort.Slice(g.Records, func(i, j int) bool { return g.Records[i].Key < g.Records[j].Key })
		for i := 1; i < len(g.Records); i++ {
			if g.Records[i].Key == g.Records[i-1].Key {
				return nil, fmt.Errorf("kind %q: key %q given twice", k, g.Records[i].Key)
			}
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out, nil
}

// setGen gives every record of s the snapshot's generation.
func setGen(s *snapshot) {
	for _, g := range s.Kinds {
		for i := range g.Records {
			g.Records[i].Gen = s.Generation
		}
	}
}

// Remove deletes warehouse wh's snapshot object when its current ETag
// equals ifETag (catalog.ErrConflict otherwise; ifETag "" with no object
// is a no-op). The delete itself is conditional in the store (If-Match),
// so no other process's publish is lost. It works over a damaged
// snapshot (name its ObjectETag). Afterwards this process treats wh as
// never seen: reads serve the empty state, Unhealthy no longer lists it,
// and the next publish starts a fresh epoch; the format high-water mark
// is kept. Another process that had seen the snapshot reports
// ErrSnapshotMissing for wh until a snapshot is published again or it
// restarts. wh "" (the registry) is refused.
func (b *Backing) Remove(ctx context.Context, wh, ifETag string) error {
	if err := validWarehouse(wh, false); err != nil {
		return fmt.Errorf("strong: remove: %w", err)
	}
	w := b.warehouse(wh)
	w.mu.Lock()
	defer w.mu.Unlock()
	cur, err := b.headETag(ctx, w.key)
	if err != nil {
		return err
	}
	if cur != ifETag {
		return fmt.Errorf("%w: %q: snapshot ETag is %q, not %q", catalog.ErrConflict, wh, cur, ifETag)
	}
	if cur != "" {
		_, err := b.store.Delete(ctx, Bucket, w.key, objstore.DeleteOptions{IfMatch: cur})
		switch {
		case errors.Is(err, objstore.ErrPreconditionFailed), errors.Is(err, objstore.ErrNoSuchKey):
			return fmt.Errorf("%w: %q: the snapshot changed during the remove", catalog.ErrConflict, wh)
		case err != nil:
			// Resolved by looking: gone is what the caller asked for.
			if now, herr := b.headETag(ctx, w.key); herr != nil || now != "" {
				return fmt.Errorf("strong: remove %s: outcome unknown: %w", w.key, err)
			}
		}
	}
	w.seen, w.loaded, w.etag, w.snap, w.bad = false, false, "", nil, nil
	b.setHealth(w)
	return nil
}

// Fingerprint identifies a warehouse's catalog content independently of
// the backing: the lowercase hex SHA-256 of the compact JSON
//
//	{"warehouse":"<wh>","registry":"<base64>","kinds":[{"kind":"<kind>",
//	 "records":[{"key":"<key>","value":"<base64>"}]}]}
//
// with kinds in ascending order (empty ones left out), records in
// ascending key order (then value), HTML characters not escaped, and
// versions and generations excluded, so the same records read from the
// object backing and from a snapshot give the same fingerprint. registry
// is the value of the warehouse's registry record (nil = empty).
func Fingerprint(wh string, registry []byte, kinds map[catalog.Kind][]catalog.Record) string {
	type fpRecord struct {
		Key   string `json:"key"`
		Value []byte `json:"value"`
	}
	type fpGroup struct {
		Kind    catalog.Kind `json:"kind"`
		Records []fpRecord   `json:"records"`
	}
	doc := struct {
		Warehouse string    `json:"warehouse"`
		Registry  []byte    `json:"registry"`
		Kinds     []fpGroup `json:"kinds"`
	}{Warehouse: wh, Registry: append([]byte{}, registry...), Kinds: []fpGroup{}}
	for k, recs := range kinds {
		if len(recs) == 0 {
			continue
		}
		g := fpGroup{Kind: k, Records: make([]fpRecord, len(recs))}
		for i, r := range recs {
			g.Records[i] = fpRecord{Key: r.Key, Value: append([]byte{}, r.Value...)}
		}
		sort.Slice(g.Records, func(i, j int) bool {
			a, b := g.Records[i], g.Records[j]
			return a.Key < b.Key || a.Key == b.Key && bytes.Compare(a.Value, b.Value) < 0
		})
		doc.Kinds = append(doc.Kinds, g)
	}
	sort.Slice(doc.Kinds, func(i, j int) bool { return doc.Kinds[i].Kind < doc.Kinds[j].Kind })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Strings, byte slices and slices of them always encode, and a
	// bytes.Buffer does not fail: the error is always nil.
	_ = enc.Encode(&doc)
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return hex.EncodeToString(sum[:])
}
