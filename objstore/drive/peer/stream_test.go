package peer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/faultdrive"
)

// writeFrame is a W frame of data at off.
func writeFrame(off int64, data []byte) []byte {
	b := make([]byte, frameWriteHdr, frameWriteHdr+len(data))
	putWriteHdr(b, off, len(data))
	return append(b, data...)
}

// TestCutStream sends write streams by hand over a raw connection, cut or
// malformed in various ways, over a shard that was whole: the server
// must leave no shard behind (the Create truncated the old one).
func TestCutStream(t *testing.T) {
	data := bytes.Repeat([]byte("d"), 100)
	full := writeFrame(0, data)
	tests := []struct {
		name string
		body []byte // the chunked body's one chunk
		end  bool   // send the body's terminating chunk and read the answer
	}{
		{name: "cut mid-frame", body: full[:frameWriteHdr+50]},
		{name: "cut mid-header", body: full[:5]},
		{name: "cut between frames", body: full},
		{name: "cut after the commit frame", body: append(bytes.Clone(full), commitFrame(1, 100)...)},
		{name: "nothing", body: nil},
		{name: "ended without an end frame", body: full, end: true},
		{name: "counts differ", body: append(bytes.Clone(full), commitFrame(2, 100)...), end: true},
		{name: "bytes after the commit frame", body: append(append(bytes.Clone(full), commitFrame(1, 100)...), 'W'), end: true},
		{name: "unknown frame", body: append(bytes.Clone(full), 'X'), end: true},
		{name: "empty frame", body: writeFrame(0, nil), end: true},
		{name: "frame past the limit", body: append([]byte{frameWrite, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, data...), end: true},
		{name: "frame past the largest file", body: writeFrame(maxOffset, data), end: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			served := make(chan string, 16)
			f := newFixtureWith(t, fixtureOpts{timeout: 10 * time.Second, served: served})
			name := fmt.Sprintf("0d%02x", i)
			putShard(t, f.drive, name, []byte("a whole old shard"))
			path := pathPrefix + "3/shards/" + name
			waitServed(t, served, path)

			conn, err := net.Dial("tcp", f.http.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			ts := strconv.FormatInt(time.Now().Unix(), 10)
			mac := hex.EncodeToString(computeMAC(testSecret, http.MethodPut, path, "", ts, "3"))
			var req bytes.Buffer
			fmt.Fprintf(&req, "PUT %s HTTP/1.1\r\nHost: peer\r\nTransfer-Encoding: chunked\r\n%s: %s\r\n%s: %s\r\n\r\n",
				path, HeaderTime, ts, HeaderMAC, mac)
			if len(tt.body) > 0 {
				fmt.Fprintf(&req, "%x\r\n%s\r\n", len(tt.body), tt.body)
			}
			if tt.end {
				req.WriteString("0\r\n\r\n")
			}
			if _, err := conn.Write(req.Bytes()); err != nil {
				t.Fatal(err)
			}
			if tt.end {
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := remoteError("test", resp); resp.StatusCode != http.StatusBadRequest {
					t.Errorf("answered %s (%v), want 400", resp.Status, err)
				}
			}
			_ = conn.Close()
			waitServed(t, served, path)
			f.absent(t, name)
		})
	}
}

// TestWriterAbort checks that Abort, a cancelled context and an explicit
// abort frame leave no shard, and that a stream keeps working after a
// cut one (the connection pool recovers).
func TestWriterAbort(t *testing.T) {
	served := make(chan string, 64)
	f := newFixtureWith(t, fixtureOpts{timeout: 10 * time.Second, served: served})
	d := f.drive
	big := bytes.Repeat([]byte("x"), 3<<20)

	putShard(t, d, "0e00", []byte("old"))
	w, err := d.Create(t.Context(), "0e00")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt(big, 0); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	// Abort returns once the server removed the file.
	f.absent(t, "0e00")
	if err := w.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}

	ctx, cancel := context.WithCancel(t.Context())
	w, err = d.Create(ctx, "0e01")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt(big, 0); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, werr := w.WriteAt(big, int64(len(big)))
	if err := errors.Join(werr, w.Close()); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnreachable) {
		t.Errorf("write and close after cancel: %v, want context.Canceled alone", err)
	}
	waitServed(t, served, pathPrefix+"3/shards/0e01")
	f.absent(t, "0e01")

	// Staged files: Abort and a cancelled context leave the shard as it was.
	putShard(t, d, "0e02", []byte("kept"))
	st, err := d.Stage(t.Context(), "0e02")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteAt(big, 0); err != nil {
		t.Fatal(err)
	}
	st.Abort()
	ctx, cancel = context.WithCancel(t.Context())
	st, err = d.Stage(ctx, "0e02")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteAt(big, 0); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := st.Commit(); !errors.Is(err, context.Canceled) {
		t.Errorf("commit after cancel: %v", err)
	}
	waitServed(t, served, pathPrefix+"3/staged/0e02")
	if got := f.content(t, "0e02"); string(got) != "kept" {
		t.Errorf("after aborted stages: %q", got)
	}
	var names []string
	_ = f.dir.Walk(t.Context(), func(n string) error { names = append(names, n); return nil })
	if len(names) != 1 {
		t.Errorf("shards %v, want [0e02]", names)
	}

	// The drive still works.
	putShard(t, d, "0e03", []byte("after"))
	if got := f.content(t, "0e03"); string(got) != "after" {
		t.Errorf("after: %q", got)
	}
}

