package s3

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/frontends/s3/postform"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

func TestParseFormChecksum(t *testing.T) {
	file := []byte("the file")
	sum := sha256.Sum256(file)
	good := base64.StdEncoding.EncodeToString(sum[:])
	for _, tc := range []struct {
		name    string
		fields  map[string]string
		algo    string
		err     error // of parsing
		readErr error // of reading the file through verify
	}{
		{"none", map[string]string{"key": "k"}, "", nil, nil},
		{"not values", map[string]string{"x-amz-checksum-algorithm": "SHA256", "x-amz-checksum-type": "COMPOSITE"}, "", nil, nil},
		{"matching", map[string]string{"x-amz-checksum-sha256": good}, "sha256", nil, nil},
		{"mismatch", map[string]string{"x-amz-checksum-crc32": "AAAAAA=="}, "crc32", nil, sigv4.ErrChecksumMismatch},
		{"not base64", map[string]string{"x-amz-checksum-sha256": "sailorjerry"}, "", sigv4.ErrChecksumMismatch, nil},
		{"wrong length", map[string]string{"x-amz-checksum-sha1": good}, "", sigv4.ErrChecksumMismatch, nil},
		{"unknown algorithm", map[string]string{"x-amz-checksum-md5": good}, "", sigv4.ErrInvalidChecksum, nil},
		{"two", map[string]string{"x-amz-checksum-sha256": good, "x-amz-checksum-crc32": "AAAAAA=="}, "", sigv4.ErrInvalidChecksum, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFormChecksum(tc.fields)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("parse: %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if c.algo != tc.algo {
				t.Fatalf("algo %q, want %q", c.algo, tc.algo)
			}
			got, err := io.ReadAll(c.verify(bytes.NewReader(file)))
			if !errors.Is(err, tc.readErr) || (tc.readErr == nil) != (err == nil) {
				t.Fatalf("read: %v, want %v", err, tc.readErr)
			}
			if err == nil && !bytes.Equal(got, file) {
				t.Fatalf("read %q", got)
			}
			m := map[string]string{}
			if f := c.meta(); f != nil {
				f(m)
			}
			if tc.algo != "" && m["x-amz-checksum-"+tc.algo] != tc.fields["x-amz-checksum-"+tc.algo] {
				t.Fatalf("meta %v", m)
			}
		})
	}
}

func TestPolicyFields(t *testing.T) {
	p := postform.Policy{Conditions: []postform.Condition{{Field: "x-amz-checksum-crc32"}}}
	fields := map[string]string{"key": "k", "x-amz-checksum-sha256": "v", "x-amz-checksum-algorithm": "SHA256", "x-amz-checksum-crc32": "w"}
	policyFields(p, fields)
	if len(fields) != 2 || fields["key"] != "k" || fields["x-amz-checksum-crc32"] != "w" {
		t.Fatalf("fields %v: want key and the condition's field kept, the other checksum fields dropped", fields)
	}
}

func FuzzParseFormChecksum(f *testing.F) {
	f.Add("x-amz-checksum-sha256", "aTL9MeXa9HObn6eP93eygxsJlcwdCwCTysgGAZAgE7w=", []byte("x"))
	f.Add("x-amz-checksum-crc32", "AAAAAA==", []byte{})
	f.Add("x-amz-checksum-", "", []byte("y"))
	f.Fuzz(func(t *testing.T, name, value string, file []byte) {
		c, err := parseFormChecksum(map[string]string{strings.ToLower(name): value})
		if err != nil {
			if !errors.Is(err, sigv4.ErrChecksumMismatch) && !errors.Is(err, sigv4.ErrInvalidChecksum) {
				t.Fatalf("unwrapped error %v", err)
			}
			return
		}
		got, err := io.ReadAll(c.verify(bytes.NewReader(file)))
		if err != nil && !errors.Is(err, sigv4.ErrChecksumMismatch) {
			t.Fatalf("read error %v", err)
		}
		if !bytes.Equal(got, file) {
			t.Fatal("verify changed the bytes")
		}
	})
}
