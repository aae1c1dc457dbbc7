package meta

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The records read on every object access (Version and Data) are kept in
// a compact binary form; the others are JSON. A binary record starts with
// binaryTag, which no JSON text does, so Decode tells them apart.
//
//	Version: tag 'V' | str VersionID | uvarint Seq | varint Size | str ETag |
//	         time ModTime | str ContentType | byte flags (1: delete marker) |
//	         uvarint n, n × (str key, str value) (Meta, sorted by key) |
//	         uvarint n, n × (id Data, varint Offset, varint Length) (Segments) |
//	         uvarint n, n × varint (PartSizes) | str UploadID |
//	         [str Owner | uvarint n, n × (str key, str value) (Sys, sorted) |
//	          str Retention.Mode | time Retention.Until | byte flags (1: legal hold)]
//	Chunked: tag 'W' | as 'V' up to and with the (empty) Segments |
//	         uvarint n, n × (uvarint ID, varint Length, uvarint Segs) (Chunks) |
//	         the rest as 'V'
//	Chunk:   tag 'K' | uvarint n, n × (id Data, varint Offset, varint Length)
//	Data:    tag 'D' | uvarint K, M, BlockSize | varint Size, Refs |
//	         str Bucket, Key | time Created | uvarint Pack | varint Off, Len
//
// A version with Chunks is written as 'W', so that a binary that does not
// know chunks refuses it (ErrCorruptRecord) rather than read it as empty.
// The bracketed tail is absent from records written before versions had
// attributes, and from any version whose attributes are all zero.
//
// str is a uvarint length and the bytes; time is the byte 0 for the zero
// time, else 1 and a varint of Unix nanoseconds; id is the byte 0 and 16
// raw bytes for a 32-digit hex data id, else the byte 1 and a str.
const binaryTag = 0x01

var errShort = errors.New("truncated record")

type encoder struct{ b []byte }

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.varint(t.UnixNano())
}
func (e *encoder) id(s string) {
	if raw, err := hex.DecodeString(s); err == nil && len(raw) == 16 && hex.EncodeToString(raw) == s {
		e.b = append(e.b, 0)
		e.b = append(e.b, raw...)
		return
	}
	e.b = append(e.b, 1)
	e.str(s)
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err = errShort }

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) byte1() byte {
	b := d.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (d *decoder) str() string { return string(d.bytes(d.uvarint())) }

func (d *decoder) time() time.Time {
	if d.byte1() == 0 {
		return time.Time{}
	}
	return time.Unix(0, d.varint()).UTC()
}

func (d *decoder) id() string {
	switch d.byte1() {
	case 0:
		return hex.EncodeToString(d.bytes(16))
	case 1:
		return d.str()
	}
	d.fail()
	return ""
}

// count reads a collection length, refusing one the record cannot hold
// (each element takes at least one byte).
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func encodeVersion(v *Version) []byte {
	e := encoder{b: make([]byte, 0, 128+24*len(v.Chunks))}
	kind := byte('V')
	if len(v.Chunks) > 0 {
		kind = 'W'
	}
	e.b = append(e.b, binaryTag, kind)
	e.str(v.VersionID)
	e.uvarint(v.Seq)
	e.varint(v.Size)
	e.str(v.ETag)
	e.time(v.ModTime)
	e.str(v.ContentType)
	var flags byte
	if v.DeleteMarker {
		flags |= 1
	}
	e.b = append(e.b, flags)
	e.strMap(v.Meta)
	e.segments(v.Segments)
	if kind == 'W' {
		e.uvarint(uint64(len(v.Chunks)))
		for _, c := range v.Chunks {
			e.uvarint(c.ID)
			e.varint(c.Length)
			e.uvarint(uint64(c.Segs))
		}
	}
	e.uvarint(uint64(len(v.PartSizes)))
	for _, p := range v.PartSizes {
		e.varint(p)
	}
	e.str(v.UploadID)
	if a := &v.Attrs; a.Owner != "" || len(a.Sys) > 0 || a.Retention != (Retention{}) || a.LegalHold {
		e.str(a.Owner)
		e.strMap(a.Sys)
		e.str(a.Retention.Mode)
		e.time(a.Retention.Until)
		var flags byte
		if a.LegalHold {
			flags |= 1
		}
		e.b = append(e.b, flags)
	}
	return e.b
}

// segments writes a segment list.
func (e *encoder) segments(segs []Segment) {
	e.uvarint(uint64(len(segs)))
	for _, s := range segs {
		e.id(s.Data)
		e.varint(s.Offset)
		e.varint(s.Length)
	}
}

// segments reads what encoder.segments wrote; nil when empty.
func (d *decoder) segments() []Segment {
	n := d.count()
	if n == 0 {
		return nil
	}
	segs := make([]Segment, n)
	for i := 0; i < n && d.err == nil; i++ {
		segs[i] = Segment{Data: d.id(), Offset: d.varint(), Length: d.varint()}
	}
	return segs
}

func encodeChunk(c *Chunk) []byte {
	e := encoder{b: make([]byte, 0, 4+26*len(c.Segments))}
	e.b = append(e.b, binaryTag, 'K')
	e.segments(c.Segments)
	return e.b
}

func decodeChunk(raw []byte, c *Chunk) error {
	d := decoder{b: raw}
	*c = Chunk{Segments: d.segments()}
	if d.err == nil && len(d.b) > 0 {
		return fmt.Errorf("%d bytes past the end", len(d.b))
	}
	return d.err
}

// strMap writes m sorted by key.
func (e *encoder) strMap(m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.uvarint(uint64(len(keys)))
	for _, k := range keys {
		e.str(k)
		e.str(m[k])
	}
}

// strMap reads what encoder.strMap wrote; nil when empty.
func (d *decoder) strMap() map[string]string {
	n := d.count()
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.str()
		m[k] = d.str()
	}
	return m
}

