package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
)

// TestServerRefuses sends well-signed requests the server must refuse,
// each with its status and code, touching nothing.
func TestServerRefuses(t *testing.T) {
	f := newFixture(t, 10*time.Second)
	putShard(t, f.drive, "0a00", []byte("kept"))
	now := time.Now()
	s := pathPrefix + "3/"
	manyNames := nameLines(strings.Split(strings.Repeat("ab,", maxSyncNames+1), ",")[:maxSyncNames+1])
	tests := []struct {
		method, target string
		body           []byte
		status         int
		code           string
	}{
		{"GET", s + "shards/?op=open", nil, 400, codeInvalidName},
		{"GET", s + "shards/.?op=open", nil, 400, codeInvalidName},
		{"GET", s + "shards/..?op=open", nil, 400, codeInvalidName},
		{"DELETE", s + "shards/..", nil, 400, codeInvalidName},
		{"DELETE", s + "shards/%2E%2E", nil, 400, codeInvalidName},
		{"DELETE", s + "shards/a%2Fb", nil, 400, codeInvalidName},
		{"DELETE", s + "shards/..%2F..%2Fformat.json", nil, 400, codeInvalidName},
		{"DELETE", s + "shards/a%5Cb", nil, 400, codeInvalidName},
		{"DELETE", s + "shards/a%00b", nil, 400, codeInvalidName},
		{"DELETE", s + "shards/" + strings.Repeat("a", maxNameLen+1), nil, 400, codeInvalidName},
		{"PUT", s + "shards/..", []byte{frameAbort}, 400, codeInvalidName},
		{"PUT", s + "staged/a%2Fb", []byte{frameAbort}, 400, codeInvalidName},
		{"DELETE", s + "shards/0a00/x", nil, 400, codeBadRequest},
		{"DELETE", s + "packs/7", nil, 400, codeBadRequest},
		{"DELETE", s + "packs/000000000000000G", nil, 400, codeBadRequest},
		{"DELETE", s + "packs/000000000000000A", nil, 400, codeBadRequest},
		{"DELETE", s + "packs/-000000000000007", nil, 400, codeBadRequest},
		{"DELETE", s + "packs/00000000000000007", nil, 400, codeBadRequest},
		{"POST", s + "packs/0000000000000007", nil, 400, codeBadRequest},
		{"POST", s + "packs/0000000000000007?create=yes", nil, 400, codeBadRequest},
		{"POST", s + "packs/0000000000000007?create=1&create=1", nil, 400, codeBadRequest},
		{"POST", s + "packs/0000000000000007?create=1&x=1", nil, 400, codeBadRequest},
		{"GET", s + "shards/0a00?off=0", nil, 400, codeBadRequest},
		{"GET", s + "shards/0a00?off=-1&len=1", nil, 400, codeBadRequest},
		{"GET", s + "shards/0a00?off=01&len=1", nil, 400, codeBadRequest},
		{"GET", s + "shards/0a00?off=0&len=0", nil, 400, codeBadRequest},
		{"GET", s + "shards/0a00?off=0&len=" + fmt.Sprint(maxIO+1), nil, 400, codeBadRequest},
		{"GET", s + "shards/0a00?off=" + fmt.Sprint(maxOffset) + "&len=1", nil, 400, codeBadRequest},
		{"GET", s + "shards/0a00?op=stat", nil, 400, codeBadRequest},
		{"GET", s + "shards/0a00?%zz", nil, 400, codeBadRequest},
		{"POST", s + "shards/0a00", nil, 400, codeBadRequest},
		{"GET", s + "staged/0a00?op=open", nil, 400, codeBadRequest},
		{"PUT", s + "shards", nil, 400, codeBadRequest},
		{"GET", s + "sync", nil, 400, codeBadRequest},
		{"POST", s + "sync/other", nil, 400, codeBadRequest},
		{"GET", s + "else", nil, 400, codeBadRequest},
		{"GET", pathPrefix + "03/shards", nil, 400, codeBadRequest},
		{"GET", pathPrefix + "x/shards", nil, 400, codeBadRequest},
		{"GET", pathPrefix + "99999999/shards", nil, 400, codeBadRequest},
		{"GET", pathPrefix + "4/shards", nil, 404, codeNoDrive},
		{"GET", "/peer/v2/drives/3/shards", nil, 400, codeBadRequest},
		{"PUT", s + "packs/0000000000000007?off=0", []byte("rec"), 404, codeNotExist},
		{"PUT", s + "packs/0000000000000007?off=0", nil, 400, codeBadRequest},
		{"POST", s + "sync/files", nameLines([]string{"0a00", "a/b"}), 400, codeInvalidName},
		{"POST", s + "sync/files", []byte("0a00\n"), 400, codeBadRequest},
		{"POST", s + "sync/files", []byte(".end 0\n"), 400, codeBadRequest},
		{"POST", s + "sync/files", manyNames, 413, codeTooLarge},
		{"POST", s + "sync/files", nameLines([]string{"0b00"}), 404, codeNotExist},
		{"POST", s + "sync/packs", []byte(`{"segs": [-1]}`), 400, codeBadRequest},
		{"POST", s + "sync/packs", []byte(`{"segs": `), 400, codeBadRequest},
		{"POST", s + "sync/packs", fmt.Appendf(nil, `{"segs": [%s1]}`, strings.Repeat("1,", maxSyncSegs)), 413, codeTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			req := f.request(t, tt.method, tt.target, tt.body, testSecret, now)
			if status, code := send(t, req); status != tt.status || code != tt.code {
				t.Errorf("answered %d %q, want %d %q", status, code, tt.status, tt.code)
			}
		})
	}
	if got := f.content(t, "0a00"); string(got) != "kept" {
		t.Errorf("shard holds %q", got)
	}
	var names []string
	_ = f.dir.Walk(t.Context(), func(n string) error { names = append(names, n); return nil })
	if len(names) != 1 {
		t.Errorf("shards %v, want [0a00]", names)
	}
	if segs, _ := f.dir.Packs(t.Context()); len(segs) != 0 {
		t.Errorf("packs %v, want none", segs)
	}
}

