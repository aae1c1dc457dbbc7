package sse

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// Kind is how an object's key is sealed.
type Kind string

// The kinds of server-side encryption.
const (
	KindC   Kind = "C"   // SSE-C: the customer's key
	KindS3  Kind = "S3"  // SSE-S3: the server's master key
	KindKMS Kind = "KMS" // SSE-KMS: a named key of the local key ring
)

// Errors opening an object key.
var (
	// ErrWrongKey: the customer's key is not the one the object was
	// written with.
	ErrWrongKey = errors.New("sse: the key given does not open the object's key")
	// ErrMasterKey: the server's master key does not open the object's
	// key (a lost or replaced master key).
	ErrMasterKey = errors.New("sse: the master key does not open the object's key")
	// ErrNoMasterKey: SSE-S3 without a master key configured.
	ErrNoMasterKey = errors.New("sse: no master key is configured")
	// ErrNoSuchKey: SSE-KMS names a key the key ring does not hold.
	ErrNoSuchKey = errors.New("sse: the key ring has no such key")
)

// KeySize is the size of every key: object, customer, master and ring keys.
const KeySize = 32

// Keys are the server's keys: the SSE-S3 master key and the SSE-KMS key
// ring. The zero value has neither. Read-only once built.
type Keys struct {
	master   []byte
	masterID string
	ring     map[string][]byte
	defKey   string // the ring's first key, for aws:kms without a key id
}

// NewKeys builds Keys from a master key (nil: none) and a key ring
// (names in order, the first being the default key).
func NewKeys(master []byte, ring []NamedKey) (*Keys, error) {
	k := &Keys{ring: map[string][]byte{}}
	if master != nil {
		if len(master) != KeySize {
			return nil, fmt.Errorf("sse: the master key has %d bytes, want %d", len(master), KeySize)
		}
		k.master, k.masterID = master, KeyID(master)
	}
	for i, nk := range ring {
		if len(nk.Key) != KeySize {
			return nil, fmt.Errorf("sse: key %q has %d bytes, want %d", nk.Name, len(nk.Key), KeySize)
		}
		if _, dup := k.ring[nk.Name]; dup {
			return nil, fmt.Errorf("sse: key %q is in the key ring twice", nk.Name)
		}
		k.ring[nk.Name] = nk.Key
		if i == 0 {
			k.defKey = nk.Name
		}
	}
	return k, nil
}

// KeyID names a key without revealing it: the first 8 bytes of its
// SHA-256, hex.
func KeyID(key []byte) string {
	s := sha256.Sum256(key)
	return hex.EncodeToString(s[:8])
}

// MasterID is the master key's id ("" without one).
func (k *Keys) MasterID() string { return k.masterID }

// DefaultKMSKey is the key ring's default key name ("" when empty).
func (k *Keys) DefaultKMSKey() string { return k.defKey }

// HasKMSKey says whether the ring holds name.
func (k *Keys) HasKMSKey(name string) bool { _, ok := k.ring[name]; return ok }

// Params say how to seal or open one object's key.
type Params struct {
	Kind        Kind
	CustomerKey []byte // SSE-C
	KMSKey      string // SSE-KMS: the ring key's name
	Context     string // SSE-KMS encryption context (as sent, base64 JSON)
}

func (k *Keys) kek(p Params) ([]byte, string, error) {
	var secret []byte
	var label, id string
	switch p.Kind {
	case KindC:
		if len(p.CustomerKey) != KeySize {
			return nil, "", fmt.Errorf("sse: customer key has %d bytes, want %d", len(p.CustomerKey), KeySize)
		}
		secret, label = p.CustomerKey, "cairn-sse/v1/sse-c"
	case KindS3:
		if k.master == nil {
			return nil, "", ErrNoMasterKey
		}
		secret, label, id = k.master, "cairn-sse/v1/sse-s3", k.masterID
	case KindKMS:
		key, ok := k.ring[p.KMSKey]
		if !ok {
			return nil, "", fmt.Errorf("%w: %q", ErrNoSuchKey, p.KMSKey)
		}
		secret, label, id = key, "cairn-sse/v1/kms/"+p.KMSKey, p.KMSKey
	default:
		return nil, "", fmt.Errorf("sse: unknown kind %q", p.Kind)
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil), id, nil
}

func aad(kind Kind, id, context string) []byte {
	return []byte("cairn-sse/v1|" + string(kind) + "|" + id + "|" + context)
}

func gcm(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// NewObjectKey makes a random object key and seals it as p says,
// returning the key and the record to keep with the version.
func (k *Keys) NewObjectKey(p Params) ([]byte, Record, error) {
	kek, id, err := k.kek(p)
	if err != nil {
		return nil, Record{}, err
	}
	ok := make([]byte, KeySize)
	if _, err := rand.Read(ok); err != nil {
		return nil, Record{}, err
	}
	g, err := gcm(kek)
	if err != nil {
		return nil, Record{}, err
	}
	sealed := make([]byte, 12, 12+KeySize+TagSize)
	if _, err := rand.Read(sealed); err != nil {
		return nil, Record{}, err
	}
	sealed = g.Seal(sealed, sealed[:12], ok, aad(p.Kind, id, p.Context))
	return ok, Record{Kind: p.Kind, KeyID: id, Sealed: sealed, Context: p.Context}, nil
}

// Open unseals the object key of rec with p's customer key (SSE-C) or
// the server's keys; the errors say which key failed.
func (k *Keys) Open(rec Record, p Params) ([]byte, error) {
	p.Kind, p.Context = rec.Kind, rec.Context
	if rec.Kind == KindKMS {
		p.KMSKey = rec.KeyID
	}
	kek, id, err := k.kek(p)
	if err != nil {
		return nil, err
	}
	g, err := gcm(kek)
	if err != nil {
		return nil, err
	}
	if len(rec.Sealed) != 12+KeySize+TagSize {
		return nil, fmt.Errorf("%w: sealed key of %d bytes", ErrCorrupt, len(rec.Sealed))
	}
	key, err := g.Open(nil, rec.Sealed[:12], rec.Sealed[12:], aad(rec.Kind, rec.KeyID, rec.Context))
	if err == nil {
		return key, nil
	}
	switch rec.Kind {
	case KindC:
		return nil, ErrWrongKey
	case KindS3:
		return nil, fmt.Errorf("%w: the object's key was sealed under master key id %s, the server's master key has id %s", ErrMasterKey, rec.KeyID, id)
	}
	return nil, fmt.Errorf("%w: key ring key %q does not open the object's key (a replaced key?)", ErrMasterKey, rec.KeyID)
}
