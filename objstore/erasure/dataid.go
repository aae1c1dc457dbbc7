package erasure

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// DataID names the stored bytes of one object version. It is random, so
// shard files never collide across objects, versions or renames.
type DataID [16]byte

// NewDataID returns a random DataID from crypto/rand.
func NewDataID() DataID {
	var id DataID
	_, _ = rand.Read(id[:]) // never fails (crypto/rand.Read panics instead)
	return id
}

// String returns the id as 32 lowercase hex characters.
func (id DataID) String() string { return hex.EncodeToString(id[:]) }

// IsZero reports whether id is the zero DataID.
func (id DataID) IsZero() bool { return id == DataID{} }

// ParseDataID parses the form returned by String: exactly 32 lowercase hex
// characters.
func ParseDataID(s string) (DataID, error) {
	var id DataID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("erasure: invalid data id %q: want %d hex characters", s, 2*len(id))
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return id, fmt.Errorf("erasure: invalid data id %q: not lowercase hex", s)
		}
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return DataID{}, fmt.Errorf("erasure: invalid data id %q: %w", s, err)
	}
	return id, nil
}
