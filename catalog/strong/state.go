package strong

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/catalog"
)

// newSnapshot is the empty state of a warehouse that has no snapshot yet;
// its epoch is fresh, so versions never repeat across a deleted and
// re-created snapshot.
func newSnapshot(wh string) (*snapshot, error) {
	var e [8]byte
	if _, err := rand.Read(e[:]); err != nil {
		return nil, fmt.Errorf("strong: epoch: %w", err)
	}
	return &snapshot{Format: formatV1, Warehouse: wh, Epoch: hex.EncodeToString(e[:])}, nil
}

// clone copies s deeply enough for a mutation: record values are never
// changed in place, so they are shared.
func (s *snapshot) clone() *snapshot {
	c := *s
	c.Kinds = make([]group, len(s.Kinds))
	for i, g := range s.Kinds {
		g.Records = append([]record(nil), g.Records...)
		c.Kinds[i] = g
	}
	return &c
}

// version is the opaque token of a record written at generation gen.
func (s *snapshot) version(gen uint64) string {
	return s.Epoch + "." + strconv.FormatUint(gen, 10)
}

// group returns the index of kind's group, or -1.
func (s *snapshot) group(kind catalog.Kind) int {
	i := sort.Search(len(s.Kinds), func(i int) bool { return s.Kinds[i].Kind >= kind })
	if i < len(s.Kinds) && s.Kinds[i].Kind == kind {
		return i
	}
	return -1
}

// find returns the record's (group, index) and whether it exists.
func (s *snapshot) find(kind catalog.Kind, key string) (gi, ri int, ok bool) {
	gi = s.group(kind)
	if gi < 0 {
		return -1, 0, false
	}
	recs := s.Kinds[gi].Records
	ri = sort.Search(len(recs), func(i int) bool { return recs[i].Key >= key })
	return gi, ri, ri < len(recs) && recs[ri].Key == key
}

// get returns the record as the Backing returns it.
func (s *snapshot) get(kind catalog.Kind, key string) (catalog.Record, bool) {
	gi, ri, ok := s.find(kind, key)
	if !ok {
		return catalog.Record{}, false
	}
	r := s.Kinds[gi].Records[ri]
	return catalog.Record{Key: r.Key, Value: append([]byte{}, r.Value...), Version: s.version(r.Gen)}, true
}

// check evaluates a Put or Delete condition against the current record.
func (s *snapshot) check(kind catalog.Kind, key, ifVersion string, isPut bool) error {
	cur, ok := s.get(kind, key)
	switch {
	case ifVersion == catalog.AnyVersion:
		return nil
	case ifVersion == "" && isPut:
		if ok {
			return fmt.Errorf("%w: %s/%s exists", catalog.ErrConflict, kind, key)
		}
		return nil
	case ifVersion == "":
		return nil
	case !ok:
		return fmt.Errorf("%w: %s/%s", catalog.ErrNotFound, kind, key)
	case cur.Version != ifVersion:
		return fmt.Errorf("%w: %s/%s is at another version", catalog.ErrConflict, kind, key)
	}
	return nil
}

// put sets the record at generation gen (s.Generation must already be
// gen).
func (s *snapshot) put(kind catalog.Kind, key string, value []byte, gen uint64) {
	v := append([]byte{}, value...)
	gi, ri, ok := s.find(kind, key)
	if gi < 0 {
		at := sort.Search(len(s.Kinds), func(i int) bool { return s.Kinds[i].Kind >= kind })
		s.Kinds = append(s.Kinds, group{})
		copy(s.Kinds[at+1:], s.Kinds[at:])
		s.Kinds[at] = group{Kind: kind, Records: []record{{Key: key, Gen: gen, Value: v}}}
		return
	}
	g := &s.Kinds[gi]
	if ok {
		g.Records[ri] = record{Key: key, Gen: gen, Value: v}
		return
	}
	g.Records = append(g.Records, record{})
	copy(g.Records[ri+1:], g.Records[ri:])
	g.Records[ri] = record{Key: key, Gen: gen, Value: v}
}

// del removes the record; it reports whether it existed.
func (s *snapshot) del(kind catalog.Kind, key string) bool {
	gi, ri, ok := s.find(kind, key)
	if !ok {
		return false
	}
	g := &s.Kinds[gi]
	g.Records = append(g.Records[:ri], g.Records[ri+1:]...)
	if len(g.Records) == 0 {
		s.Kinds = append(s.Kinds[:gi], s.Kinds[gi+1:]...)
	}
	return true
}

// list returns a page of a kind's records.
func (s *snapshot) list(kind catalog.Kind, opt catalog.ListOptions) ([]catalog.Record, bool) {
	gi := s.group(kind)
	if gi < 0 {
		return nil, false
	}
	recs := s.Kinds[gi].Records
	from := opt.Prefix
	if opt.After >= from {
		from = opt.After + "\x00" // strictly after
	}
	i := sort.Search(len(recs), func(i int) bool { return recs[i].Key >= from })
	var out []catalog.Record
	for ; i < len(recs) && strings.HasPrefix(recs[i].Key, opt.Prefix); i++ {
		if opt.Limit > 0 && len(out) == opt.Limit {
			return out, true
		}
		r := catalog.Record{Key: recs[i].Key}
		if !opt.KeysOnly {
			r.Value = append([]byte{}, recs[i].Value...)
			r.Version = s.version(recs[i].Gen)
		}
		out = append(out, r)
	}
	return out, false
}

// collisions returns the identifiers present both as a table and as a
// view, in ascending order.
func collisions(s *snapshot) []string {
	ti, vi := s.group(catalog.KindTable), s.group(catalog.KindView)
	if ti < 0 || vi < 0 {
		return nil
	}
	var out []string
	ts, vs := s.Kinds[ti].Records, s.Kinds[vi].Records
	for i, j := 0, 0; i < len(ts) && j < len(vs); {
		switch {
		case ts[i].Key < vs[j].Key:
			i++
		case ts[i].Key > vs[j].Key:
			j++
		default:
			out = append(out, ts[i].Key)
			i++
			j++
		}
	}
	return out
}

// strictSubset reports whether a ⊊ b (both ascending).
func strictSubset(a, b []string) bool {
	if len(a) >= len(b) {
		return false
	}
	set := make(map[string]bool, len(b))
	for _, k := range b {
		set[k] = true
	}
	for _, k := range a {
		if !set[k] {
			return false
		}
	}
	return true
}
