package peer

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
)

// TestAuthRefused sends requests that would change the drive with a bad
// MAC, time or headers: each is refused with 401 "auth", and the drive is
// left as it was.
func TestAuthRefused(t *testing.T) {
	f := newFixture(t, 10*time.Second)
	putShard(t, f.drive, "0a00", []byte("kept"))
	now := time.Now()
	other := bytes.Repeat([]byte("x"), MinSecretLen)
	frames := append(append([]byte{frameWrite, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4}, "evil"...), commitFrame(1, 4)...)

	tests := []struct {
		name   string
		method string
		target string
		body   []byte
		mutate func(req *http.Request)
	}{
		{name: "wrong secret", method: http.MethodDelete, target: "/peer/v1/drives/3/shards/0a00",
			mutate: func(req *http.Request) { sign(req, other, testSlot, now) }},
		{name: "stale time", method: http.MethodDelete, target: "/peer/v1/drives/3/shards/0a00",
			mutate: func(req *http.Request) { sign(req, testSecret, testSlot, now.Add(-MaxSkew-time.Minute)) }},
		{name: "future time", method: http.MethodDelete, target: "/peer/v1/drives/3/shards/0a00",
			mutate: func(req *http.Request) { sign(req, testSecret, testSlot, now.Add(MaxSkew+time.Minute)) }},
		{name: "time changed after signing", method: http.MethodDelete, target: "/peer/v1/drives/3/shards/0a00",
			mutate: func(req *http.Request) {
				req.Header.Set(HeaderTime, req.Header.Get(HeaderTime)+"0")
			}},
		{name: "tampered path", method: http.MethodDelete, target: "/peer/v1/drives/3/shards/0b00",
			mutate: func(req *http.Request) { req.URL.Path = "/peer/v1/drives/3/shards/0a00" }},
		{name: "tampered slot", method: http.MethodPost, target: "/peer/v1/drives/2/packs/0000000000000007?create=1",
			mutate: func(req *http.Request) { req.URL.Path = "/peer/v1/drives/3/packs/0000000000000007" }},
		{name: "tampered query", method: http.MethodPost, target: "/peer/v1/drives/3/packs/0000000000000007?create=0",
			mutate: func(req *http.Request) { req.URL.RawQuery = "create=1" }},
		{name: "tampered method", method: http.MethodGet, target: "/peer/v1/drives/3/shards/0a00?op=open",
			mutate: func(req *http.Request) { req.Method = http.MethodDelete; req.URL.RawQuery = "" }},
		{name: "no headers", method: http.MethodDelete, target: "/peer/v1/drives/3/shards/0a00",
			mutate: func(req *http.Request) { req.Header.Del(HeaderTime); req.Header.Del(HeaderMAC) }},
		{name: "no time", method: http.MethodDelete, target: "/peer/v1/drives/3/shards/0a00",
			mutate: func(req *http.Request) { req.Header.Del(HeaderTime) }},
		{name: "no MAC", method: http.MethodDelete, target: "/peer/v1/drives/3/shards/0a00",
			mutate: func(req *http.Request) { req.Header.Del(HeaderMAC) }},
		{name: "MAC not hex", method: http.MethodDelete, target: "/peer/v1/drives/3/shards/0a00",
			mutate: func(req *http.Request) { req.Header.Set(HeaderMAC, "zz") }},
		{name: "MAC twice", method: http.MethodDelete, target: "/peer/v1/drives/3/shards/0a00",
			mutate: func(req *http.Request) { req.Header.Add(HeaderMAC, req.Header.Get(HeaderMAC)) }},
		{name: "stream, wrong secret", method: http.MethodPut, target: "/peer/v1/drives/3/shards/0a00", body: frames,
			mutate: func(req *http.Request) { sign(req, other, testSlot, now) }},
		{name: "stream, new shard", method: http.MethodPut, target: "/peer/v1/drives/3/shards/0c00", body: frames,
			mutate: func(req *http.Request) { req.Header.Del(HeaderMAC) }},
		{name: "sync", method: http.MethodPost, target: "/peer/v1/drives/3/sync",
			mutate: func(req *http.Request) { sign(req, other, testSlot, now) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := f.request(t, tt.method, tt.target, tt.body, testSecret, now)
			tt.mutate(req)
			if status, code := send(t, req); status != http.StatusUnauthorized || code != codeAuth {
				t.Errorf("answered %d %q, want 401 %q", status, code, codeAuth)
			}
		})
	}

	// The drive is as it was: the shard whole, nothing else.
	wantKept(t, f)
	var names []string
	_ = f.dir.Walk(t.Context(), func(n string) error { names = append(names, n); return nil })
	if !slices.Equal(names, []string{"0a00"}) {
		t.Errorf("shards %v, want [0a00]", names)
	}
	if segs, _ := f.dir.Packs(t.Context()); len(segs) != 0 {
		t.Errorf("packs %v, want none", segs)
	}
}

