package peer

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
)

// routeSeeds are requests of every kind, well formed or not.
var routeSeeds = [][3]string{
	{"GET", "/peer/v1/drives/3/shards", ""},
	{"GET", "/peer/v1/drives/3/shards/0a01", "op=open"},
	{"GET", "/peer/v1/drives/3/shards/0a01", "len=4096&off=0"},
	{"PUT", "/peer/v1/drives/3/shards/0a01", ""},
	{"DELETE", "/peer/v1/drives/3/shards/0a01", ""},
	{"PUT", "/peer/v1/drives/3/staged/0a01", ""},
	{"GET", "/peer/v1/drives/3/packs", ""},
	{"POST", "/peer/v1/drives/3/packs/0000000000000001", "create=1"},
	{"GET", "/peer/v1/drives/3/packs/0000000000000001", "len=1&off=7"},
	{"GET", "/peer/v1/drives/3/packs/0000000000000001", "op=size"},
	{"PUT", "/peer/v1/drives/3/packs/0000000000000001", "off=3"},
	{"DELETE", "/peer/v1/drives/3/packs/0000000000000001", ""},
	{"POST", "/peer/v1/drives/3/sync", ""},
	{"POST", "/peer/v1/drives/3/sync/files", ""},
	{"POST", "/peer/v1/drives/3/sync/packs", ""},
	{"DELETE", "/peer/v1/drives/3/shards/%2E%2E", ""},
	{"DELETE", "/peer/v1/drives/3/shards/a%2Fb", ""},
	{"DELETE", "/peer/v1/drives/3/shards/a%00", ""},
	{"DELETE", "/peer/v1/drives/3/shards/a%zz", ""},
	{"GET", "/peer/v1/drives/00/shards", ""},
	{"GET", "/peer/v1/drives/3/shards/x", "off=9223372036854775807&len=1"},
	{"GET", "/peer/v1/drives/3/shards/x", "off=0&len=0&len=1"},
}

// FuzzParseRequest checks the server's parsing of a request's method,
// path, query and authentication headers: it never panics, refuses bad
// names with drive.ErrInvalidName, keeps numbers in their bounds, and
// accepts a MAC only when it is the request's.
func FuzzParseRequest(f *testing.F) {
	for _, s := range routeSeeds {
		f.Add(s[0], s[1], s[2], "1700000000", "00")
	}
	now := time.Unix(1_700_000_000, 0)
	f.Fuzz(func(t *testing.T, method, path, query, ts, mac string) {
		rt, err := parseRoute(method, path, query)
		if name, ok := nameIn(path); ok && checkName(name) != nil && !errors.Is(err, drive.ErrInvalidName) {
			t.Fatalf("bad name %q: %v, want drive.ErrInvalidName", name, err)
		}
		if err == nil {
			checkRoute(t, method, path, query, rt)
		}

		h := http.Header{}
		h.Set(HeaderTime, ts)
		h.Set(HeaderMAC, mac)
		want := hex.EncodeToString(computeMAC(testSecret, method, path, query, ts, slotText(path)))
		if verify(testSecret, method, path, query, slotText(path), h, now) && mac != want {
			t.Fatalf("verified a MAC that is not the request's")
		}
		h.Set(HeaderMAC, want)
		secs, perr := strconv.ParseInt(ts, 10, 64)
		inSkew := perr == nil && strconv.FormatInt(secs, 10) == ts && secs >= 0 && len(ts) <= 12 &&
			now.Sub(time.Unix(secs, 0)).Abs() <= MaxSkew
		if got := verify(testSecret, method, path, query, slotText(path), h, now); got != inSkew {
			t.Fatalf("verify of the right MAC at %q = %v, want %v", ts, got, inSkew)
		}
	})
}

// nameIn returns the unescaped name of a path below shards/ or staged/.
func nameIn(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, pathPrefix)
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || (parts[1] != "shards" && parts[1] != "staged") {
		return "", false
	}
	if _, ok := parseSlot(parts[0]); !ok {
		return "", false
	}
	name, err := url.PathUnescape(parts[2])
	return name, err == nil
}

// checkRoute checks a parsed route's bounds, and that the client's path
// for it parses to the same route.
func checkRoute(t *testing.T, method, path, query string, rt route) {
	t.Helper()
	if rt.slot < 0 || rt.slot > maxSlot || rt.off < 0 || rt.off > maxOffset || rt.n < 0 || rt.n > maxIO ||
		rt.off+int64(rt.n) > maxOffset {
		t.Fatalf("%s %s?%s: route out of bounds: %+v", method, path, query, rt)
	}
	var sub string
	switch rt.op {
	case opOpen, opRead, opCreate, opRemove:
		sub = shardPath(rt.name)
	case opStage:
		sub = stagedPath(rt.name)
	case opPackOpen, opPackRead, opPackSize, opPackWrite, opPackRemove:
		sub = packPath(rt.seg)
	default:
		return
	}
	if rt.name != "" && checkName(rt.name) != nil {
		t.Fatalf("%s %s: accepted bad name %q", method, path, rt.name)
	}
	u, err := url.Parse("http://h" + pathPrefix + strconv.Itoa(rt.slot) + sub)
	if err != nil {
		t.Fatalf("client path for %+v: %v", rt, err)
	}
	again, err := parseRoute(method, u.EscapedPath(), query)
	if err != nil || again != rt {
		t.Fatalf("%s %s: route %+v, the client's path %s parses to %+v, %v", method, path, rt, u.EscapedPath(), again, err)
	}
}

