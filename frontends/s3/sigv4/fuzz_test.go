package sigv4

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func FuzzParseAuthorization(f *testing.F) {
	sig := strings.Repeat("0f", 32)
	for _, s := range []string{
		"AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
		"AWS4-HMAC-SHA256 Credential=a/b/20240101/r/s3/aws4_request, SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=,SignedHeaders=;;,Signature==",
		"AWS AKID:c2lnbmF0dXJl",
		"AWS4-ECDSA-P256-SHA256 Credential=x",
		"",
	} {
		f.Add(s)
	}
	v := &Verifier{Secret: testSecret, Now: func() time.Time { return testTime }}
	f.Fuzz(func(t *testing.T, h string) {
		cred, err := parseAuthorization(h)
		if err == nil {
			if len(cred.signature) != 32 || cred.accessKey == "" || len(cred.signed) == 0 {
				t.Fatalf("accepted %q as %+v", h, cred)
			}
			if !strings.Contains(";"+strings.Join(cred.signed, ";")+";", ";host;") {
				t.Fatalf("accepted %q without host", h)
			}
		}
		r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt", nil)
		r.Header.Set("Authorization", h)
		r.Header.Set("X-Amz-Date", "20130524T000000Z")
		r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
		if _, _, err := v.Verify(r); err == nil {
			t.Fatalf("fuzzed Authorization %q verified", h)
		}
	})
}

func FuzzPresignedQuery(f *testing.F) {
	f.Add("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request" +
		"&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host" +
		"&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
	f.Add("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=-1&X-Amz-Date=x")
	f.Add("X-Amz-Signature=%zz&&=&a")
	f.Add("AWSAccessKeyId=a&Signature=b&Expires=1")
	v := &Verifier{Secret: testSecret, Now: func() time.Time { return testTime }}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		if q, err := url.ParseQuery(rawQuery); err == nil {
			if p, err := parsePresigned(q, DefaultMaxPresignExpiry); err == nil {
				if p.expires <= 0 || p.expires > DefaultMaxPresignExpiry || len(p.signature) != 32 {
					t.Fatalf("accepted %q as %+v", rawQuery, p)
				}
			}
		}
		_, _ = canonicalQuery(rawQuery, "X-Amz-Signature")
		r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt", nil)
		r.URL.RawQuery = rawQuery
		auth, b, err := v.Verify(r)
		if err == nil {
			// Only the documented URL verifies; anything else is a forgery.
			if !auth.Presigned || !strings.Contains(rawQuery, "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404") {
				t.Fatalf("fuzzed query %q verified: %+v", rawQuery, auth)
			}
			b.Close()
		}
	})
}

// decodeFuzz runs the chunk decoder over body and checks it never returns
// more bytes than it was given, whatever the outcome.
func decodeFuzz(t *testing.T, body []byte, signed, trailer bool, declared int64) {
	var sg *signer
	var seed []byte
	if signed {
		sc := scope{date: "20130524", region: "us-east-1", service: "s3"}
		sg = &signer{key: sc.signingKey(testSecretKey), amzDate: "20130524T000000Z", scope: sc}
		seed, _ = hex.DecodeString("4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
	}
	c := newChunkReader(bytes.NewReader(body), sg, seed, trailer, declared)
	out, err := io.ReadAll(io.LimitReader(c, int64(len(body))+1))
	if len(out) > len(body) {
		t.Fatalf("decoded %d bytes from %d", len(out), len(body))
	}
	if declared >= 0 && int64(len(out)) > declared {
		t.Fatalf("decoded %d bytes, declared %d", len(out), declared)
	}
	if err == nil && c.state != stateDone {
		t.Fatalf("clean EOF in state %d", c.state)
	}
}

func FuzzChunkedDecoder(f *testing.F) {
	sc := scope{date: "20130524", region: "us-east-1", service: "s3"}
	enc := newChunkEncoder(testSecretKey, sc, "20130524T000000Z", "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
	f.Add(enc.encode([]byte("hello, chunked world"), 7), true, false, int64(20))
	enc = newChunkEncoder(testSecretKey, sc, "20130524T000000Z", "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
	f.Add(enc.encode([]byte("hello"), 4, "x-amz-checksum-crc32", "NhCmhg=="), true, true, int64(5))
	f.Add([]byte("5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n"), false, true, int64(5))
	f.Add([]byte("3;chunk-signature=00\r\nabc\r\n0\r\n"), true, true, int64(3))
	f.Add([]byte("ffffffffffffffff\r\n"), false, false, int64(-1))
	f.Add([]byte("0\r\n\r\n"), false, false, int64(0))
	f.Fuzz(func(t *testing.T, body []byte, signed, trailer bool, declared int64) {
		decodeFuzz(t, body, signed, trailer, declared)
		decodeFuzz(t, body, signed, trailer, -1)
	})
}

func FuzzTrailer(f *testing.F) {
	f.Add([]byte("x-amz-checksum-crc32:NhCmhg==\r\n\r\n"), "x-amz-checksum-crc32")
	f.Add([]byte("x-amz-checksum-crc32:NhCmhg==\n\r\n\r\n"), "x-amz-checksum-crc32")
	f.Add([]byte("\r\nx-amz-checksum-crc64nvme:AAAAAAAAAAA=\r\nx-amz-trailer-signature:00\r\n\r\n"), "x-amz-checksum-crc64nvme")
	f.Add([]byte(":\r\n"), "x-amz-checksum-sha256, x-amz-checksum-sha1")
	f.Fuzz(func(t *testing.T, tail []byte, announce string) {
		for _, form := range []string{PayloadStreamingUnsignedTrail, PayloadStreamingSignedTrail} {
			r, enc := chunkedRequest(t, form, map[string]string{"X-Amz-Trailer": announce})
			var w bytes.Buffer
			if form == PayloadStreamingUnsignedTrail {
				enc = nil
			}
			enc.chunk(&w, []byte("hello"))
			enc.chunk(&w, nil)
			w.Write(tail)
			setBody(r, w.Bytes())
			_, b, err := newTestVerifier(chunkNow).Verify(r)
			if err != nil {
				continue
			}
			out, err := io.ReadAll(b)
			if len(out) > 5 {
				t.Fatalf("decoded %d bytes", len(out))
			}
			if err == nil {
				if algo, v, ok := b.Checksum(); ok && v != checksumOf(t, algo, []byte("hello")) {
					t.Fatalf("verified wrong checksum %s %s", algo, v)
				}
			}
		}
	})
}

// FuzzChecksumHeader: any x-amz-checksum-* header value is accepted as a
// checksum, kept as a composite one (detachable), or refused with one of
// the package's sentinels, never a panic.
func FuzzChecksumHeader(f *testing.F) {
	f.Add("sha256", "uWBwpe1dxI4Vw8Gf0X9ynOdw/SS6VBzfWm9giiv1sf4=-3")
	f.Add("crc32", "AAAAAA==")
	f.Add("crc64nvme", "bad")
	f.Add("crc32c", "AAAAAA==-")
	f.Fuzz(func(t *testing.T, algo, value string) {
		h := http.Header{}
		h.Set("X-Amz-Checksum-"+algo, value)
		d, err := parseChecksumHeaders(h, false)
		if err != nil {
			if !errors.Is(err, ErrChecksumMismatch) && !errors.Is(err, ErrInvalidChecksum) && !errors.Is(err, ErrMalformedChunk) {
				t.Fatalf("unwrapped error %v", err)
			}
			return
		}
		if d.bad != nil && !isComposite(d.algo, d.value) {
			t.Fatalf("%q kept as composite", d.value)
		}
	})
}
