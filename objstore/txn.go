package objstore

import (
	"fmt"
	"time"

	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Helpers that run inside one index transaction. They check before they
// write, so a failing request leaves its transaction untouched.

func getBucket(tx meta.Tx, name string) (*meta.Bucket, error) {
	raw, err := tx.Get(meta.Buckets, []byte(name))
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchBucket, name)
	}
	var b meta.Bucket
	if err := meta.Decode(raw, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// requireBucket fails with ErrNoSuchBucket unless the bucket exists; it
// does not decode the record (hot paths only need to know).
func requireBucket(tx meta.Tx, name string) error {
	raw, err := tx.Get(meta.Buckets, []byte(name))
	if err != nil {
		return err
	}
	if raw == nil {
		return fmt.Errorf("%w: %s", ErrNoSuchBucket, name)
	}
	return nil
}

// currentVersion returns the key's current version, nil when it has none.
func currentVersion(tx meta.Tx, bucket, key string) (*meta.Version, error) {
	raw, err := tx.Get(meta.Objects, meta.ObjectKey(bucket, key))
	if raw == nil || err != nil {
		return nil, err
	}
	var v meta.Version
	if err := meta.Decode(raw, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// keyVersions returns every version of the key, newest first.
func keyVersions(tx meta.Tx, bucket, key string) ([]meta.Version, error) {
	prefix := meta.VersionPrefix(bucket, key)
	var out []meta.Version
	err := meta.Scan(tx, meta.Versions, prefix, func(k, v []byte) error {
		if len(k) != len(prefix)+8 {
			return nil // a longer key that shares the prefix cannot: keys hold no NUL
		}
		var ver meta.Version
		if err := meta.Decode(v, &ver); err != nil {
			return err
		}
		out = append(out, ver)
		return nil
	})
	return out, err
}

// findVersion returns the version with the given id.
func findVersion(tx meta.Tx, bucket, key, vid string) (*meta.Version, error) {
	if vid != NullVersion {
		if seq, ok := parseVersionID(vid); ok {
			raw, err := tx.Get(meta.Versions, meta.VersionKey(bucket, key, seq))
			if err != nil {
				return nil, err
			}
			if raw == nil {
				return nil, fmt.Errorf("%w: %s %s", ErrNoSuchVersion, key, vid)
			}
			var v meta.Version
			if err := meta.Decode(raw, &v); err != nil {
				return nil, err
			}
			if v.VersionID != vid {
				return nil, fmt.Errorf("%w: %s %s", ErrNoSuchVersion, key, vid)
			}
			return &v, nil
		}
		return nil, fmt.Errorf("%w: %s %s", ErrNoSuchVersion, key, vid)
	}
	vs, err := keyVersions(tx, bucket, key)
	if err != nil {
		return nil, err
	}
	for i := range vs {
		if vs[i].VersionID == NullVersion {
			return &vs[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %s null", ErrNoSuchVersion, key)
}

func versionID(seq uint64) string { return fmt.Sprintf("%016x", seq) }

func parseVersionID(vid string) (uint64, bool) {
	if len(vid) != 16 {
		return 0, false
	}
	var seq uint64
	if _, err := fmt.Sscanf(vid, "%016x", &seq); err != nil {
		return 0, false
	}
	return seq, versionID(seq) == vid
}

// checkConds applies If-Match and If-None-Match (* or an ETag, RFC 7232:
// fails when the current version has it) to the current version.
func checkConds(cur *meta.Version, key, ifMatch, ifNoneMatch string) error {
	if ifMatch != "" {
		if cur == nil {
			return fmt.Errorf("%w: %s (If-Match)", ErrNoSuchKey, key)
		}
		if normETag(ifMatch) != "*" && normETag(ifMatch) != cur.ETag {
			return fmt.Errorf("%w: If-Match %s, current ETag %s", ErrPreconditionFailed, normETag(ifMatch), cur.ETag)
		}
	}
	switch {
	case ifNoneMatch == "" || cur == nil:
	case ifNoneMatch == "*":
		return fmt.Errorf("%w: If-None-Match: * and %s exists", ErrPreconditionFailed, key)
	case normETag(ifNoneMatch) == cur.ETag:
		return fmt.Errorf("%w: If-None-Match %s is the current ETag", ErrPreconditionFailed, cur.ETag)
	}
	return nil
}

// adjustRefs adds delta to the reference count of each segment's data,
// once per segment.
func adjustRefs(tx meta.Tx, segs []meta.Segment, delta int64) error {
	var rd refDelta
	rd.add(segs, delta)
	return rd.apply(tx)
}

// refDelta gathers reference count changes by data id, so that each data
// record is read and written once however many segments name it (a
// patched version names the same few data objects many times), and not
// at all when its changes cancel out (a rewritten chunk keeps most of
// the segments of the one it replaces).
type refDelta struct {
	counts map[string]int64
	order  []string
}

// add counts delta for each of segs.
func (rd *refDelta) add(segs []meta.Segment, delta int64) {
	if rd.counts == nil {
		rd.counts = make(map[string]int64, 4)
	}
	for _, sg := range segs {
		if _, ok := rd.counts[sg.Data]; !ok {
			rd.order = append(rd.order, sg.Data)
		}
		rd.counts[sg.Data] += delta
	}
}

// apply writes the changes to the data records: a count reaching zero
// moves the record to garbage, one rising from garbage takes it back.
func (rd *refDelta) apply(tx meta.Tx) error {
	for _, data := range rd.order {
		delta := rd.counts[data]
		if delta == 0 {
			continue
		}
		id, err := erasure.ParseDataID(data)
		if err != nil {
			return fmt.Errorf("%w: segment data id %q", meta.ErrCorruptRecord, data)
		}
		key := meta.DataKey(id)
		var d meta.Data
		raw, err := tx.Get(meta.DataTable, key)
		if err != nil {
			return err
		}
		var graw []byte
		if raw == nil && delta > 0 {
			if graw, err = tx.Get(meta.Garbage, key); err != nil {
				return err
			}
		}
		if raw != nil {
			if err := meta.Decode(raw, &d); err != nil {
				return err
			}
		} else if graw != nil {
			// Referenced again (by a reader's pinned copy) before the
			// cleaner freed it: the pin kept its shards, take it back.
			var g meta.GarbageEntry
			if err := meta.Decode(graw, &g); err != nil {
				return err
			}
			d = g.Data
			if err := tx.Delete(meta.Garbage, key); err != nil {
				return err
			}
		} else {
			return fmt.Errorf("%w: data %s is not in the index", ErrDataCorrupt, data)
		}
		d.Refs += delta
		if d.Refs > 0 {
			if err := tx.Put(meta.DataTable, key, meta.Encode(d)); err != nil {
				return err
			}
			continue
		}
		if err := tx.Delete(meta.DataTable, key); err != nil {
			return err
		}
		g := meta.GarbageEntry{Data: d, Since: time.Now().UTC()}
		if err := tx.Put(meta.Garbage, key, meta.Encode(g)); err != nil {
			return err
		}
	}
	return nil
}

func addRefs(tx meta.Tx, segs []meta.Segment) error  { return adjustRefs(tx, segs, 1) }
func dropRefs(tx meta.Tx, segs []meta.Segment) error { return adjustRefs(tx, segs, -1) }

// installVersion makes v the newest version of key, following the
// bucket's versioning: with versioning enabled v gets a fresh version id;
// otherwise it is the null version and replaces any earlier null version,
// whose data references are dropped. v's own segment references must
// already be counted by the caller.
func installVersion(tx meta.Tx, b *meta.Bucket, key string, v *meta.Version) error {
	return installVersionFrom(tx, b, key, v, nil)
}

// installVersionFrom is installVersion for a version that takes over the
// data references of the null version it replaces, inherit (an append
// in a bucket without versioning enabled: the new version's segments
// are inherit's plus new ones): inherit's references are not dropped,
// they pass to v, whose caller counts only its new segments. A nil
// inherit is installVersion.
func installVersionFrom(tx meta.Tx, b *meta.Bucket, key string, v, inherit *meta.Version) error {
	seq, err := tx.NextSeq()
	if err != nil {
		return err
	}
	v.Seq = seq
	if b.Versioning == VersioningEnabled {
		v.VersionID = versionID(seq)
	} else {
		v.VersionID = NullVersion
		vs, err := keyVersions(tx, b.Name, key)
		if err != nil {
			return err
		}
		for i := range vs {
			if vs[i].VersionID != NullVersion {
				continue
			}
			if err := checkRemovable(&vs[i], key, time.Now(), false); err != nil {
				return err // a locked null version is not overwritten
			}
			if inherit == nil || vs[i].Seq != inherit.Seq {
				if err := dropVersionRefs(tx, &vs[i]); err != nil {
					return err
				}
			}
			if err := tx.Delete(meta.Versions, meta.VersionKey(b.Name, key, vs[i].Seq)); err != nil {
				return err
			}
		}
	}
	rec := meta.Encode(v)
	if err := tx.Put(meta.Versions, meta.VersionKey(b.Name, key, seq), rec); err != nil {
		return err
	}
	if v.DeleteMarker {
		return tx.Delete(meta.Objects, meta.ObjectKey(b.Name, key))
	}
	return tx.Put(meta.Objects, meta.ObjectKey(b.Name, key), rec)
}

// removeVersion deletes one version permanently and, when it was the
// newest, makes the next one current (or the key absent).
func removeVersion(tx meta.Tx, bucket, key string, v *meta.Version) error {
	if err := dropVersionRefs(tx, v); err != nil {
		return err
	}
	if err := tx.Delete(meta.Versions, meta.VersionKey(bucket, key, v.Seq)); err != nil {
		return err
	}
	vs, err := keyVersions(tx, bucket, key)
	if err != nil {
		return err
	}
	if len(vs) == 0 || vs[0].DeleteMarker {
		return tx.Delete(meta.Objects, meta.ObjectKey(bucket, key))
	}
	return tx.Put(meta.Objects, meta.ObjectKey(bucket, key), meta.Encode(vs[0]))
}
