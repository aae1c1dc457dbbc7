package sigv4

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

var chunkNow = time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)

// chunkedRequest signs a PUT with payload form form and returns it with the
// encoder for its body (signed when form is a signed streaming form).
func chunkedRequest(t testing.TB, form string, header map[string]string) (*http.Request, *chunkEncoder) {
	t.Helper()
	r := httptest.NewRequest("PUT", "http://cairn.local:9000/bucket/key", nil)
	r.Header.Set("Content-Encoding", "aws-chunked")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	if err := Sign(r, testAccessKey, testSecretKey, "us-east-1", "s3", form, chunkNow); err != nil {
		t.Fatal(err)
	}
	if form == PayloadStreamingUnsignedTrail {
		return r, &chunkEncoder{}
	}
	a := r.Header.Get("Authorization")
	seed := a[strings.LastIndex(a, "=")+1:]
	sc := scope{date: chunkNow.Format(scopeDateFormat), region: "us-east-1", service: "s3"}
	return r, newChunkEncoder(testSecretKey, sc, formatAmzDate(chunkNow), seed)
}

func setBody(r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
}

func TestChunkedForms(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 9000) // 144000 bytes
	for _, form := range []string{PayloadStreamingSigned, PayloadStreamingSignedTrail, PayloadStreamingUnsignedTrail} {
		for _, algo := range []string{"", "crc32", "crc32c", "crc64nvme", "sha1", "sha256"} {
			trailer := form != PayloadStreamingSigned
			if algo == "" && form == PayloadStreamingUnsignedTrail {
				continue
			}
			t.Run(form+"/"+algo, func(t *testing.T) {
				h := map[string]string{"X-Amz-Decoded-Content-Length": strconv.Itoa(len(data))}
				var trailers []string
				if algo != "" && trailer {
					h["X-Amz-Trailer"] = "x-amz-checksum-" + algo
					trailers = []string{"x-amz-checksum-" + algo, checksumOf(t, algo, data)}
				} else if algo != "" {
					h["X-Amz-Checksum-"+algo] = checksumOf(t, algo, data)
				}
				r, enc := chunkedRequest(t, form, h)
				setBody(r, enc.encode(data, 65536, trailers...))
				auth, b, err := newTestVerifier(chunkNow).Verify(r)
				wantErr(t, err, nil)
				if auth.Payload != form || b.Size() != int64(len(data)) {
					t.Fatalf("auth %+v size %d", auth, b.Size())
				}
				got, err := readBody(t, b)
				wantErr(t, err, nil)
				if !bytes.Equal(got, data) {
					t.Fatalf("decoded %d bytes, want %d", len(got), len(data))
				}
				if ga, gs, ok := b.Checksum(); ok != (algo != "") || ga != algo || (ok && gs != checksumOf(t, algo, data)) {
					t.Fatalf("Checksum() = %q %q %v", ga, gs, ok)
				}
			})
		}
	}
}

