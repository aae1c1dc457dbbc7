package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
)

// Body is the decoded, verifying body of a request. Read returns the decoded
// payload (aws-chunked framing removed). Bytes are handed out before the
// digest, chunk signature or checksum covering them is checked: the payload
// is authentic only once Read has returned io.EOF. A failed check is returned
// by Read in place of io.EOF (ErrContentSHA256Mismatch, ErrChecksumMismatch,
// ErrSignatureMismatch, ErrIncompleteBody, ErrMalformedChunk, …) and repeats
// on every later Read. A Body is not safe for concurrent use.
type Body struct {
	src    io.Reader // raw body, or the chunk decoder over it
	closer io.Closer
	chunks *chunkReader // nil unless aws-chunked

	size int64 // declared decoded length, -1 if unknown
	n    int64 // decoded bytes read so far

	sha     hash.Hash // non-nil when the body must hash to wantSHA
	wantSHA []byte

	check declaredChecksum
	sum   hash.Hash // non-nil when a checksum was declared

	err      error
	verified bool
}

// Read implements io.Reader; see Body.
func (b *Body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.src.Read(p)
	if n > 0 {
		if b.sha != nil {
			b.sha.Write(p[:n])
		}
		if b.sum != nil {
			b.sum.Write(p[:n])
		}
		b.n += int64(n)
		if b.size >= 0 && b.n > b.size {
			b.err = fmt.Errorf("%w: body longer than the declared %d bytes", ErrMalformedChunk, b.size)
			return n, b.err
		}
	}
	switch {
	case err == nil:
	case err == io.EOF:
		b.err = b.finish()
	case errors.Is(err, io.ErrUnexpectedEOF):
		b.err = fmt.Errorf("%w: %v", ErrIncompleteBody, err)
	default:
		b.err = err
	}
	if b.err != nil {
		return n, b.err
	}
	return n, nil
}

// finish runs the checks due at the end of the payload and returns io.EOF
// when they all pass.
func (b *Body) finish() error {
	if b.size >= 0 && b.n < b.size {
		return fmt.Errorf("%w: got %d of %d bytes", ErrIncompleteBody, b.n, b.size)
	}
	if b.sha != nil {
		if got := b.sha.Sum(nil); !bytes.Equal(got, b.wantSHA) {
			return fmt.Errorf("%w: computed %x, declared %x", ErrContentSHA256Mismatch, got, b.wantSHA)
		}
	}
	if b.check.inTrail {
		want := checksumHeaderPrefix + b.check.algo
		v, ok := b.chunks.trailerValue(want)
		if !ok {
			return fmt.Errorf("%w: announced trailer %s not sent", ErrMalformedChunk, want)
		}
		if err := validateChecksum(b.check.algo, v); err != nil {
			return err
		}
		b.check.value = v
	}
	if b.chunks != nil {
		for _, f := range b.chunks.trailers {
			if algo, ok := checksumAlgo(f.name); ok && (!b.check.inTrail || algo != b.check.algo) {
				return fmt.Errorf("%w: trailer %s was not announced by x-amz-trailer", ErrInvalidChecksum, f.name)
			}
		}
	}
	if b.sum != nil {
		if got := EncodeChecksum(b.sum.Sum(nil)); got != b.check.value {
			return fmt.Errorf("%w: x-amz-checksum-%s declared %s, computed %s", ErrChecksumMismatch, b.check.algo, b.check.value, got)
		}
	}
	b.verified = true
	return io.EOF
}

// Close closes the underlying request body.
func (b *Body) Close() error {
	if b.closer == nil {
		return nil
	}
	return b.closer.Close()
}

// Size is the decoded length when known up front (x-amz-decoded-content-length,
// else Content-Length for a body that is not aws-chunked), or -1.
func (b *Body) Size() int64 { return b.size }

// Checksum returns the algorithm (lowercase, such as "crc32c") and base64 value
// of the checksum the client declared, once the body was read to io.EOF and
// the value verified. ok is false before that, or when none was declared; the
// face can then compute one itself with NewChecksum.
func (b *Body) Checksum() (algo, value string, ok bool) {
	if !b.verified || b.check.algo == "" {
		return "", "", false
	}
	return b.check.algo, b.check.value, true
}

// DeclaredChecksum returns the algorithm of the checksum the request
// declared (by header or x-amz-trailer), known before the body is read;
// empty when none was.
func (b *Body) DeclaredChecksum() string { return b.check.algo }

// isHexSHA256 reports whether s is 64 hex digits.
func isHexSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// base64SHA256 returns the hex form of s when s is a SHA-256 digest in
// standard base64 (padded, 44 characters).
func base64SHA256(s string) (string, bool) {
	if len(s) != base64.StdEncoding.EncodedLen(sha256.Size) {
		return "", false
	}
	sum, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(sum) != sha256.Size {
		return "", false
	}
	return hex.EncodeToString(sum), true
}