// TestOddNames checks that names a drive accepts but a URL or a line must
// escape go through whole.
func TestOddNames(t *testing.T) {
	f := newFixture(t, 10*time.Second)
	d := f.drive
	// A Dir keeps a name in the fan-out directory of its first two
	// characters, which must be hex digits.
	var odd []string
	for _, s := range []string{" b", "%2Fb", "?b#c", "\nline", "\xff\xfe", "ü", ";b,c", "...", "", "+&=", "\x01"} {
		odd = append(odd, "ab"+s)
	}
	odd = append(odd, "a")
	for i, name := range odd {
		putShard(t, d, name, []byte{byte(i)})
	}
	got := map[string]bool{}
	if err := d.Walk(t.Context(), func(n string) error { got[n] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for i, name := range odd {
		if !got[name] {
			t.Errorf("walk misses %q (has %v)", name, got)
		}
		if b := f.content(t, name); !bytes.Equal(b, []byte{byte(i)}) {
			t.Errorf("%q holds %q", name, b)
		}
	}
	if err := d.SyncFiles(t.Context(), odd); err != nil {
		t.Errorf("SyncFiles: %v", err)
	}
	for _, name := range odd {
		if err := d.Remove(t.Context(), name); err != nil {
			t.Errorf("remove %q: %v", name, err)
		}
	}
	if err := d.Walk(t.Context(), func(n string) error { return fmt.Errorf("left %q", n) }); err != nil {
		t.Error(err)
	}
}

// TestLargeIO checks reads, pack writes and flush lists past the
// per-request limits, which the client splits.
func TestLargeIO(t *testing.T) {
	f := newFixture(t, 20*time.Second)
	d := f.drive
	ctx := t.Context()
	big := make([]byte, 2*maxIO+12345)
	for i := range big {
		big[i] = byte(i * 31)
	}
	putShard(t, d, "0a00", big)
	r, err := d.Open(ctx, "0a00")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(big)+100)
	if n, err := r.ReadAt(got, 0); n != len(big) || !errors.Is(err, io.EOF) {
		t.Fatalf("read past the end: %d, %v; want %d, io.EOF", n, err, len(big))
	} else if !bytes.Equal(got[:n], big) {
		t.Error("read back wrong")
	}
	if n, err := r.ReadAt(got[:maxIO], int64(len(big)-maxIO)); n != maxIO || err != nil {
		t.Errorf("read to the exact end: %d, %v", n, err)
	}
	_ = r.Close()
	if _, err := r.ReadAt(got[:1], 0); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("read after close: %v", err)
	}

	p, err := d.OpenPack(ctx, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.WriteAt(big, 10); err != nil {
		t.Fatal(err)
	}
	if n, err := p.Size(); n != int64(len(big))+10 || err != nil {
		t.Errorf("size %d, %v", n, err)
	}
	if n, err := p.ReadAt(got[:len(big)], 10); n != len(big) || err != nil || !bytes.Equal(got[:n], big) {
		t.Errorf("pack read: %d, %v", n, err)
	}
	_ = p.Close()

	names := make([]string, 2*maxSyncNames+3)
	for i := range names {
		names[i] = "0a00"
	}
	if err := d.SyncFiles(ctx, names); err != nil {
		t.Errorf("SyncFiles of %d names: %v", len(names), err)
	}
	segs := make([]uint64, 2*maxSyncSegs+3)
	for i := range segs {
		segs[i] = 5
	}
	if err := d.SyncPacks(ctx, segs); err != nil {
		t.Errorf("SyncPacks of %d segments: %v", len(segs), err)
	}
}

// TestErrorCodes checks that every server-side error the protocol names
// comes back as its sentinel on the client.
func TestErrorCodes(t *testing.T) {
	tests := []struct {
		err    error // on the server
		code   string
		status int
		want   error // errors.Is on the client; nil for none
	}{
		{fmt.Errorf("drive 1: open x: %w", fs.ErrNotExist), codeNotExist, 404, fs.ErrNotExist},
		{fmt.Errorf("%w %q", drive.ErrInvalidName, ".."), codeInvalidName, 400, drive.ErrInvalidName},
		{fmt.Errorf("write: %w", syscall.ENOSPC), codeNoSpace, 507, syscall.ENOSPC},
		{fmt.Errorf("write: %w", syscall.EDQUOT), codeNoSpace, 507, syscall.ENOSPC},
		{fmt.Errorf("%w: slot 9", errNoDrive), codeNoDrive, 404, ErrUnreachable},
		{fmt.Errorf("%w: x", errBadRequest), codeBadRequest, 400, nil},
		{errCut, codeBadRequest, 400, nil},
		{fmt.Errorf("%w: x", errTooLarge), codeTooLarge, 413, nil},
		{context.Canceled, codeCanceled, 503, nil},
		{syscall.EIO, codeInternal, 500, nil},
	}
	for _, tt := range tests {
		t.Run(tt.code+" "+tt.err.Error(), func(t *testing.T) {
			code, status := errorCode(tt.err)
			if code != tt.code || status != tt.status {
				t.Fatalf("errorCode = %s %d, want %s %d", code, status, tt.code, tt.status)
			}
			rec := httptest.NewRecorder()
			writeError(rec, tt.err)
			err := remoteError("peer:x", rec.Result())
			var re *RemoteError
			if !errors.As(err, &re) || re.Code != tt.code || re.Status != tt.status || re.Message != tt.err.Error() {
				t.Fatalf("client got %#v", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("%v is not %v", err, tt.want)
			}
			for _, other := range []error{fs.ErrNotExist, drive.ErrInvalidName, syscall.ENOSPC, ErrAuth, ErrUnreachable} {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("%v is %v too", err, other)
				}
			}
		})
	}
	// An auth refusal, and answers that are not ours.
	rec := httptest.NewRecorder()
	writeErrorCode(rec, codeAuth, http.StatusUnauthorized, authMessage)
	if err := remoteError("peer:x", rec.Result()); !errors.Is(err, ErrAuth) {
		t.Errorf("auth answer: %v", err)
	}
	for status, want := range map[int]error{401: ErrAuth, 502: ErrUnreachable, 503: ErrUnreachable, 504: ErrUnreachable, 418: nil} {
		resp := &http.Response{StatusCode: status, Status: http.StatusText(status), Body: http.NoBody}
		err := remoteError("peer:x", resp)
		if err == nil || (want != nil && !errors.Is(err, want)) {
			t.Errorf("bare %d: %v, want %v", status, err, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{URL: "http://127.0.0.1:9100", Slot: 1, Secret: testSecret}
	tests := []struct {
		name   string
		mutate func(c *Config)
		valid  bool
	}{
		{"ok", func(*Config) {}, true},
		{"https and slash", func(c *Config) { c.URL = "https://peer.example:9100/" }, true},
		{"short secret", func(c *Config) { c.Secret = testSecret[:MinSecretLen-1] }, false},
		{"no secret", func(c *Config) { c.Secret = nil }, false},
		{"negative slot", func(c *Config) { c.Slot = -1 }, false},
		{"no scheme", func(c *Config) { c.URL = "127.0.0.1:9100" }, false},
		{"other scheme", func(c *Config) { c.URL = "ftp://h:1" }, false},
		{"path", func(c *Config) { c.URL = "http://h:1/peer" }, false},
		{"query", func(c *Config) { c.URL = "http://h:1?x=1" }, false},
		{"user", func(c *Config) { c.URL = "http://u:p@h:1" }, false},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.mutate(&c)
			_, err := New(c)
			if tt.valid != (err == nil) || (err != nil && !errors.Is(err, ErrConfig)) {
				t.Errorf("New: %v, valid %v", err, tt.valid)
			}
		})
	}
	dir, _, err := drive.OpenDir(t.TempDir(), "peer-test", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []ServerConfig{
		{Secret: testSecret[:10], Drives: []drive.Drive{dir}},
		{Secret: testSecret, Drives: []drive.Drive{dir, dir}},
		{Secret: testSecret, Drives: []drive.Drive{nil}},
	} {
		if _, err := NewServer(sc); !errors.Is(err, ErrConfig) {
			t.Errorf("NewServer(%d drives, %d-byte secret): %v", len(sc.Drives), len(sc.Secret), err)
		}
	}
}
