package fs

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// newTestFS is an FS over a real store (fsck at the end of the test) with
// a node tree made by go-fuse's bridge but no kernel mount: the tests
// call the nodes' methods as the kernel's requests would.
func newTestFS(t *testing.T) *FS {
	t.Helper()
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 1, BlockSize: 64 << 10, NoBackground: true})
	f := &FS{store: st, opt: Options{TmpDir: t.TempDir(), AttrTimeout: time.Second}, log: zerolog.Nop()}
	f.stages.dir = f.opt.TmpDir
	f.stages.start()
	t.Cleanup(f.stages.drain)
	f.self.init()
	f.root = &rootNode{fsys: f}
	gofs.NewNodeFS(f.root, &gofs.Options{})
	return f
}

// testBucketDir makes bucket in the store and its directory node under
// the root.
func testBucketDir(t *testing.T, f *FS, bucket string) *dirNode {
	t.Helper()
	ctx := context.Background()
	if err := f.store.CreateBucket(ctx, bucket, objstore.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	d := &dirNode{fsys: f}
	in := f.root.NewPersistentInode(ctx, d, gofs.StableAttr{Mode: syscall.S_IFDIR})
	f.root.AddChild(bucket, in, true)
	return d
}

// testFileNode makes the node of a file named name in d.
func testFileNode(t *testing.T, d *dirNode, name string) *fileNode {
	t.Helper()
	n := &fileNode{fsys: d.fsys}
	in := d.NewPersistentInode(context.Background(), n, gofs.StableAttr{Mode: syscall.S_IFREG})
	d.AddChild(name, in, true)
	return n
}

// gatedWriter puts n in the state a passthrough writer's flush leaves
// it: the content written to the staging file (as the kernel writes it),
// and a background put waiting at the gate.
func gatedWriter(t *testing.T, n *fileNode, content string) *writeState {
	t.Helper()
	n.mu.Lock()
	ws := &writeState{dirty: true, writers: 1, attrs: attrs{perm: 0o644, mtime: time.Now()}}
	if err := n.startLocked(ws, phaseBuffered); err != nil {
		t.Fatal(err)
	}
	if err := n.stageLocked(0, phasePassthrough); err != nil {
		t.Fatal(err)
	}
	if err := n.refreshLocked(); err != nil {
		t.Fatal(err)
	}
	n.mu.Unlock()
	if _, err := ws.stage.WriteAt([]byte(content), 0); err != nil {
		t.Fatal(err)
	}
	if err := n.flush(context.Background()); err != nil {
		t.Fatalf("flush: %v", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if ws.phase != phaseGated {
		t.Fatalf("after the flush the state is %s, want gated", ws.phase)
	}
	g := ws.gate
	// Registered after the store's cleanup, so it runs first: a gate a
	// failing test left shut is opened, or closing the store would wait
	// for its put for ever instead of the test reporting the failure.
	t.Cleanup(func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if ws.gate == g {
			ws.gate = nil
			g.err = errors.New("test: gate left shut")
			close(g.ready)
		}
	})
	return ws
}

// headReturns fails the test unless a Head of bucket/key returns within
// 5 s, which it does only once no put waits at a shut gate.
func headReturns(t *testing.T, f *FS, bucket, key string) (objstore.ObjectInfo, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := f.store.Head(ctx, bucket, key, objstore.GetOptions{})
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Head %s/%s still waiting after 5 s: the gated put was never let go", bucket, key)
	}
	return info, err
}

// TestGateOpensOnFailure: however a gated put's state ends, the put is
// let go (failed when the content cannot be known), so that the key's
// readers, which wait for it, return.
func TestGateOpensOnFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		// end ends the writer in some way that cannot commit.
		end func(t *testing.T, n *fileNode, ws *writeState)
		// closeWS: the test closes the state (end left it open).
		closeWS bool
	}{
		{"release after the staging file failed", func(t *testing.T, n *fileNode, ws *writeState) {
			// The refresh before the commit cannot stat the staging
			// file any more.
			_ = ws.stage.Close()
			if err := n.endWrite(context.Background()); err == nil {
				t.Error("release: no error with an unreadable staging file")
			}
		}, false},
		{"metadata change after the staging file failed", func(t *testing.T, n *fileNode, ws *writeState) {
			_ = ws.stage.Close()
			n.mu.Lock()
			err := n.metaChangedLocked(context.Background())
			n.mu.Unlock()
			if err == nil {
				t.Error("metadata change: no error with an unreadable staging file")
			}
			n.mu.Lock()
			if ws.gate != nil || ws.phase != phasePassthrough {
				t.Errorf("after the failed metadata change: gate %v, phase %s; want it open, passthrough", ws.gate, ws.phase)
			}
			n.mu.Unlock()
		}, true},
		{"state dropped with the gate shut, timer", func(t *testing.T, n *fileNode, ws *writeState) {
			// A state that ends without opening its gate (as a
			// commit that returned early once did): the gate's timer
			// must still let the put go, failed.
			n.mu.Lock()
			n.ws = nil
			n.mu.Unlock()
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFS(t)
			d := testBucketDir(t, f, "bkt")
			n := testFileNode(t, d, "f")
			ws := gatedWriter(t, n, "hello")
			p := func() *objstore.Pending {
				n.mu.Lock()
				defer n.mu.Unlock()
				return n.pending
			}()
			tc.end(t, n, ws)
			_, err := headReturns(t, f, "bkt", "f")
			if !isNotFound(err) {
				t.Errorf("Head after a failed gated put: %v, want no such key (the put failed)", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := p.Wait(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("gated put: %v, want its failure", err)
			}
			n.mu.Lock()
			if ws.gate != nil {
				t.Error("the gate is still shut")
			}
			n.mu.Unlock()
			if tc.closeWS {
				ws.close()
			}
		})
	}
}

// TestGateOpensOnRelease: the ordinary way, a last release commits the
// gated content.
func TestGateOpensOnRelease(t *testing.T) {
	f := newTestFS(t)
	d := testBucketDir(t, f, "bkt")
	n := testFileNode(t, d, "f")
	gatedWriter(t, n, "hello")
	if err := n.endWrite(context.Background()); err != nil {
		t.Fatalf("release: %v", err)
	}
	info, err := headReturns(t, f, "bkt", "f")
	if err != nil || info.Size != 5 {
		t.Fatalf("Head after release: %+v, %v; want 5 bytes", info, err)
	}
}
