package sse

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
)

// Format constants of stream version 1 (see doc.go).
const (
	PackageSize = 64 << 10
	HeaderSize  = 32
	TagSize     = 16
	version1    = 1
	saltOffset  = 8
	sealedSize  = PackageSize + TagSize
)

// Errors of the stream format.
var (
	// ErrCorrupt: a package or header does not authenticate, or a stored
	// size is not one a stream can have.
	ErrCorrupt = errors.New("sse: encrypted data does not authenticate")
	// ErrDigest: the plaintext's MD5 is not the one the writer expected.
	ErrDigest = errors.New("sse: plaintext MD5 does not match")
)

func packages(n int64) int64 {
	if n <= 0 {
		return 1
	}
	return (n + PackageSize - 1) / PackageSize
}

// EncryptedSize is the stored size of a stream of n plaintext bytes.
func EncryptedSize(n int64) int64 { return HeaderSize + n + TagSize*packages(n) }

// PlainSize inverts EncryptedSize; ok is false when c is no stream's size.
func PlainSize(c int64) (n int64, ok bool) {
	if c < HeaderSize+TagSize {
		return 0, false
	}
	k := (c - HeaderSize + sealedSize - 1) / sealedSize
	n = c - HeaderSize - TagSize*k
	if n < 0 || EncryptedSize(n) != c {
		return 0, false
	}
	return n, true
}

func streamCipher(objectKey, header []byte) (cipher.AEAD, error) {
	if len(objectKey) != 32 || len(header) != HeaderSize || header[0] != version1 {
		return nil, fmt.Errorf("%w: bad stream header", ErrCorrupt)
	}
	m := hmac.New(sha256.New, objectKey)
	m.Write([]byte("cairn-sse/v1/stream"))
	m.Write(header[saltOffset:])
	b, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

func nonce(dst *[12]byte, i int64, final bool) []byte {
	binary.BigEndian.PutUint64(dst[:8], uint64(i))
	var f uint32
	if final {
		f = 0x80000000
	}
	binary.BigEndian.PutUint32(dst[8:], f)
	return dst[:]
}

// Encrypter reads a plaintext of a known size from src and yields its
// stream (EncryptedSize(size) bytes). When wantMD5 is set, or MD5 is
// asked for, it hashes the plaintext; a plaintext whose MD5 is not
// wantMD5 fails with ErrDigest before the last package is given out, so a
// store reading the stream never commits it.
type Encrypter struct {
	src       io.Reader
	aead      cipher.AEAD
	header    [HeaderSize]byte
	remaining int64 // plaintext bytes still to read
	next      int64 // next package number
	count     int64
	buf       []byte // sealed package being given out
	out       []byte // unread part of buf (or of header)
	md5       hash.Hash
	wantMD5   []byte
	err       error
}

// NewEncrypter starts a stream of size plaintext bytes from src under
// objectKey. h, when not nil, hashes the plaintext (for an ETag); wantMD5,
// when set, must be h's sum at the end (h must then be an MD5).
func NewEncrypter(src io.Reader, size int64, objectKey []byte, h hash.Hash, wantMD5 []byte) (*Encrypter, error) {
	e := &Encrypter{src: src, remaining: size, count: packages(size), md5: h, wantMD5: wantMD5}
	e.header[0] = version1
	if _, err := rand.Read(e.header[saltOffset:]); err != nil {
		return nil, err
	}
	aead, err := streamCipher(objectKey, e.header[:])
	if err != nil {
		return nil, err
	}
	e.aead = aead
	e.out = e.header[:]
	e.buf = make([]byte, 0, sealedSize)
	return e, nil
}

// Read implements io.Reader.
func (e *Encrypter) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(e.out) == 0 {
			if e.err != nil {
				break
			}
			if e.next == e.count {
				e.err = io.EOF
				break
			}
			var dst []byte
			if len(p)-n >= sealedSize {
				dst = p[n:n:len(p)] // seal straight into p, sparing a copy
			}
			if err := e.seal(dst); err != nil {
				e.err = err
				break
			}
			if dst != nil {
				n += len(e.out)
				e.out = nil
				continue
			}
		}
		c := copy(p[n:], e.out)
		e.out = e.out[c:]
		n += c
	}
	if n > 0 {
		return n, nil
	}
	return 0, e.err
}

// seal reads and seals the next package into dst (nil: into e.buf),
// leaving the sealed bytes in e.out.
func (e *Encrypter) seal(dst []byte) error {
	k := min(e.remaining, PackageSize)
	b := e.buf[:k]
	if _, err := io.ReadFull(e.src, b); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("sse: plaintext ended %d bytes short: %w", e.remaining, io.ErrUnexpectedEOF)
		}
		return err
	}
	e.remaining -= k
	if e.md5 != nil {
		e.md5.Write(b)
	}
	final := e.next == e.count-1
	if final && e.wantMD5 != nil && !hmac.Equal(e.md5.Sum(nil), e.wantMD5) {
		return ErrDigest
	}
	var nb [12]byte
	if dst == nil {
		dst = b[:0]
	}
	e.out = e.aead.Seal(dst, nonce(&nb, e.next, final), b, e.header[:])
	e.next++
	return nil
}

// Sum is the plaintext hash's sum once the stream has been read through
// (nil without a hash).
func (e *Encrypter) Sum() []byte {
	if e.md5 == nil {
		return nil
	}
	return e.md5.Sum(nil)
}
