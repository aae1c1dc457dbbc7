package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
	"github.com/cairnstore/cairn/frontends/s3/sse"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
	"github.com/rs/zerolog"
)

// syncBuffer is a log sink the handler goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSSEGetStops: an encrypted GET whose stored data stops
// authenticating part-way sends the plaintext before it and then cuts
// the response short (its Content-Length is not reached; the request's
// log line is written), and a client hanging up part-way ends the GET;
// neither leaves a goroutine behind.
func TestSSEGetStops(t *testing.T) {
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 4, Parity: 2})
	keys, err := sse.NewKeys(bytes.Repeat([]byte{7}, 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv, err := New(st, Options{Secret: func(string) (string, bool) { return "secret", true }, SSE: keys,
		Logger: zerolog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := context.Background()
	if err := st.CreateBucket(ctx, "bkt", objstore.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	plain := make([]byte, 32<<20) // more than loopback's socket buffers hold
	_, _ = rand.Read(plain)
	// An SSE-S3 object as the face stores one, one package of it
	// changed: the store checks and keeps it as any bytes.
	put := func(name string, corruptAt int) {
		objKey, rec, err := keys.NewObjectKey(sse.Params{Kind: sse.KindS3})
		if err != nil {
			t.Fatal(err)
		}
		e, err := sse.NewEncrypter(bytes.NewReader(plain), int64(len(plain)), objKey, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := io.ReadAll(e)
		if err != nil {
			t.Fatal(err)
		}
		if corruptAt >= 0 {
			stored[corruptAt] ^= 1
		}
		var a objstore.Attrs
		setSys(&a, sysSSE, rec.Encode())
		if _, err := st.Put(ctx, "bkt", name, bytes.NewReader(stored), int64(len(stored)), objstore.PutOptions{Attrs: a}); err != nil {
			t.Fatal(err)
		}
	}
	sealed := sse.PackageSize + sse.TagSize
	put("bad", sse.HeaderSize+40*sealed+100) // package 40, 2.5 MiB in
	put("good", -1)
	get := func(name string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/bkt/"+name, nil)
		if err := sigv4.Sign(req, "test", "secret", "us-east-1", "s3", "", time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(plain)) {
			t.Fatalf("GET %s: %s, %d bytes", name, resp.Status, resp.ContentLength)
		}
		return resp
	}
	before := runtime.NumGoroutine()

	resp := get("bad")
	got, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("corrupt object: body read ended with %v after %d bytes, want a truncated body", err, len(got))
	}
	if len(got) > 40*sse.PackageSize || !bytes.Equal(got, plain[:len(got)]) {
		t.Fatalf("corrupt object: %d bytes before the cut (package 40 at %d), a prefix: %v", len(got), 40*sse.PackageSize, bytes.Equal(got, plain[:min(len(got), len(plain))]))
	}

	resp = get("good")
	if _, err := io.ReadFull(resp.Body, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close() // hangs up with 31 MiB to go

	hs.CloseClientConnections()
	http.DefaultClient.CloseIdleConnections()
	for i := 0; runtime.NumGoroutine() > before; i++ {
		if i == 1000 {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
	// One log line a GET, each of a body cut short.
	out := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var e struct {
			API, Key string
			Out      int64
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if e.API == "GetObject" {
			out[e.Key] = e.Out
		}
	}
	if len(out) != 2 || out["bad"] != int64(len(got)) || out["good"] <= 0 || out["good"] >= int64(len(plain)) {
		t.Fatalf("GETs logged with bytes out %v, want bad: %d, good: fewer than %d\n%s", out, len(got), len(plain), logs.String())
	}
}
