package s3

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
	"github.com/rs/zerolog"
)

// TestRefusedBodyAnswered: a PUT refused before its body is read gets its
// S3 error, whether the client sends the body at once (as aws-sdk-go-v2
// does, though it asks for "100 Continue") or waits for the answer first.
// Without the drain the first client's writes meet a closed connection.
func TestRefusedBodyAnswered(t *testing.T) {
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 4, Parity: 2})
	srv, err := New(st, Options{Secret: func(string) (string, bool) { return "secret", true }, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	const size = 48 << 20 // more than loopback's socket buffers hold (32 MiB to read, 4 MiB to write)
	head := fmt.Sprintf("PUT /nosuchbucket/k HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", hs.Listener.Addr(), size)

	for _, tt := range []struct {
		name     string
		sendBody bool // without waiting for an answer
	}{
		{"body sent at once", true},
		{"client waits for 100 Continue", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", hs.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // a stall fails rather than hangs
			if _, err := io.WriteString(conn, head); err != nil {
				t.Fatal(err)
			}
			if tt.sendBody {
				// Every byte is written before the answer is read.
				if _, err := io.Copy(conn, io.LimitReader(zeros{}, size)); err != nil {
					t.Fatalf("writing the body: %v (the server closed the connection under it)", err)
				}
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode < 400 || !bytes.Contains(body, []byte("<Error>")) {
				t.Fatalf("answer %d %q, want an S3 error (and never 100 Continue)", resp.StatusCode, body)
			}
			if !resp.Close {
				t.Error("no Connection: close: an answer that left the body unread must close")
			}
		})
	}
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
