// Command crashworker is the child process of the crash test
// (integration/crash_test.go): it opens a store and runs concurrent puts,
// overwrites, multipart completes, prefix renames and patches (new
// versions that write only their changed ranges and share the rest with
// the version before) until it is killed.
// Before each operation it prints a "begin" line and after the store
// acknowledges it an "ack" line (JSON, one write each, unbuffered), so the
// parent knows exactly which writes were acknowledged when it SIGKILLs it.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Line is one record of the protocol, shared with the parent by copy.
type Line struct {
	Ev     string            `json:"ev"` // ready, begin, ack, fail
	Worker string            `json:"w,omitempty"`
	Op     string            `json:"op,omitempty"` // put, multipart, rename
	Key    string            `json:"key,omitempty"`
	SHA    string            `json:"sha,omitempty"`
	From   string            `json:"from,omitempty"`
	To     string            `json:"to,omitempty"`
	Files  map[string]string `json:"files,omitempty"` // rename: name -> sha
	Err    string            `json:"err,omitempty"`
	N      int64             `json:"n,omitempty"` // stats: segment compactions so far
}

type out struct {
	mu sync.Mutex
}

func (o *out) emit(l Line) {
	b, _ := json.Marshal(l)
	b = append(b, '\n')
	o.mu.Lock()
	defer o.mu.Unlock()
	_, _ = os.Stdout.Write(b)
}

// Content makes the deterministic body of one write: a readable tag then
// pseudo-random bytes, so mixed data never matches any expected hash.
func content(tag string, size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, size)
	n := copy(b, tag+"|")
	for i := n; i < size; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

var sizes = []int{0, 1, 100, 4 << 10, 64<<10 + 3, 300 << 10, 1<<20 + 7}

func main() {
	dir := flag.String("data", "", "data directory")
	run := flag.Int("run", 0, "run number (names and seeds)")
	flag.Parse()
	ctx := context.Background()
	idx, err := meta.OpenBolt(meta.BoltPath(*dir), 5*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := objstore.Open(ctx, objstore.Options{Index: idx, Dir: *dir, DriveCount: 4, Parity: 2, MinPartSize: 1,
		// Small segments, a busy cleaner and an eager segment compactor,
		// so that kills land in segment rolls, frees, pack compactions
		// and segment compactions of the patched keys too.
		PackSegmentSize: 1 << 20, CleanerInterval: 50 * time.Millisecond,
		SegmentCompactMin: 16, SegmentCompactDelay: 20 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := s.CreateBucket(ctx, "crash", objstore.BucketOptions{}); err != nil && !errors.Is(err, objstore.ErrBucketExists) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	o := &out{}
	o.emit(Line{Ev: "ready"})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); putWorker(ctx, s, o, *run, w) }()
	}
	wg.Add(3)
	go func() { defer wg.Done(); multipartWorker(ctx, s, o, *run) }()
	go func() { defer wg.Done(); patchWorker(ctx, s, o, *run) }()
	go func() { defer wg.Done(); renameWorker(ctx, s, o, *run) }()
	// The segment compactions done so far, every 50 ms, so that the
	// parent can tell that kills landed among them.
	go func() {
		for range time.Tick(50 * time.Millisecond) {
			o.emit(Line{Ev: "stats", N: s.Stats().SegmentCompactions})
		}
	}()
	wg.Wait()
}

func fail(o *out, w string, err error) {
	o.emit(Line{Ev: "fail", Worker: w, Err: err.Error()})
	os.Exit(3)
}

func putWorker(ctx context.Context, s *objstore.Store, o *out, run, w int) {
	name := fmt.Sprintf("put%d", w)
	r := rand.New(rand.NewPCG(uint64(run), uint64(w)))
	for i := 0; ; i++ {
		key := fmt.Sprintf("obj/w%d/%d", w, r.IntN(12))
		size := sizes[r.IntN(len(sizes))]
		body := content(fmt.Sprintf("%s|%d|%d", key, run, i), size, uint64(run*1_000_000+w*100_000+i))
		o.emit(Line{Ev: "begin", Worker: name, Op: "put", Key: key, SHA: sum(body)})
		if _, err := s.Put(ctx, "crash", key, bytes.NewReader(body), int64(len(body)), objstore.PutOptions{}); err != nil {
			fail(o, name, err)
		}
		o.emit(Line{Ev: "ack", Worker: name})
	}
}

func multipartWorker(ctx context.Context, s *objstore.Store, o *out, run int) {
	r := rand.New(rand.NewPCG(uint64(run), 99))
	for i := 0; ; i++ {
		key := fmt.Sprintf("mp/%d", r.IntN(4))
		var parts [][]byte
		var whole []byte
		for p := 0; p < 3; p++ {
			b := content(fmt.Sprintf("%s|%d|%d|%d", key, run, i, p), 1000+r.IntN(200<<10), uint64(run*1_000_000+i*10+p))
			parts = append(parts, b)
			whole = append(whole, b...)
		}
		o.emit(Line{Ev: "begin", Worker: "mp", Op: "multipart", Key: key, SHA: sum(whole)})
		id, err := s.CreateMultipartUpload(ctx, "crash", key, objstore.PutOptions{})
		if err != nil {
			fail(o, "mp", err)
		}
		var done []objstore.CompletePart
		for p := len(parts) - 1; p >= 0; p-- { // parts out of order on purpose
			pi, err := s.PutPart(ctx, "crash", key, id, p+1, bytes.NewReader(parts[p]), int64(len(parts[p])), objstore.PartOptions{})
			if err != nil {
				fail(o, "mp", err)
			}
			done = append([]objstore.CompletePart{{Number: p + 1, ETag: pi.ETag}}, done...)
		}
		if _, err := s.CompleteMultipartUpload(ctx, "crash", key, id, done, objstore.PutOptions{}); err != nil {
			fail(o, "mp", err)
		}
		o.emit(Line{Ev: "ack", Worker: "mp"})
	}
}