// FuzzReadStream checks the server's parsing of write streams: it never
// panics, hands on only writes within bounds, and commits only a stream
// whose counts match what it received.
func FuzzReadStream(f *testing.F) {
	data := []byte("hello")
	f.Add(append(writeFrame(0, data), commitFrame(1, 5)...))
	f.Add(append(append(writeFrame(7, data), writeFrame(0, data)...), commitFrame(2, 10)...))
	f.Add(append(writeFrame(0, data), frameAbort))
	f.Add(append(writeFrame(0, data), commitFrame(1, 6)...))
	f.Add(writeFrame(maxOffset-5, data))
	f.Add([]byte{frameWrite, 0xff})
	f.Fuzz(func(t *testing.T, body []byte) {
		var nFrames, nBytes uint64
		commit, applyErr, err := readStream(bufio.NewReader(bytes.NewReader(body)), func(n int) []byte { return make([]byte, n) },
			func(p []byte, off int64) error {
				if len(p) == 0 || len(p) > maxIO || off < 0 || off > maxOffset-int64(len(p)) {
					t.Fatalf("write of %d bytes at %d out of bounds", len(p), off)
				}
				nFrames++
				nBytes += uint64(len(p))
				return nil
			})
		if applyErr != nil {
			t.Fatalf("apply error %v", applyErr)
		}
		if commit && err == nil {
			i := len(body) - frameCommitLen
			if i < 0 || body[i] != frameCommit || !slices.Equal(body[i:], commitFrame(nFrames, nBytes)) {
				t.Fatalf("committed a stream that does not end with its counts (%d frames, %d bytes)", nFrames, nBytes)
			}
		}
		if err == nil && !commit && (len(body) == 0 || body[len(body)-1] != frameAbort) {
			t.Fatal("a stream neither committed, aborted nor refused")
		}
	})
}

// FuzzServe sends signed requests built from the input to a Server of a
// real Dir: it never panics, answers with a status of the protocol, and
// never creates anything outside the drive's directory.
func FuzzServe(f *testing.F) {
	for _, s := range routeSeeds {
		target := s[1]
		if s[2] != "" {
			target += "?" + s[2]
		}
		f.Add(s[0], target, []byte(nil))
	}
	f.Add("PUT", "/peer/v1/drives/3/shards/0a01", append(writeFrame(0, []byte("x")), commitFrame(1, 1)...))
	f.Add("PUT", "/peer/v1/drives/3/packs/0000000000000001?off=3", []byte("rec"))
	f.Add("POST", "/peer/v1/drives/3/sync/files", nameLines([]string{"0a01", "zz"}))
	f.Add("POST", "/peer/v1/drives/3/sync/packs", []byte(`{"segs":[1,2]}`))

	parent := f.TempDir()
	root := filepath.Join(parent, "drive")
	dir, _, err := drive.OpenDir(root, "peer-fuzz", 3)
	if err != nil {
		f.Fatal(err)
	}
	srv, err := NewServer(ServerConfig{Secret: testSecret, Drives: []drive.Drive{dir}})
	if err != nil {
		f.Fatal(err)
	}
	statuses := []int{200, 204, 400, 404, 413, 500, 503, 507}
	f.Fuzz(func(t *testing.T, method, target string, body []byte) {
		u, err := url.ParseRequestURI(target)
		if err != nil || method == "" || strings.ContainsFunc(method, func(r rune) bool { return r < 'A' || r > 'Z' }) {
			t.Skip()
		}
		req := &http.Request{
			Method: method, URL: u, RequestURI: target, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: readCloser{bytes.NewReader(body)}, ContentLength: int64(len(body)), Host: "peer",
		}
		req = req.WithContext(t.Context())
		signAny(req, testSecret, time.Now())
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if !slices.Contains(statuses, rec.Code) {
			t.Fatalf("%s %s: status %d", method, target, rec.Code)
		}
		if rec.Code/100 == 2 {
			if _, err := parseRoute(method, u.EscapedPath(), u.RawQuery); err != nil {
				t.Fatalf("%s %s answered %d, but parses to %v", method, target, rec.Code, err)
			}
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 1 || ents[0].Name() != "drive" {
			t.Fatalf("%s %s made %v beside the drive", method, target, ents)
		}
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if !slices.Contains([]string{"format.json", "data", "packs", "tmp"}, e.Name()) {
				t.Fatalf("%s %s made %s in the drive's directory", method, target, e.Name())
			}
		}
	})
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
