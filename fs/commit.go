package fs

// Making what the mount wrote a version of the object: flush, the gated
// background put of passthrough writers, and fsync.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// metaChangedLocked notes a change of attributes or metadata while the
// file is open for writing. When the content is already committed (the
// writer closed, the release is still to come) it commits them at once,
// so that they are visible when the call returns.
func (n *fileNode) metaChangedLocked(ctx context.Context) error {
	n.ws.metaDirty = true
	n.ws.attrs.ctime = time.Now()
	if err := n.refreshLocked(); err != nil {
		return n.failGateLocked(err)
	}
	if n.ws.dirty || n.ws.phase == phaseGated {
		return nil
	}
	return n.commitLocked(ctx, false)
}

// flush commits what was written since the last commit (at close(2)).
func (n *fileNode) flush(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.commitLocked(ctx, false)
}

// attached says whether the node still has a name (unlinked or renamed
// over, an open file's writes have nowhere to go).
func (n *fileNode) attached() bool {
	for p := n.EmbeddedInode(); !p.IsRoot(); {
		_, parent := p.Parent()
		if parent == nil {
			return false
		}
		p = parent
	}
	return true
}

// commitLocked makes the content (or, when only they changed, the
// attributes and metadata) the object's new version. A staged content
// goes in a background put (objstore.PutAsync with objstore.FromFunc): the call returns at
// once, as close(2) does on a local filesystem with the bytes still in
// dirty pages; every face of the store reads the new version from then
// on, and fsync waits for it to be durable and reports its errors. A
// small content (in the buffer) goes the same way, from a copy; near a
// full drive it is written at once instead (objstore.PutAsync with objstore.FromReader), so that
// the lack of room fails the close, and only its commit is asynchronous.
//
// With passthrough, a flush (final false) cannot know whether another
// descriptor will write on: its put waits at a gate that the last release
// (final true), fsync or gateDelay opens.
func (n *fileNode) commitLocked(ctx context.Context, final bool) error {
	ws := n.ws
	if ws == nil {
		return nil
	}
	if n.unlinked || !n.attached() {
		if ws.phase == phaseGated {
			return n.openGateLocked(fmt.Errorf("%w: %s was removed while written", objstore.ErrIncompleteBody, n.Path(nil)))
		}
		return nil
	}
	if err := n.refreshLocked(); err != nil {
		return n.failGateLocked(err)
	}
	if ws.phase == phaseGated {
		if final || ws.failed != nil {
			if err := n.openGateLocked(ws.failed); err != nil {
				return err
			}
		}
		return ws.failed
	}
	if ws.held != nil && final {
		n.letGoLocked(ws)
	}
	if !ws.dirty && !ws.metaDirty {
		return nil
	}
	if ws.failed != nil {
		// A write failed: the content is not what the writer meant, so
		// the file keeps its last version.
		return ws.failed
	}
	bucket, key := n.key()
	m := withAttrs(ws.meta, ws.attrs)
	opt := objstore.PutOptions{ContentType: ws.contentType, Meta: m}
	if ws.phase == phasePatched && (ws.dirty || ws.held != nil) {
		// Held for more changes, which a held patch takes in (its
		// metadata too) until it is let go.
		p, err := n.commitPatchedLocked(ctx, bucket, key, opt, final)
		if err != nil {
			return err
		}
		n.pending = p
		n.pendingAttrs = ws.attrs
		n.pendingAttrs.size = ws.size
		ws.dirty, ws.metaDirty = false, false
		return nil
	}
	var body io.Reader
	var data []byte // a small content, in memory
	switch {
	case !ws.dirty:
		if err := n.fsys.setMeta(ctx, bucket, key, ws.contentType, m); err != nil {
			return err
		}
		ws.meta, ws.metaDirty = m, false
		return nil
	case ws.passesThrough() && !final:
		return n.gateLocked(ctx)
	case ws.phase == phaseBuffered && !n.fsys.roomToStage(ctx):
		// Small, near a full drive: the bytes go to the drives now, so
		// that no room fails the close; only the commit is asynchronous.
		if err := n.fsys.put(ctx, bucket, key, ws.buf, opt); err != nil {
			return err
		}
		ws.meta = m
		ws.dirty, ws.metaDirty = false, false
		return nil
	case ws.phase == phaseBuffered:
		// Small, with room to spare: a copy of the buffer goes in a
		// background put, so that close(2) costs no drive write (a
		// cp -r of small files closes one every few hundred µs), and
		// later writes need not wait for it (no inflight).
		data = append(make([]byte, 0, len(ws.buf)), ws.buf...) // never nil, even when empty
	case ws.onStage():
		body = io.NewSectionReader(ws.stage, 0, ws.size)
	default: // phaseBase, dirty: a truncation that could not stage the base
		if err := n.stageLocked(ws.size, phaseStaged); err != nil {
			return err
		}
		body = io.NewSectionReader(ws.stage, 0, ws.size)
	}
	n.fsys.self.expect(bucket, key)
	var p *objstore.Pending
	var err error
	switch {
	case data != nil:
		p, err = n.fsys.store.PutAsync(ctx, bucket, key, objstore.FromBytes(data), opt)
	default:
		size := ws.size
		p, err = n.fsys.store.PutAsync(ctx, bucket, key, objstore.FromFunc(func(context.Context) (io.Reader, int64, error) {
			return body, size, nil
		}), opt)
	}
	if err != nil {
		n.fsys.self.cancel(bucket, key)
		return err
	}
	if ws.phase != phaseBuffered {
		ws.inflight = p // the put reads the stage
	}
	n.pending = p
	n.pendingAttrs = ws.attrs
	n.pendingAttrs.size = ws.size
	ws.meta = m
	ws.dirty, ws.metaDirty = false, false
	return nil
}

