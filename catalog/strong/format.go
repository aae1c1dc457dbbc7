package strong

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairnstore/cairn/catalog"
)

// magic opens every snapshot object.
const magic = "cairn-strong-snapshot"

// Formats this binary reads; it writes formatV1 unless the gates say 2.
const (
	formatV1 = 1
	formatV2 = 2
)

// snapshot is one warehouse's whole state: the decoded body of a snapshot
// object. It is also the in-memory state: mutations work on a clone.
type snapshot struct {
	Format     int     `json:"format"`
	Warehouse  string  `json:"warehouse"`
	Epoch      string  `json:"epoch"`
	Generation uint64  `json:"generation"`
	Kinds      []group `json:"kinds"`
}

// group holds the records of one kind in ascending key order.
type group struct {
	Kind    catalog.Kind `json:"kind"`
	Count   int          `json:"count,omitempty"` // v2 only: len(Records)
	Records []record     `json:"records"`
}

// record is one record; Gen is the snapshot generation that last wrote it.
type record struct {
	Key   string `json:"key"`
	Gen   uint64 `json:"gen"`
	Value []byte `json:"value"`
}

// encode renders s canonically: the header line, then the JSON body.
// Struct fields encode in declaration order and slices are kept sorted,
// so equal states give equal bytes.
func encode(s *snapshot) ([]byte, error) {
	c := *s
	c.Kinds = make([]group, len(s.Kinds))
	for i, g := range s.Kinds {
		g.Count = 0
		if s.Format >= formatV2 {
			g.Count = len(g.Records)
		}
		recs := make([]record, len(g.Records))
		for j, r := range g.Records {
			if r.Value == nil {
				r.Value = []byte{}
			}
			recs[j] = r
		}
		g.Records = recs
		c.Kinds[i] = g
	}
	body, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("strong: encode: %w", err)
	}
	sum := sha256.Sum256(body)
	out := fmt.Appendf(nil, "%s %d %d %s\n", magic, s.Format, len(body), hex.EncodeToString(sum[:]))
	out = append(out, body...)
	if len(out) > MaxSnapshot {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(out))
	}
	return out, nil
}

// decode parses and validates a snapshot object of warehouse wh: header,
// checksum, strict JSON, every invariant, and canonical form (re-encoding
// gives the same bytes). minFormat is the warehouse's high-water mark.
// Every error wraps ErrSnapshotInvalid.
func decode(data []byte, wh string, minFormat int) (*snapshot, error) {
	s, err := decodeAny(data)
	if err != nil {
		return nil, err
	}
	if s.Warehouse != wh {
		return nil, invalid("snapshot of warehouse %q read as %q", s.Warehouse, wh)
	}
	if s.Format < minFormat {
		return nil, fmt.Errorf("%w: %w: format %d, process has seen %d", ErrSnapshotInvalid, ErrBelowHighWater, s.Format, minFormat)
	}
	return s, nil
}

// decodeAny is decode without the warehouse and high-water checks.
func decodeAny(data []byte) (*snapshot, error) {
	if len(data) > MaxSnapshot {
		return nil, invalid("%d bytes, over the cap", len(data))
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, invalid("no header line")
	}
	f := strings.Split(string(data[:nl]), " ")
	if len(f) != 4 || f[0] != magic {
		return nil, invalid("bad magic")
	}
	format, err := strconv.Atoi(f[1])
	if err != nil || (format != formatV1 && format != formatV2) {
		return nil, invalid("unknown format %q", f[1])
	}
	body := data[nl+1:]
	if n, err := strconv.Atoi(f[2]); err != nil || n != len(body) {
		return nil, invalid("body length %q, have %d", f[2], len(body))
	}
	sum := sha256.Sum256(body)
	if f[3] != hex.EncodeToString(sum[:]) {
		return nil, invalid("checksum mismatch")
	}
	var s snapshot
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, invalid("body: %v", err)
	}
	if dec.More() {
		return nil, invalid("trailing data after body")
	}
	if s.Format != format {
		return nil, invalid("body format %d, header %d", s.Format, format)
	}
	if err := validate(&s); err != nil {
		return nil, err
	}
	again, err := encode(&s)
	if err != nil {
		return nil, invalid("re-encode: %v", err)
	}
	if !bytes.Equal(again, data) {
		return nil, invalid("not in canonical form")
	}
	return &s, nil
}

// validate checks the invariants of a decoded (or about to be encoded)
// snapshot.
func validate(s *snapshot) error {
	if err := validWarehouse(s.Warehouse, true); err != nil {
		return invalid("%v", err)
	}
	if !validEpoch(s.Epoch) {
		return invalid("bad epoch %q", s.Epoch)
	}
	if s.Generation == 0 {
		return invalid("generation 0")
	}
	prev := catalog.Kind("")
	for i, g := range s.Kinds {
		if !knownKind(g.Kind) {
			return invalid("unknown kind %q", g.Kind)
		}
		if i > 0 && g.Kind <= prev {
			return invalid("kind %q out of order or repeated", g.Kind)
		}
		prev = g.Kind
		if len(g.Records) == 0 {
			return invalid("kind %q has no records", g.Kind)
		}
		switch {
		case s.Format == formatV1 && g.Count != 0:
			return invalid("kind %q: count in a v1 snapshot", g.Kind)
		case s.Format >= formatV2 && g.Count != len(g.Records):
			return invalid("kind %q: count %d, %d records", g.Kind, g.Count, len(g.Records))
		}
		for j, r := range g.Records {
			if err := validKey(r.Key); err != nil {
				return invalid("kind %q: %v", g.Kind, err)
			}
			if j > 0 && r.Key <= g.Records[j-1].Key {
				return invalid("kind %q: key %q out of order or repeated", g.Kind, r.Key)
			}
			if r.Gen == 0 || r.Gen > s.Generation {
				return invalid("kind %q key %q: generation %d outside 1..%d", g.Kind, r.Key, r.Gen, s.Generation)
			}
		}
	}
	if s.Format >= formatV2 {
		if c := collisions(s); len(c) > 0 {
			return invalid("v2 snapshot holds %d table/view identifier collisions", len(c))
		}
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSnapshotInvalid, fmt.Sprintf(format, args...))
}

func knownKind(k catalog.Kind) bool {
	for _, c := range catalog.Kinds() {
		if k == c {
			return true
		}
	}
	return false
}

// validKey: the Backing contract's keys (non-empty UTF-8 without NUL).
func validKey(key string) error {
	if key == "" || strings.ContainsRune(key, 0) || !utf8.ValidString(key) {
		return fmt.Errorf("invalid key %q", key)
	}
	return nil
}

// validWarehouse: a name usable in an object key; "" (the registry) only
// when allowEmpty.
func validWarehouse(wh string, allowEmpty bool) error {
	if wh == "" && allowEmpty {
		return nil
	}
	if wh == "" || strings.ContainsAny(wh, "/\x00") || !utf8.ValidString(wh) || wh == "." || wh == ".." || len(wh) > 255 {
		return fmt.Errorf("invalid warehouse name %q", wh)
	}
	return nil
}

func validEpoch(e string) bool {
	if len(e) != 16 {
		return false
	}
	for _, c := range e {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