func TestChunkedFailures(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 20000)
	crc := checksumOf(t, "crc32c", data)
	type tc struct {
		name   string
		form   string
		header map[string]string
		body   func(enc *chunkEncoder) []byte
		err    error
	}
	n := strconv.Itoa(len(data))
	cases := []tc{
		{"bad chunk signature", PayloadStreamingSigned, nil, func(e *chunkEncoder) []byte {
			b := e.encode(data, 8192)
			i := bytes.Index(b, []byte("chunk-signature=")) + 16
			b[i] ^= 1
			return b
		}, ErrSignatureMismatch},
		{"bad final signature", PayloadStreamingSigned, nil, func(e *chunkEncoder) []byte {
			b := e.encode(data, 8192)
			i := bytes.LastIndex(b, []byte("chunk-signature=")) + 16
			b[i] ^= 1
			return b
		}, ErrSignatureMismatch},
		{"chunks reordered", PayloadStreamingSigned, nil, func(e *chunkEncoder) []byte {
			var w bytes.Buffer
			e.chunk(&w, data[:10000])
			first := w.Bytes()
			var w2 bytes.Buffer
			e.chunk(&w2, data[10000:])
			e.chunk(&w2, nil)
			return append(append(w2.Bytes()[:len(w2.Bytes())-0:len(w2.Bytes())], first...), "\r\n"...)
		}, ErrSignatureMismatch},
		{"missing chunk signature", PayloadStreamingSigned, nil, func(e *chunkEncoder) []byte {
			return []byte("4e20\r\n" + string(data) + "\r\n0\r\n\r\n")
		}, ErrMalformedChunk},
		{"truncated in data", PayloadStreamingSigned, nil, func(e *chunkEncoder) []byte { return e.encode(data, 8192)[:5000] }, ErrIncompleteBody},
		{"truncated before final chunk", PayloadStreamingSigned, nil, func(e *chunkEncoder) []byte {
			var w bytes.Buffer
			e.chunk(&w, data)
			return w.Bytes()
		}, ErrIncompleteBody},
		{"truncated in header", PayloadStreamingSigned, nil, func(e *chunkEncoder) []byte {
			var w bytes.Buffer
			e.chunk(&w, data)
			w.WriteString("0;chunk-sig")
			return w.Bytes()
		}, ErrIncompleteBody},
		{"chunk longer than size", PayloadStreamingUnsignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			return []byte("3\r\nabcd\r\n0\r\nx-amz-checksum-crc32c:" + crc + "\r\n\r\n")
		}, ErrMalformedChunk},
		{"bad chunk size", PayloadStreamingUnsignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			return []byte("-3\r\nabc\r\n0\r\n\r\n")
		}, ErrMalformedChunk},
		{"LF-only chunk header", PayloadStreamingUnsignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			return []byte("3\nabc\r\n0\r\n\r\n")
		}, ErrMalformedChunk},
		{"decoded length shorter than chunks", PayloadStreamingSigned, map[string]string{"X-Amz-Decoded-Content-Length": "19999"}, func(e *chunkEncoder) []byte {
			return e.encode(data, 8192)
		}, ErrMalformedChunk},
		{"decoded length longer than chunks", PayloadStreamingSigned, map[string]string{"X-Amz-Decoded-Content-Length": "20001"}, func(e *chunkEncoder) []byte {
			return e.encode(data, 8192)
		}, ErrIncompleteBody},
		{"data after final chunk", PayloadStreamingSigned, nil, func(e *chunkEncoder) []byte {
			return append(e.encode(data, 8192), "junk"...)
		}, ErrMalformedChunk},
		{"wrong trailer checksum", PayloadStreamingSignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			return e.encode(data, 8192, "x-amz-checksum-crc32c", checksumOf(t, "crc32c", data[1:]))
		}, ErrChecksumMismatch},
		{"wrong unsigned trailer checksum", PayloadStreamingUnsignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			return e.encode(data, 8192, "x-amz-checksum-crc32c", checksumOf(t, "crc32c", data[1:]))
		}, ErrChecksumMismatch},
		{"bad trailer signature", PayloadStreamingSignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			b := e.encode(data, 8192, "x-amz-checksum-crc32c", crc)
			i := bytes.Index(b, []byte("x-amz-trailer-signature:")) + 24
			b[i] ^= 1
			return b
		}, ErrSignatureMismatch},
		{"tampered signed trailer", PayloadStreamingSignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32"}, func(e *chunkEncoder) []byte {
			b := e.encode(data, 8192, "x-amz-checksum-crc32", checksumOf(t, "crc32", data))
			return bytes.Replace(b, []byte("x-amz-checksum-crc32:"+checksumOf(t, "crc32", data)), []byte("x-amz-checksum-crc32:AAAAAA=="), 1)
		}, ErrSignatureMismatch},
		{"missing trailer signature", PayloadStreamingSignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			var w bytes.Buffer
			e.chunk(&w, data)
			e.chunk(&w, nil)
			w.WriteString("x-amz-checksum-crc32c:" + crc + "\r\n\r\n")
			return w.Bytes()
		}, ErrMalformedChunk},
		{"announced trailer missing", PayloadStreamingUnsignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			return e.encode(data, 8192, "x-amz-meta-other", "v")
		}, ErrMalformedChunk},
		{"unannounced checksum trailer", PayloadStreamingUnsignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			return e.encode(data, 8192, "x-amz-checksum-crc32c", crc, "x-amz-checksum-crc32", checksumOf(t, "crc32", data))
		}, ErrInvalidChecksum},
		{"trailer value not base64", PayloadStreamingUnsignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			return e.encode(data, 8192, "x-amz-checksum-crc32c", "%%%")
		}, ErrChecksumMismatch},
		{"trailer line too long", PayloadStreamingUnsignedTrail, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32c"}, func(e *chunkEncoder) []byte {
			return e.encode(data, 8192, "x-amz-checksum-crc32c", strings.Repeat("A", 5000))
		}, ErrMalformedChunk},
		{"header checksum wrong", PayloadStreamingSigned, map[string]string{"X-Amz-Checksum-Crc32c": checksumOf(t, "crc32c", []byte("other"))}, func(e *chunkEncoder) []byte {
			return e.encode(data, 8192)
		}, ErrChecksumMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{"X-Amz-Decoded-Content-Length": n}
			for k, v := range c.header {
				h[k] = v
			}
			r, enc := chunkedRequest(t, c.form, h)
			setBody(r, c.body(enc))
			_, b, err := newTestVerifier(chunkNow).Verify(r)
			wantErr(t, err, nil)
			_, err = readBody(t, b)
			wantErr(t, err, c.err)
			// The error is sticky.
			if _, err2 := b.Read(make([]byte, 10)); err2 != err {
				t.Fatalf("second Read error %v, first %v", err2, err)
			}
			if _, _, ok := b.Checksum(); ok {
				t.Fatal("Checksum() ok after a failure")
			}
		})
	}
}

