package sse

import (
	"encoding/json"
	"fmt"
)

// Record is what the face keeps in a version's (or an upload's)
// Attrs.Sys[sysSSE]: how its object key is sealed. It holds no key in
// the clear. Encoded as compact JSON:
//
//	{"v":1,"k":"S3","id":"<key id>","s":"<base64 sealed key>","c":"<context>","b":true}
//
// k is the Kind; id the master key's id (S3) or the ring key's name
// (KMS), empty for SSE-C; s the nonce, sealed object key and tag (60
// bytes); c the SSE-KMS encryption context as the client sent it; b the
// SSE-KMS bucket-key flag (echoed only). KMSKeyID is the key id as the
// client named it (an ARN or a name), echoed in responses.
type Record struct {
	Kind      Kind   `json:"k"`
	KeyID     string `json:"id,omitempty"`
	Sealed    []byte `json:"s"`
	Context   string `json:"c,omitempty"`
	BucketKey bool   `json:"b,omitempty"`
	KMSKeyID  string `json:"n,omitempty"`
}

type recordV1 struct {
	V int `json:"v"`
	Record
}

// Encode is rec's Sys encoding.
func (r Record) Encode() string {
	b, _ := json.Marshal(recordV1{V: 1, Record: r}) // cannot fail: plain fields
	return string(b)
}

// maxRecord bounds what DecodeRecord reads.
const maxRecord = 4 << 10

// DecodeRecord parses a Sys record; ErrCorrupt when it is not one.
func DecodeRecord(s string) (Record, error) {
	if len(s) > maxRecord {
		return Record{}, fmt.Errorf("%w: record of %d bytes", ErrCorrupt, len(s))
	}
	var r recordV1
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return Record{}, fmt.Errorf("%w: record: %v", ErrCorrupt, err)
	}
	if r.V != 1 {
		return Record{}, fmt.Errorf("%w: record version %d", ErrCorrupt, r.V)
	}
	switch r.Kind {
	case KindC, KindS3, KindKMS:
	default:
		return Record{}, fmt.Errorf("%w: record kind %q", ErrCorrupt, r.Kind)
	}
	if len(r.Sealed) != 12+KeySize+TagSize {
		return Record{}, fmt.Errorf("%w: sealed key of %d bytes", ErrCorrupt, len(r.Sealed))
	}
	if r.Kind == KindKMS && r.KeyID == "" {
		return Record{}, fmt.Errorf("%w: SSE-KMS record without a key", ErrCorrupt)
	}
	return r.Record, nil
}
