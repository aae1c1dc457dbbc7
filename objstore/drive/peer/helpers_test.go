package peer

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
)

// testSecret is the cluster secret of the tests.
var testSecret = bytes.Repeat([]byte("s3cr3t-"), 6)

// testSlot is the slot the tests' drives serve.
const testSlot = 3

// fixture is a Dir served by a Server over loopback, and a Drive on it.
type fixture struct {
	dir    *drive.Dir
	server *Server
	http   *httptest.Server
	drive  *Drive
}

// newFixture serves a fresh Dir in t.TempDir() and returns a Drive on it
// whose exchanges give up after timeout.
func newFixture(t testing.TB, timeout time.Duration) *fixture {
	t.Helper()
	return newFixtureWith(t, fixtureOpts{timeout: timeout})
}

// fixtureOpts are the knobs of newFixtureWith.
type fixtureOpts struct {
	timeout time.Duration
	// wrap, when set, serves wrap(dir) instead of the Dir.
	wrap func(*drive.Dir) drive.Drive
	// served, when set, receives "METHOD path" once the server has
	// answered each request.
	served chan<- string
}

func newFixtureWith(t testing.TB, o fixtureOpts) *fixture {
	t.Helper()
	dir, _, err := drive.OpenDir(t.TempDir(), "peer-test", testSlot)
	if err != nil {
		t.Fatal(err)
	}
	var served drive.Drive = dir
	if o.wrap != nil {
		served = o.wrap(dir)
	}
	srv, err := NewServer(ServerConfig{Secret: testSecret, Drives: []drive.Drive{served}})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = srv
	if o.served != nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			srv.ServeHTTP(w, r)
			o.served <- r.Method + " " + r.URL.Path
		})
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	d, err := New(Config{URL: hs.URL, Slot: testSlot, Secret: testSecret, Timeout: o.timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.hc.CloseIdleConnections)
	return &fixture{dir: dir, server: srv, http: hs, drive: d}
}

// waitServed waits (bounded) for the server to have answered a request
// for path.
func waitServed(t testing.TB, served <-chan string, path string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-served:
			if strings.HasSuffix(got, " "+path) {
				return
			}
		case <-timeout:
			t.Fatalf("the server did not answer for %s within 10s", path)
		}
	}
}

// absent checks that shard name is not on the Dir.
func (f *fixture) absent(t testing.TB, name string) {
	t.Helper()
	if r, err := f.dir.Open(t.Context(), name); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			b := make([]byte, 64)
			n, _ := r.ReadAt(b, 0)
			_ = r.Close()
			t.Errorf("shard %s is there (%q...), want it absent", name, b[:n])
			return
		}
		t.Errorf("open %s: %v, want fs.ErrNotExist", name, err)
	}
}

// content reads shard name from the Dir.
func (f *fixture) content(t testing.TB, name string) []byte {
	t.Helper()
	r, err := f.dir.Open(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, 1<<40))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// request builds a request to the fixture's server for target (path and
// query), signed with secret at now.
func (f *fixture) request(t testing.TB, method, target string, body []byte, secret []byte, now time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, f.http.URL+target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	signAny(req, secret, now)
	return req
}

// signAny signs req like sign, for the slot its path names, whatever the
// path is.
func signAny(req *http.Request, secret []byte, now time.Time) {
	path := req.URL.EscapedPath()
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := computeMAC(secret, req.Method, path, req.URL.RawQuery, ts, slotText(path))
	req.Header.Set(HeaderTime, ts)
	req.Header.Set(HeaderMAC, hex.EncodeToString(mac))
}

// send runs req with a bounded client and returns the status and the
// error code of the answer ("" for a 2xx).
func send(t testing.TB, req *http.Request) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	if resp.StatusCode/100 == 2 {
		drainClose(resp)
		return resp.StatusCode, ""
	}
	var re *RemoteError
	if !errors.As(remoteError("test", resp), &re) {
		t.Fatalf("%s %s: %s without an error body", req.Method, req.URL, resp.Status)
	}
	return resp.StatusCode, re.Code
}

// putShard writes b to shard name through d in one WriteAt and closes it.
func putShard(t testing.TB, d drive.Drive, name string, b []byte) {
	t.Helper()
	w, err := d.Create(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
