package sse

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// NamedKey is one key of the SSE-KMS key ring.
type NamedKey struct {
	Name string
	Key  []byte
}

// ParseKey reads a 32-byte key written as 64 hex digits or as base64
// (standard or URL alphabet, padded or not); surrounding space is ignored.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("sse: the key has %d bytes, want %d", len(b), KeySize)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("sse: a key must be %d bytes as 64 hex digits or base64", KeySize)
}

// maxKeyName bounds a key ring name (S3 key ids are at most 2048
// characters, ARNs included; names are much shorter).
const maxKeyName = 256

// ParseKeyRing reads a key ring file: one key a line, "name key" (the key
// as ParseKey takes it), blank lines and lines starting with # ignored.
// Names are 1-256 characters of letters, digits and -_/.:; the first key
// is the default for aws:kms without a key id.
func ParseKeyRing(text string) ([]NamedKey, error) {
	var out []NamedKey
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("sse: key ring line %d: want \"name key\"", line)
		}
		if !validName(f[0]) {
			return nil, fmt.Errorf("sse: key ring line %d: bad key name %q", line, f[0])
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("sse: key ring line %d: key %q again", line, f[0])
		}
		k, err := ParseKey(f[1])
		if err != nil {
			return nil, fmt.Errorf("key ring line %d: %w", line, err)
		}
		seen[f[0]] = true
		out = append(out, NamedKey{Name: f[0], Key: k})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sse: key ring: %w", err)
	}
	return out, nil
}

func validName(s string) bool {
	if s == "" || len(s) > maxKeyName {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune("-_/.:", c):
		default:
			return false
		}
	}
	return true
}

// ValidKeyName says whether s can name a key ring key.
func ValidKeyName(s string) bool { return validName(s) }
