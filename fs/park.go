package fs

// Keeping a patched file's write state after its last release: a file
// closed and opened again for writing within parkFor (a log appended to
// line by line, an editor's save, a test harness) goes on with the same
// state, base and staging file, and its closes in between make one held
// patch (patch.go) instead of a commit each, which the reopen would wait
// for.

import (
	"context"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// parkFor is how long a released patched state is kept for a new writer.
const parkFor = 2 * time.Second

// parkLocked keeps the write state, whose last writer is closing, as the
// node's idle state, with its commit registered (held, or let go already
// when the file is not patched in place), and says whether it did. A
// state that failed, or of a file removed, is not kept.
func (n *fileNode) parkLocked(ctx context.Context) bool {
	ws := n.ws
	if ws.phase != phasePatched || ws.failed != nil || n.unlinked || !n.attached() {
		return false
	}
	if err := n.commitLocked(ctx, false); err != nil {
		// The release reports it; commitLocked(final) lets the held
		// patch go, if any, and the state is dropped.
		return false
	}
	bucket, key := n.key()
	ws.parkedAt = selfKey(bucket, key)
	ws.parkedTimer = time.AfterFunc(parkFor, func() { n.dropIdle(ws) })
	n.idle, n.ws = ws, nil
	return true
}

// dropIdle ends the idle state ws, if it is still the node's.
func (n *fileNode) dropIdle(ws *writeState) {
	n.mu.Lock()
	if n.idle != ws {
		n.mu.Unlock()
		return
	}
	n.idle = nil
	n.endIdleLocked(ws)
	n.mu.Unlock()
}

// endIdleLocked lets an idle state's held patch go and releases its files
// once its patches are done (in the background: they may wait for the
// store's group commit).
func (n *fileNode) endIdleLocked(ws *writeState) {
	ws.parkedTimer.Stop()
	if ws.held != nil {
		n.letGoLocked(ws)
	}
	go ws.close()
}

// reviveLocked makes the idle state the write state again, for a new
// writer, when the key still holds what it describes: the version its
// last patch made, or its base when it made none, or a patch of its own
// still pending (which every other change of the key waits for). Else
// the state ends and the writer starts afresh from the key. It says
// whether the state was taken up again.
func (n *fileNode) reviveLocked(ctx context.Context) bool {
	ws := n.idle
	n.idle = nil
	if n.stillCurrentLocked(ctx, ws) {
		ws.parkedTimer.Stop()
		n.ws = ws
		return true
	}
	n.endIdleLocked(ws)
	return false
}

// stillCurrentLocked says whether the idle state ws still describes the
// file's key.
func (n *fileNode) stillCurrentLocked(ctx context.Context, ws *writeState) bool {
	if n.unlinked || !n.attached() {
		return false
	}
	bucket, key := n.key()
	if ws.parkedAt != selfKey(bucket, key) {
		return false
	}
	if ws.held != nil {
		return true
	}
	want := ws.base.Info()
	if p := ws.patched; p != nil {
		select {
		case <-p.Done():
		default:
			return true
		}
		info, err := p.Wait(ctx)
		if err != nil {
			return false
		}
		want = info
	}
	// No patch of the state's is pending: Head waits for no held patch.
	info, err := n.fsys.store.Head(ctx, bucket, key, objstore.GetOptions{})
	return err == nil && info.VersionID == want.VersionID && info.ETag == want.ETag
}