// TestAuthClient checks that a Drive with the wrong secret, or whose clock
// is off, gets ErrAuth from every kind of call and changes nothing.
func TestAuthClient(t *testing.T) {
	f := newFixture(t, 10*time.Second)
	putShard(t, f.drive, "0a00", []byte("kept"))
	wrong, err := New(Config{URL: f.http.URL, Slot: testSlot, Secret: bytes.Repeat([]byte("y"), 40), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// A server whose clock is ahead of the client's by more than MaxSkew.
	ahead, err := NewServer(ServerConfig{Secret: testSecret, Drives: []drive.Drive{f.dir},
		Now: func() time.Time { return time.Now().Add(MaxSkew + time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(ahead)
	t.Cleanup(hs.Close)
	skewed, err := New(Config{URL: hs.URL, Slot: testSlot, Secret: testSecret, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Drive{wrong, skewed} {
		ctx := t.Context()
		calls := driveCalls(ctx, d)
		for _, c := range calls {
			if err := c.fn(); !errors.Is(err, ErrAuth) {
				t.Errorf("%s %s: %v, want ErrAuth", d, c.name, err)
			} else if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrUnreachable) {
				t.Errorf("%s %s: %v also matches another sentinel", d, c.name, err)
			}
		}
	}
	wantKept(t, f)
	if segs, _ := f.dir.Packs(t.Context()); len(segs) != 0 {
		t.Errorf("packs %v, want none", segs)
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	good := func() http.Header {
		req, _ := http.NewRequest(http.MethodGet, "http://h/peer/v1/drives/3/shards/ab?off=1&len=2", nil)
		sign(req, testSecret, 3, now)
		return req.Header
	}
	tests := []struct {
		name                string
		method, path, query string
		slot                string
		header              func() http.Header
		now                 time.Time
		want                bool
	}{
		{"good", "GET", "/peer/v1/drives/3/shards/ab", "off=1&len=2", "3", good, now, true},
		{"edge of skew", "GET", "/peer/v1/drives/3/shards/ab", "off=1&len=2", "3", good, now.Add(MaxSkew), true},
		{"past skew", "GET", "/peer/v1/drives/3/shards/ab", "off=1&len=2", "3", good, now.Add(MaxSkew + time.Second), false},
		{"other slot", "GET", "/peer/v1/drives/3/shards/ab", "off=1&len=2", "4", good, now, false},
		{"other query", "GET", "/peer/v1/drives/3/shards/ab", "off=1&len=3", "3", good, now, false},
		{"other method", "PUT", "/peer/v1/drives/3/shards/ab", "off=1&len=2", "3", good, now, false},
		{"time with sign", "GET", "/peer/v1/drives/3/shards/ab", "off=1&len=2", "3", func() http.Header {
			h := good()
			h.Set(HeaderTime, "+"+h.Get(HeaderTime))
			return h
		}, now, false},
		{"empty", "GET", "/peer/v1/drives/3/shards/ab", "off=1&len=2", "3", func() http.Header { return http.Header{} }, now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verify(testSecret, tt.method, tt.path, tt.query, tt.slot, tt.header(), tt.now); got != tt.want {
				t.Errorf("verify = %v, want %v", got, tt.want)
			}
		})
	}
}

// wantKept fails unless the fixture's shard 0a00 still holds "kept".
func wantKept(t *testing.T, f *fixture) {
	t.Helper()
	r, err := f.dir.Open(t.Context(), "0a00")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	n, _ := r.ReadAt(b, 0)
	_ = r.Close()
	if string(b[:n]) != "kept" {
		t.Errorf("shard holds %q", b[:n])
	}
}
