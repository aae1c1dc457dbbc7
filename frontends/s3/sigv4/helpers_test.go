package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The credentials and date of the AWS documentation examples.
const (
	testAccessKey = "AKIAIOSFODNN7EXAMPLE"
	testSecretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

var testTime = time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)

func testSecret(ak string) (string, bool) {
	if ak == testAccessKey {
		return testSecretKey, true
	}
	return "", false
}

func newTestVerifier(now time.Time, services ...string) *Verifier {
	return &Verifier{Secret: testSecret, Services: services, Now: func() time.Time { return now }}
}

// readBody reads b to the end and returns the data and the final error
// (nil when Read ended with io.EOF).
func readBody(t *testing.T, b *Body) ([]byte, error) {
	t.Helper()
	var out bytes.Buffer
	buf := make([]byte, 1000) // odd size: reads straddle chunk boundaries
	for {
		n, err := b.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return out.Bytes(), err
		}
	}
}

func mustRequest(t testing.TB, method, url string, body io.Reader) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// chunkEncoder builds aws-chunked bodies for tests, signed when sg is set.
type chunkEncoder struct {
	sg   *signer
	prev []byte
}

func newChunkEncoder(secret string, sc scope, amzDate, seedHex string) *chunkEncoder {
	seed, _ := hex.DecodeString(seedHex)
	return &chunkEncoder{sg: &signer{key: sc.signingKey(secret), amzDate: amzDate, scope: sc}, prev: seed}
}

func (e *chunkEncoder) chunk(w *bytes.Buffer, data []byte) {
	if e == nil || e.sg == nil {
		fmt.Fprintf(w, "%x\r\n", len(data))
	} else {
		sum := sha256.Sum256(data)
		e.prev = e.sg.signChunk(e.prev, sum[:])
		fmt.Fprintf(w, "%x;chunk-signature=%x\r\n", len(data), e.prev)
	}
	if len(data) > 0 {
		w.Write(data)
		w.WriteString("\r\n")
	}
}

// encode frames data in chunks of size, then the final chunk and trailers
// (name, value pairs; signed when the encoder signs).
func (e *chunkEncoder) encode(data []byte, size int, trailers ...string) []byte {
	var w bytes.Buffer
	for len(data) > 0 {
		n := min(size, len(data))
		e.chunk(&w, data[:n])
		data = data[n:]
	}
	e.chunk(&w, nil)
	if len(trailers) == 0 {
		w.WriteString("\r\n")
		return w.Bytes()
	}
	var canon strings.Builder
	for i := 0; i+1 < len(trailers); i += 2 {
		fmt.Fprintf(&w, "%s:%s\r\n", trailers[i], trailers[i+1])
		canon.WriteString(trailers[i] + ":" + trailers[i+1] + "\n")
	}
	if e != nil && e.sg != nil {
		e.prev = e.sg.signTrailer(e.prev, canon.String())
		fmt.Fprintf(&w, "x-amz-trailer-signature:%x\r\n", e.prev)
	}
	w.WriteString("\r\n")
	return w.Bytes()
}

func checksumOf(t testing.TB, algo string, data []byte) string {
	t.Helper()
	h, err := NewChecksum(algo)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(data)
	return EncodeChecksum(h.Sum(nil))
}

func wantErr(t *testing.T, got, want error) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Fatalf("unexpected error: %v", got)
		}
		return
	}
	if !errors.Is(got, want) {
		t.Fatalf("error = %v, want %v", got, want)
	}
}
