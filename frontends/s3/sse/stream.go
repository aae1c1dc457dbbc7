package sse

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/md5"
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

// Encrypter reads a plaintext from src, of a known size or up to its
// EOF, and yields its stream (EncryptedSize of the plaintext's size).
// When wantMD5 is set, or MD5 is asked for, it hashes the plaintext; a
// plaintext whose MD5 is not wantMD5 fails with ErrDigest before the last
// package is given out, so a store reading the stream never commits it.
type Encrypter struct {
	src       io.Reader
	peek      *bufio.Reader // src of a plaintext of unknown size
	aead      cipher.AEAD
	header    [HeaderSize]byte
	remaining int64  // plaintext bytes still to read (known size)
	next      int64  // next package number
	done      bool   // the final package is sealed
	buf       []byte // sealed package being given out
	out       []byte // unread part of buf (or of header)
	md5       hash.Hash
	async     *asyncHash // md5 on goroutines of its own (a large plaintext)
	wantMD5   []byte
	nonce     [12]byte // here, not on the stack: passed to the AEAD it would escape, an allocation a package
	err       error
}

// asyncHashSize is the plaintext size (known or not) from which the
// plaintext is hashed on goroutines of their own, package by package and
// in order, while the next packages are read and sealed: a PUT's MD5 then
// runs beside its encryption and erasure coding, as a plain PUT's runs
// beside its erasure coding (objstore's Writer.HashWith).
const asyncHashSize = 1 << 20

// hashSlots is how many packages the reading may run ahead of the hash.
const hashSlots = 4

// asyncHash hashes packages on goroutines, one a package, each waiting
// for the previous one's (so the hash sees them in order). Package i's
// plaintext is in slot i%hashSlots, which is read into again only once
// its hash is done.
type asyncHash struct {
	h     hash.Hash
	slots [hashSlots][]byte
	busy  [hashSlots]chan struct{} // closed when the slot's hash is done
	last  chan struct{}            // closed when the latest hash is done
}

func newAsyncHash(h hash.Hash) *asyncHash {
	a := &asyncHash{h: h}
	for i := range a.slots {
		a.slots[i] = make([]byte, PackageSize)
	}
	return a
}

// slot is package i's plaintext buffer, once free.
func (a *asyncHash) slot(i int64) []byte {
	k := i % hashSlots
	if a.busy[k] != nil {
		<-a.busy[k]
	}
	return a.slots[k]
}

// add hashes package i's plaintext b (in its slot) after the ones before.
func (a *asyncHash) add(i int64, b []byte) {
	prev, done := a.last, make(chan struct{})
	a.busy[i%hashSlots], a.last = done, done
	go func() {
		if prev != nil {
			<-prev
		}
		a.h.Write(b)
		close(done)
	}()
}

// wait returns once every package given to add is hashed.
func (a *asyncHash) wait() {
	if a != nil && a.last != nil {
		<-a.last
	}
}

// NewEncrypter starts a stream of size plaintext bytes from src under
// objectKey; a negative size reads src to its EOF (a package is known to
// be the last one by reading one byte past it). h, when not nil, hashes
// the plaintext (for an ETag); wantMD5, when set, must be h's sum at the
// end (h must then be an MD5).
func NewEncrypter(src io.Reader, size int64, objectKey []byte, h hash.Hash, wantMD5 []byte) (*Encrypter, error) {
	e := &Encrypter{src: src, remaining: size, md5: h, wantMD5: wantMD5}
	if size < 0 {
		e.peek = bufio.NewReaderSize(src, PackageSize)
	}
	if h != nil && (size < 0 || size >= asyncHashSize) {
		e.async = newAsyncHash(h)
	}
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
			if e.done {
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
	in := e.buf[:PackageSize]
	if e.async != nil {
		in = e.async.slot(e.next)
	}
	b, final, err := e.readPackage(in)
	if err != nil {
		return err
	}
	switch {
	case e.async != nil:
		e.async.add(e.next, b)
		if final {
			e.async.wait()
		}
	case e.md5 != nil:
		e.md5.Write(b)
	}
	if final && e.wantMD5 != nil && !hmac.Equal(e.md5.Sum(nil), e.wantMD5) {
		return ErrDigest
	}
	if dst == nil {
		dst = e.buf[:0] // in place when b is e.buf; never over a slot being hashed
	}
	e.out = e.aead.Seal(dst, nonce(&e.nonce, e.next, final), b, e.header[:])
	e.next++
	e.done = final
	return nil
}

// readPackage reads the next package's plaintext into buf (PackageSize
// bytes) and says whether it is the last one.
func (e *Encrypter) readPackage(buf []byte) ([]byte, bool, error) {
	if e.peek == nil {
		k := min(e.remaining, PackageSize)
		b := buf[:k]
		if _, err := io.ReadFull(e.src, b); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, false, fmt.Errorf("sse: plaintext ended %d bytes short: %w", e.remaining, io.ErrUnexpectedEOF)
			}
			return nil, false, err
		}
		e.remaining -= k
		return b, e.remaining == 0, nil
	}
	b := buf[:PackageSize]
	n, err := io.ReadFull(e.peek, b)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return b[:n], true, nil
	case err != nil:
		return nil, false, err
	}
	if _, err := e.peek.Peek(1); err == io.EOF {
		return b, true, nil
	} else if err != nil {
		return nil, false, err
	}
	return b, false, nil
}

// OpaqueETag is the ETag of an SSE-C or SSE-KMS object or part whose
// plaintext has MD5 plainMD5, encrypted under objectKey: an HMAC of the
// MD5 keyed with the object key (domain-separated from the stream keys
// streamCipher derives), cut to an MD5's 16 bytes.
// It tells nothing of the plaintext to whoever lacks the object key (AWS
// does not give these objects' MD5 either), and it is the same for the
// same plaintext under the same key: every part of a multipart upload is
// under the upload's one key, so a part sent again with the same bytes
// keeps the ETag the client already holds for it.
func OpaqueETag(objectKey, plainMD5 []byte) []byte {
	m := hmac.New(sha256.New, objectKey)
	m.Write([]byte("cairn-sse/v1/etag"))
	m.Write(plainMD5)
	return m.Sum(nil)[:md5.Size]
}

// Sum is the plaintext hash's sum once the stream has been read through
// (nil without a hash).
func (e *Encrypter) Sum() []byte {
	if e.md5 == nil {
		return nil
	}
	e.async.wait()
	return e.md5.Sum(nil)
}

// Close waits for the hashing still running (a stream left unread
// half-way may have some), after which the hash given to NewEncrypter is
// the caller's again (to release). It does not close src.
func (e *Encrypter) Close() error {
	e.async.wait()
	return nil
}