// TestTrailerLayouts accepts the trailer layouts real clients send.
func TestTrailerLayouts(t *testing.T) {
	data := []byte("hello trailers")
	crc := checksumOf(t, "crc32", data)
	cases := []struct{ name, form, tail string }{
		{"aws sdk unsigned", PayloadStreamingUnsignedTrail, "x-amz-checksum-crc32:" + crc + "\r\n\r\n"},
		{"minio-go unsigned", PayloadStreamingUnsignedTrail, "x-amz-checksum-crc32:" + crc + "\n\r\n\r\n"},
		{"no final CRLF", PayloadStreamingUnsignedTrail, "x-amz-checksum-crc32:" + crc + "\r\n"},
		{"blank line first", PayloadStreamingUnsignedTrail, "\r\nx-amz-checksum-crc32:" + crc + "\r\n\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := chunkedRequest(t, c.form, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32"})
			setBody(r, []byte("e\r\nhello trailers\r\n0\r\n"+c.tail))
			_, b, err := newTestVerifier(chunkNow).Verify(r)
			wantErr(t, err, nil)
			got, err := readBody(t, b)
			wantErr(t, err, nil)
			if string(got) != string(data) {
				t.Fatalf("got %q", got)
			}
			if _, v, ok := b.Checksum(); !ok || v != crc {
				t.Fatalf("checksum %q %v", v, ok)
			}
		})
	}
}

func TestUnsignedBody(t *testing.T) {
	data := []byte("anonymous upload")
	r := httptest.NewRequest("PUT", "http://cairn.local/b/k", bytes.NewReader(data))
	r.Header.Set("X-Amz-Checksum-Sha256", checksumOf(t, "sha256", data))
	_, _, err := newTestVerifier(chunkNow).Verify(r)
	wantErr(t, err, ErrMissingAuth)
	b, err := UnsignedBody(r)
	wantErr(t, err, nil)
	got, err := readBody(t, b)
	wantErr(t, err, nil)
	if string(got) != string(data) || b.Size() != int64(len(data)) {
		t.Fatalf("got %q size %d", got, b.Size())
	}
	r.Header.Set("X-Amz-Content-Sha256", PayloadStreamingSigned)
	_, err = UnsignedBody(r)
	wantErr(t, err, ErrMalformedAuth)
}