func decodeVersion(raw []byte, v *Version, chunked bool) error {
	d := decoder{b: raw}
	*v = Version{}
	v.VersionID = d.str()
	v.Seq = d.uvarint()
	v.Size = d.varint()
	v.ETag = d.str()
	v.ModTime = d.time()
	v.ContentType = d.str()
	v.DeleteMarker = d.byte1()&1 != 0
	v.Meta = d.strMap()
	v.Segments = d.segments()
	if chunked {
		n := d.count()
		if n == 0 && d.err == nil {
			return errors.New("a chunked version without chunks")
		}
		v.Chunks = make([]ChunkRef, n)
		for i := 0; i < n && d.err == nil; i++ {
			v.Chunks[i] = ChunkRef{ID: d.uvarint(), Length: d.varint(), Segs: int(min(d.uvarint(), 1<<31))}
		}
	}
	if n := d.count(); n > 0 {
		v.PartSizes = make([]int64, n)
		for i := 0; i < n && d.err == nil; i++ {
			v.PartSizes[i] = d.varint()
		}
	}
	v.UploadID = d.str()
	if d.err == nil && len(d.b) > 0 {
		a := &v.Attrs
		a.Owner = d.str()
		a.Sys = d.strMap()
		a.Retention.Mode = d.str()
		a.Retention.Until = d.time()
		a.LegalHold = d.byte1()&1 != 0
	}
	return d.err
}

func encodeData(x *Data) []byte {
	e := encoder{b: make([]byte, 0, 64)}
	e.b = append(e.b, binaryTag, 'D')
	e.uvarint(uint64(x.K))
	e.uvarint(uint64(x.M))
	e.uvarint(uint64(x.BlockSize))
	e.varint(x.Size)
	e.varint(x.Refs)
	e.str(x.Bucket)
	e.str(x.Key)
	e.time(x.Created)
	e.uvarint(x.Pack)
	e.varint(x.Off)
	e.varint(x.Len)
	return e.b
}

func decodeData(raw []byte, x *Data) error {
	d := decoder{b: raw}
	*x = Data{}
	x.K = int(min(d.uvarint(), 1<<16))
	x.M = int(min(d.uvarint(), 1<<16))
	x.BlockSize = int(min(d.uvarint(), 1<<40))
	x.Size = d.varint()
	x.Refs = d.varint()
	x.Bucket = d.str()
	x.Key = d.str()
	x.Created = d.time()
	x.Pack = d.uvarint()
	x.Off = d.varint()
	x.Len = d.varint()
	return d.err
}

// IsChunked reports whether raw is a chunked version record (whose
// segments are in its chunks, not in the record).
func IsChunked(raw []byte) bool {
	return len(raw) > 1 && raw[0] == binaryTag && raw[1] == 'W'
}

// decodeBinary decodes a binary record into v, which must be the record's
// type.
func decodeBinary(raw []byte, v any) error {
	if len(raw) < 2 {
		return fmt.Errorf("%w: %v", ErrCorruptRecord, errShort)
	}
	var err error
	switch x := v.(type) {
	case *Version:
		if raw[1] != 'V' && raw[1] != 'W' {
			return fmt.Errorf("%w: record kind %q, want a version", ErrCorruptRecord, raw[1])
		}
		err = decodeVersion(raw[2:], x, raw[1] == 'W')
	case *Chunk:
		if raw[1] != 'K' {
			return fmt.Errorf("%w: record kind %q, want a chunk", ErrCorruptRecord, raw[1])
		}
		err = decodeChunk(raw[2:], x)
	case *Data:
		if raw[1] != 'D' {
			return fmt.Errorf("%w: record kind %q, want data", ErrCorruptRecord, raw[1])
		}
		err = decodeData(raw[2:], x)
	default:
		return fmt.Errorf("%w: binary record for %T", ErrCorruptRecord, v)
	}
	if err != nil {
		return fmt.Errorf("%w: %T: %v", ErrCorruptRecord, v, err)
	}
	return nil
}
