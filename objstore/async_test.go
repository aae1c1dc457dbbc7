package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPutAsyncReadsItsWrites: operations on a key wait for its pending
// asynchronous puts, so a reader never sees an older state than a put
// that PutAsync returned for, and puts of one key land in order.
func TestPutAsyncReadsItsWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "async")
	var last *Pending
	for i := range 50 {
		data := randBytes(100+i*1000, uint64(i))
		p, err := s.PutAsync(ctx, "async", "k", FromReader(bytes.NewReader(data), int64(len(data))), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, s, "async", "k", GetOptions{}); !bytes.Equal(got, data) {
			t.Fatalf("put %d: read %d bytes, want the %d just put", i, len(got), len(data))
		}
		last = p
	}
	info, err := last.Wait(ctx)
	if err != nil || info.Size != int64(100+49*1000) {
		t.Fatalf("last pending: %+v, %v", info, err)
	}
	for i := range 20 {
		data := []byte(fmt.Sprint(i))
		if _, err := s.PutAsync(ctx, "async", fmt.Sprintf("dir/%02d", i), FromReader(bytes.NewReader(data), int64(len(data))), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.List(ctx, "async", ListOptions{Prefix: "dir/"})
	if err != nil || len(page.Objects) != 20 {
		t.Fatalf("list after 20 async puts: %d objects, %v", len(page.Objects), err)
	}
	n, err := s.RenamePrefix(ctx, "async", "dir/", "moved/", RenameOptions{})
	if err != nil || n != 20 {
		t.Fatalf("rename prefix: %d, %v", n, err)
	}
	if err := s.Sync(ctx, "async", "dir/00"); err != nil {
		t.Fatal(err)
	}
}

func TestPutAsyncErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 1, 0)
	mustBucket(t, s, "asyncerr")
	if _, err := s.PutAsync(ctx, "nobucket", "k", FromReader(bytes.NewReader(nil), 0), PutOptions{}); !errors.Is(err, ErrNoSuchBucket) {
		t.Fatalf("missing bucket: %v", err)
	}
	mustPut(t, s, "asyncerr", "k", []byte("x"))
	if _, err := s.PutAsync(ctx, "asyncerr", "k", FromReader(bytes.NewReader(nil), 0), PutOptions{IfNoneMatch: "*"}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("if-none-match on an existing key: %v", err)
	}
}

func TestRenamePrefixReplaceMarker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 1, 0)
	mustBucket(t, s, "rpm")
	mustPut(t, s, "rpm", "src/a", []byte("a"))
	mustPut(t, s, "rpm", "empty/", nil)
	mustPut(t, s, "rpm", "full/", nil)
	mustPut(t, s, "rpm", "full/x", []byte("x"))
	cases := []struct {
		to      string
		replace bool
		wantErr error
	}{
		{"empty/", false, ErrPreconditionFailed},
		{"full/", true, ErrPreconditionFailed},
		{"empty/", true, nil},
	}
	for _, c := range cases {
		_, err := s.RenamePrefix(ctx, "rpm", "src/", c.to, RenameOptions{IfNoneMatch: "*", ReplaceMarker: c.replace})
		if !errors.Is(err, c.wantErr) && (err != nil || c.wantErr != nil) {
			t.Fatalf("rename to %s (replace %v): %v, want %v", c.to, c.replace, err, c.wantErr)
		}
	}
	if got := readAll(t, s, "rpm", "empty/a", GetOptions{}); string(got) != "a" {
		t.Fatalf("moved file: %q", got)
	}
	if _, err := s.Head(ctx, "rpm", "empty/", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("replaced marker still there: %v", err)
	}
}