// checkPayloadForm rejects x-amz-content-sha256 values this package cannot
// decode. presigned URLs allow only UNSIGNED-PAYLOAD or a hex digest.
func checkPayloadForm(payload string, presigned bool) error {
	switch payload {
	case PayloadUnsigned:
		return nil
	case PayloadStreamingSigned, PayloadStreamingSignedTrail, PayloadStreamingUnsignedTrail:
		if presigned {
			return fmt.Errorf("%w: payload form %s in a presigned URL", ErrMalformedAuth, payload)
		}
		return nil
	case "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD", "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER":
		return fmt.Errorf("%w: payload form %s", ErrUnsupportedAlgorithm, payload)
	}
	if isHexSHA256(payload) {
		return nil
	}
	return fmt.Errorf("%w: x-amz-content-sha256 %q is not a known payload form or a hex SHA-256", ErrMalformedAuth, truncate(payload, 80))
}

// newBody builds the Body for payload form payload. sg and seed are the
// request's signer and signature, needed for signed chunks; raw, when not nil,
// replaces r.Body as the source (after Verify hashed it).
func newBody(r *http.Request, raw io.Reader, payload string, sg *signer, seed []byte) (*Body, error) {
	b := &Body{size: -1, closer: r.Body, src: raw}
	if b.src == nil {
		b.src = r.Body
	}
	if b.src == nil {
		b.src = http.NoBody
	}
	declared := int64(-1)
	if v := r.Header.Get("X-Amz-Decoded-Content-Length"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: x-amz-decoded-content-length %q", ErrMalformedChunk, truncate(v, 40))
		}
		declared = n
	}
	trailer := false
	switch payload {
	case PayloadStreamingSigned, PayloadStreamingSignedTrail:
		if sg == nil {
			return nil, fmt.Errorf("%w: signed chunks in an unsigned request", ErrMalformedAuth)
		}
		trailer = payload == PayloadStreamingSignedTrail
		b.chunks = newChunkReader(b.src, sg, seed, trailer, declared)
	case PayloadStreamingUnsignedTrail:
		trailer = true
		b.chunks = newChunkReader(b.src, nil, nil, true, declared)
	case PayloadUnsigned:
	default:
		want, err := hex.DecodeString(payload)
		if err != nil || len(want) != sha256.Size {
			return nil, fmt.Errorf("%w: x-amz-content-sha256 %q", ErrMalformedAuth, truncate(payload, 80))
		}
		b.sha, b.wantSHA = sha256.New(), want
	}
	if b.chunks != nil {
		b.src = b.chunks
		b.size = declared
	} else {
		b.size = declared
		if b.size < 0 && r.ContentLength >= 0 && (r.Body != nil || raw != nil) {
			b.size = r.ContentLength
		}
		if b.size < 0 && r.Body == nil && raw == nil {
			b.size = 0
		}
	}
	check, err := parseChecksumHeaders(r.Header, trailer)
	if err != nil {
		return nil, err
	}
	b.check, b.err = check, check.bad
	if check.algo != "" && check.bad == nil {
		if b.sum, err = NewChecksum(check.algo); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// UnsignedBody returns the decoding, verifying body of a request that carries
// no signature, for a face that allows anonymous access after Verify returned
// ErrMissingAuth. It handles UNSIGNED-PAYLOAD (also when x-amz-content-sha256
// is absent), a hex digest and STREAMING-UNSIGNED-PAYLOAD-TRAILER, with the
// same checksum checks as Verify; signed chunk forms return ErrMalformedAuth.
func UnsignedBody(r *http.Request) (*Body, error) {
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = PayloadUnsigned
	}
	if err := checkPayloadForm(payload, false); err != nil {
		return nil, err
	}
	return newBody(r, nil, payload, nil, nil)
}

// DetachHeaderChecksum stops checking the body against a checksum declared
// in an x-amz-checksum-* header and returns that header. On
// CompleteMultipartUpload the header describes the assembled object, not
// the XML body, so the face takes it over. A checksum announced for a
// trailer stays checked (ok is false then). Call it before the first Read.
func (b *Body) DetachHeaderChecksum() (algo, value string, ok bool) {
	if b == nil || b.check.algo == "" || b.check.inTrail || b.n > 0 {
		return "", "", false
	}
	algo, value = b.check.algo, b.check.value
	if b.check.bad != nil {
		b.err = nil // nothing was read: the only error is the value's
	}
	b.check, b.sum = declaredChecksum{}, nil
	return algo, value, true
}