// gateLocked starts the background put of a passthrough content, held
// at a gate until the content is final.
func (n *fileNode) gateLocked(ctx context.Context) error {
	ws := n.ws
	if err := ws.checkMove(phaseGated); err != nil {
		return err
	}
	g := &gate{ready: make(chan struct{}), stage: ws.stage}
	src := func(ctx context.Context) (io.Reader, int64, error) {
		select {
		case <-g.ready:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
		if g.err != nil {
			return nil, 0, g.err
		}
		return io.NewSectionReader(g.stage, 0, g.size), g.size, nil
	}
	opt := objstore.PutOptions{ContentType: ws.contentType, FinalMeta: func(m map[string]string) { maps.Copy(m, g.meta) }}
	bucket, key := n.key()
	n.fsys.self.expect(bucket, key)
	p, err := n.fsys.store.PutAsync(ctx, bucket, key, objstore.FromFunc(src), opt)
	if err != nil {
		n.fsys.self.cancel(bucket, key)
		return err
	}
	ws.gate, ws.inflight, n.pending = g, p, p
	g.timer = time.AfterFunc(gateDelay, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if ws.gate != g {
			return // opened already
		}
		if n.ws != ws {
			// The state ended with its gate shut (a bug of the mount):
			// the put and the key's readers would wait for ever. Fail
			// the put; the file keeps its last version.
			ws.gate = nil
			g.err = fmt.Errorf("%w: %s: its writers ended before their content was committed", objstore.ErrIncompleteBody, n.Path(nil))
			close(g.ready)
			n.fsys.log.Error().Err(g.err).Str("path", n.Path(nil)).Msg("gated put failed by its timer")
			return
		}
		cause := ws.failed
		if err := n.refreshLocked(); err != nil {
			cause = err
		}
		if err := n.openGateLocked(cause); err != nil {
			n.fsys.log.Error().Err(err).Str("path", n.Path(nil)).Msg("gated put released by its timer")
		}
	})
	return ws.moveTo(phaseGated)
}

// failGateLocked returns err, opening the gate with it first when the
// state is gated: once a put waits at the gate, every way out of a
// commit that fails must let it go (failing it), or it and the key's
// readers wait for ever.
func (n *fileNode) failGateLocked(err error) error {
	if n.ws.phase != phaseGated {
		return err
	}
	if gerr := n.openGateLocked(err); gerr != nil {
		return errors.Join(err, gerr)
	}
	return err
}

// openGateLocked lets the gated put read the content as it is now, or
// fail with err, and moves the state back to phasePassthrough. The gate
// opens even when the move fails (a bug, which it reports).
func (n *fileNode) openGateLocked(err error) error {
	ws := n.ws
	g := ws.gate
	ws.gate = nil
	g.timer.Stop()
	g.err = err
	if err == nil {
		g.size = ws.size
		g.meta = withAttrs(ws.meta, ws.attrs)
		ws.meta = g.meta
		ws.dirty, ws.metaDirty = false, false
		n.pendingAttrs = ws.attrs
		n.pendingAttrs.size = ws.size
	}
	close(g.ready)
	return ws.moveTo(phasePassthrough)
}

// fsync commits and waits until the commit is durable, reporting the
// error of the background put if it failed.
func (n *fileNode) fsync(ctx context.Context, write bool) error {
	if write {
		// A read-only descriptor's fsync only waits for what was
		// committed: committing its writers' content would snapshot
		// passthrough writes still under way.
		n.mu.Lock()
		err := n.commitLocked(ctx, true)
		n.mu.Unlock()
		if err != nil {
			return err
		}
	}
	n.mu.Lock()
	p := n.pending
	n.mu.Unlock()
	if p != nil {
		if _, err := p.Wait(ctx); err != nil {
			n.mu.Lock()
			if n.pending == p {
				n.pending = nil // reported once, as Linux reports writeback errors
			}
			n.mu.Unlock()
			return err
		}
	}
	bucket, key := n.key()
	return n.fsys.store.Sync(ctx, bucket, key)
}