func TestSetMetaAsync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "setmeta")
	data := randBytes(5000, 3)
	if _, err := s.PutAsync(ctx, "setmeta", "k", FromReader(bytes.NewReader(data), int64(len(data))), PutOptions{ContentType: "a/b"}); err != nil {
		t.Fatal(err)
	}
	p, err := s.SetMetaAsync(ctx, "setmeta", "k", "text/plain", map[string]string{"x-amz-meta-m": "1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Head(ctx, "setmeta", "k", GetOptions{})
	if err != nil || info.ContentType != "text/plain" || info.Meta["x-amz-meta-m"] != "1" || info.Size != 5000 {
		t.Fatalf("head after set meta: %+v, %v", info, err)
	}
	if got := readAll(t, s, "setmeta", "k", GetOptions{}); !bytes.Equal(got, data) {
		t.Fatal("set meta changed the bytes")
	}
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	p, err = s.SetMetaAsync(ctx, "setmeta", "missing", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(ctx); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("set meta of a missing key: %v", err)
	}
}

// TestPutBackground: the write itself runs in the background; readers of
// the key wait for it, errors come from Wait, and Close finishes every
// background put before it returns, so none is lost.
func TestPutBackground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := openReopenable(t)
	var err error
	mustBucket(t, s, "bgput")
	want := map[string][]byte{}
	for i := range 40 {
		key := fmt.Sprintf("k%02d", i)
		want[key] = randBytes(1+i*7000, uint64(i))
		if _, err := s.PutAsync(ctx, "bgput", key, readerFunc(bytes.NewReader(want[key]), int64(len(want[key]))), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := readAll(t, s, "bgput", "k07", GetOptions{}); !bytes.Equal(got, want["k07"]) {
		t.Fatalf("read after a background put: %d bytes, want %d", len(got), len(want["k07"]))
	}
	p, err := s.PutAsync(ctx, "nobucket", "k", readerFunc(bytes.NewReader(nil), 0), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(ctx); !errors.Is(err, ErrNoSuchBucket) {
		t.Fatalf("background put into a missing bucket: %v", err)
	}
	if _, err := s.PutAsync(ctx, "bgput", "k", readerFunc(bytes.NewReader(nil), 0), PutOptions{IfNoneMatch: "*"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("background put with a condition: %v", err)
	}
	// Close drains what is still in flight.
	for i := 40; i < 80; i++ {
		key := fmt.Sprintf("k%02d", i)
		want[key] = randBytes(1+i*7000, uint64(i))
		if _, err := s.PutAsync(ctx, "bgput", key, readerFunc(bytes.NewReader(want[key]), int64(len(want[key]))), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutAsync(ctx, "bgput", "late", readerFunc(bytes.NewReader(nil), 0), PutOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("background put after close: %v", err)
	}
	s, err = Open(ctx, withBolt(t, opt))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for key, data := range want {
		if got := readAll(t, s, "bgput", key, GetOptions{}); !bytes.Equal(got, data) {
			t.Fatalf("%s after close and reopen: %d bytes, want %d", key, len(got), len(data))
		}
	}
}

// TestBackgroundBurst: background operations start in bursts, but
// whoever waits for one (Wait, a read of its key, a listing of its
// prefix) starts it at once, and Close starts and drains those nobody
// waited for; small in-memory puts, written by their burst, land in the
// order they were made, after any earlier put of their key. The burst
// delay is an hour here, so any of these that did not start the burst
// would time out.
func TestBackgroundBurst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := openReopenable(t)
	var err error
	s.pending.burst.delay = time.Hour
	mustBucket(t, s, "burst")
	put := func(key, body string) *Pending {
		t.Helper()
		p, err := s.PutAsync(ctx, "burst", key, readerFunc(strings.NewReader(body), int64(len(body))), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bounded := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		t.Cleanup(cancel)
		return c
	}
	put("a", "first")
	p := put("a", "second") // starts after the first, in the same burst
	if info, err := p.Wait(bounded()); err != nil || info.Size != int64(len("second")) {
		t.Fatalf("Wait of a queued put: %+v, %v", info, err)
	}
	if got := readAll(t, s, "burst", "a", GetOptions{}); string(got) != "second" {
		t.Fatalf("a after two queued puts: %q", got)
	}
	put("dir/b", "listed")
	page, err := s.List(bounded(), "burst", ListOptions{Prefix: "dir/"})
	if err != nil || len(page.Objects) != 1 || page.Objects[0].Key != "dir/b" {
		t.Fatalf("a listing of a queued put's prefix: %+v, %v", page, err)
	}
	// Small in-memory puts are written by their burst, in order, also
	// after a large put of the same key that is still running.
	big := randBytes(300<<10, 7)
	if _, err := s.PutAsync(ctx, "burst", "x", readerFunc(bytes.NewReader(big), int64(len(big))), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *Pending
	for i := range 30 {
		key := fmt.Sprintf("x%d", i%3)
		if i == 29 {
			key = "x"
		}
		if last, err = s.PutAsync(ctx, "burst", key, FromBytes([]byte(fmt.Sprintf("small %d", i))), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := last.Wait(bounded()); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"x": "small 29", "x0": "small 27", "x1": "small 28", "x2": "small 26"} {
		if got := readAll(t, s, "burst", key, GetOptions{}); string(got) != want {
			t.Fatalf("%s after a burst of small puts: %q, want %q", key, got, want)
		}
	}
	if _, err := s.PutAsync(ctx, "burst", "x", FromBytes(nil), PutOptions{IfMatch: "*"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("PutBackgroundBytes with a condition: %v", err)
	}
	if _, err := s.PutAsync(ctx, "burst", "c", FromBytes([]byte("never waited for")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, withBolt(t, opt))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if got := readAll(t, s, "burst", "c", GetOptions{}); string(got) != "never waited for" {
		t.Fatalf("c after close and reopen: %q", got)
	}
}

// openReopenable opens a 2+2 store for a test that closes it and opens it
// again with the returned options.
func openReopenable(t *testing.T) (*Store, Options) {
	t.Helper()
	opt := Options{Dir: t.TempDir(), DriveCount: 4, Parity: 2, BlockSize: 64 << 10, NoBackground: true}
	s, err := Open(context.Background(), withBolt(t, opt))
	if err != nil {
		t.Fatal(err)
	}
	return s, opt
}

// TestBackgroundBytesRace: small background puts of one key made at the
// same time from several goroutines commit in the order the store
// chained them, so the key ends with the newest one's bytes.
func TestBackgroundBytesRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openReopenable(t)
	defer func() { _ = s.Close() }()
	mustBucket(t, s, "race")
	for round := range 200 {
		ps := make([]*Pending, 8)
		var wg sync.WaitGroup
		for g := range ps {
			wg.Go(func() {
				p, err := s.PutAsync(ctx, "race", "k", FromBytes([]byte(fmt.Sprintf("r%d-g%d", round, g))), PutOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				ps[g] = p
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		newest := 0
		for g, p := range ps {
			if p.seq > ps[newest].seq {
				newest = g
			}
		}
		for _, p := range ps {
			if _, err := p.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		want := fmt.Sprintf("r%d-g%d", round, newest)
		if got := readAll(t, s, "race", "k", GetOptions{}); string(got) != want {
			t.Fatalf("round %d: the key holds %q, the newest put was %q", round, got, want)
		}
	}
}

// readerFunc is a FromFunc source giving r and size.
func readerFunc(r io.Reader, size int64) Source {
	return FromFunc(func(context.Context) (io.Reader, int64, error) { return r, size, nil })
}