// renameWorker fills stage/<run>-<i>/f0..f2 and renames the prefix onto
// final/<slot>/, replacing the files there: after a crash, the files under
// a final slot must all come from one rename.
func renameWorker(ctx context.Context, s *objstore.Store, o *out, run int) {
	r := rand.New(rand.NewPCG(uint64(run), 77))
	for i := 0; ; i++ {
		from := fmt.Sprintf("stage/%d-%d/", run, i)
		to := fmt.Sprintf("final/%d/", r.IntN(3))
		files := map[string]string{}
		for f := 0; f < 3; f++ {
			key := fmt.Sprintf("%sf%d", from, f)
			body := content(fmt.Sprintf("%s|%d|%d", key, run, i), 1+r.IntN(100<<10), uint64(run*1_000_000+i*10+f))
			o.emit(Line{Ev: "begin", Worker: "rename", Op: "put", Key: key, SHA: sum(body)})
			if _, err := s.Put(ctx, "crash", key, bytes.NewReader(body), int64(len(body)), objstore.PutOptions{}); err != nil {
				fail(o, "rename", err)
			}
			o.emit(Line{Ev: "ack", Worker: "rename"})
			files[fmt.Sprintf("f%d", f)] = sum(body)
		}
		o.emit(Line{Ev: "begin", Worker: "rename", Op: "rename", From: from, To: to, Files: files})
		if _, err := s.RenamePrefix(ctx, "crash", from, to, objstore.RenameOptions{}); err != nil {
			fail(o, "rename", err)
		}
		o.emit(Line{Ev: "ack", Worker: "rename"})
	}
}

// patchWorker patches patch/<slot>: it reads the current content (what
// the last run left, which the parent has checked), changes a few ranges
// and the size at times, and commits with PatchAsync; the parent sees
// each patch as a put of the whole new content.
func patchWorker(ctx context.Context, s *objstore.Store, o *out, run int) {
	r := rand.New(rand.NewPCG(uint64(run), 55))
	for i := 0; ; i++ {
		key := fmt.Sprintf("patch/%d", r.IntN(2))
		base, err := s.Open(ctx, "crash", key, objstore.GetOptions{})
		if errors.Is(err, objstore.ErrNoSuchKey) {
			body := content(fmt.Sprintf("%s|%d|%d", key, run, i), 300<<10+r.IntN(300<<10), uint64(run*1_000_000+i))
			o.emit(Line{Ev: "begin", Worker: "patch", Op: "put", Key: key, SHA: sum(body)})
			if _, err := s.Put(ctx, "crash", key, bytes.NewReader(body), int64(len(body)), objstore.PutOptions{}); err != nil {
				fail(o, "patch", err)
			}
			o.emit(Line{Ev: "ack", Worker: "patch"})
			continue
		}
		if err != nil {
			fail(o, "patch", err)
		}
		old := make([]byte, base.Size())
		if _, err := io.ReadFull(io.NewSectionReader(base, 0, base.Size()), old); err != nil {
			fail(o, "patch", err)
		}
		size := int64(len(old))
		switch r.IntN(4) {
		case 0:
			size = max(size-int64(r.IntN(100<<10)), 1)
		case 1:
			size += int64(r.IntN(200 << 10))
		}
		src := content(fmt.Sprintf("%s|%d|%d", key, run, i), int(size), uint64(run*1_000_000+i))
		var dirty []objstore.Range
		for off := int64(r.IntN(50 << 10)); off < size; off += int64(1 + r.IntN(150<<10)) {
			n := min(int64(1+r.IntN(30<<10)), size-off)
			dirty = append(dirty, objstore.Range{Offset: off, Length: n})
			off += n
		}
		want := make([]byte, size)
		copy(want, old)
		for _, d := range dirty {
			copy(want[d.Offset:d.End()], src[d.Offset:d.End()])
		}
		o.emit(Line{Ev: "begin", Worker: "patch", Op: "put", Key: key, SHA: sum(want)})
		p, err := s.PatchAsync(ctx, "crash", key, objstore.Patch{Base: base, Size: size, Dirty: dirty, Src: bytes.NewReader(src)}, objstore.PutOptions{})
		if err != nil {
			fail(o, "patch", err)
		}
		if _, err := p.Wait(ctx); err != nil {
			fail(o, "patch", err)
		}
		_ = base.Close()
		o.emit(Line{Ev: "ack", Worker: "patch"})
	}
}