// TestWriterSuperseded checks that a newer Create of a name takes the file
// over: the older stream's Close fails and its bytes do not land.
func TestWriterSuperseded(t *testing.T) {
	f := newFixture(t, 10*time.Second)
	d := f.drive
	old, err := d.Create(t.Context(), "0f00")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.WriteAt(bytes.Repeat([]byte("o"), 1000), 0); err != nil {
		t.Fatal(err)
	}
	putShard(t, d, "0f00", []byte("new"))
	// The older stream's writes fail on the server from now on; the
	// client learns it at Close.
	_, _ = old.WriteAt(bytes.Repeat([]byte("o"), 1000), 1000)
	if err := old.Close(); err == nil {
		t.Error("the superseded stream's Close succeeded")
	}
	if got := f.content(t, "0f00"); string(got) != "new" {
		t.Errorf("shard holds %d bytes, want %q", len(got), "new")
	}
}

// TestWriterServerFailures checks that failures of the peer's drive come
// back mapped: a refused Create at the first write, a failed write at
// Close, and that the failed shard is gone.
func TestWriterServerFailures(t *testing.T) {
	var fd *faultdrive.Drive
	f := newFixtureWith(t, fixtureOpts{timeout: 10 * time.Second, wrap: func(dir *drive.Dir) drive.Drive {
		fd = faultdrive.New(dir, faultdrive.Config{})
		return fd
	}})
	d := f.drive
	ctx := t.Context()

	fd.SetRules([]faultdrive.Rule{{Op: faultdrive.OpCreate, Err: syscall.ENOSPC}})
	w, err := d.Create(ctx, "1000")
	if err != nil {
		t.Fatal(err)
	}
	_, werr := w.WriteAt(bytes.Repeat([]byte("a"), 1<<20), 0)
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Errorf("write after a refused create: %v, want ENOSPC", werr)
	}
	if err := w.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("close after a refused create: %v, want ENOSPC", err)
	}
	f.absent(t, "1000")

	fd.SetRules([]faultdrive.Rule{{Op: faultdrive.OpWrite, After: 1, Err: syscall.EIO}})
	w, err = d.Create(ctx, "1001")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		// The server reads and drops the frames after the failed one.
		if _, err := w.WriteAt(bytes.Repeat([]byte("b"), 1<<20), int64(i)<<20); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	var re *RemoteError
	if err := w.Close(); !errors.As(err, &re) || re.Code != codeInternal {
		t.Errorf("close after a failed write: %v, want an internal RemoteError", err)
	}
	f.absent(t, "1001")

	fd.SetRules([]faultdrive.Rule{{Op: faultdrive.OpCommit, Err: syscall.ENOSPC}})
	putShard(t, d, "1002", []byte("kept"))
	st, err := d.Stage(ctx, "1002")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteAt([]byte("lost"), 0); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("commit: %v, want ENOSPC", err)
	}
	if got := f.content(t, "1002"); string(got) != "kept" {
		t.Errorf("after a failed commit: %q", got)
	}

	fd.SetRules(nil)
	putShard(t, d, "1003", []byte("fine"))
	if got := f.content(t, "1003"); string(got) != "fine" {
		t.Errorf("after the faults: %q", got)
	}
}
