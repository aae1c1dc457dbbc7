package fs

// FUSE passthrough of writers: the staging file the kernel writes to
// directly, the opens that must share it, the room it needs, and how the
// mount learns of writes it never sees.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnstore/cairn/objstore"
)

// reuseStageLocked begins a write state on the staging file that
// passthrough handles still open read (the kernel's backing file of the
// inode, which every open must pass through to): it holds the content
// last committed from it (awaitStageReuse waited for that put).
func (n *fileNode) reuseStageLocked(ctx context.Context, trunc bool) (*handle, error) {
	bucket, key := n.key()
	info, err := n.fsys.store.Head(ctx, bucket, key, objstore.GetOptions{})
	if err != nil {
		return nil, err
	}
	st := n.modes.backing()
	ws := &writeState{
		stage: st.f, stageRef: st.hold(), writers: 1,
		attrs: attrsFrom(info, defaultFileMode, n.fsys.owner), contentType: info.ContentType, meta: info.Meta,
	}
	if err := n.startLocked(ws, phasePassthrough); err != nil {
		return nil, err
	}
	fail := func(err error) (*handle, error) {
		n.ws.close()
		n.ws = nil
		return nil, err
	}
	if err := n.refreshLocked(); err != nil {
		return fail(err)
	}
	if trunc {
		if err := n.truncateLocked(0); err != nil {
			return fail(err)
		}
		n.dropSetIDLocked(ctx)
	}
	h, err := n.writeHandleLocked(ctx)
	if err != nil {
		return fail(err)
	}
	return h, nil
}

// joinPassthroughLocked records c as a passthrough writer.
func (ws *writeState) joinPassthroughLocked(c caller) {
	for _, w := range ws.ptWriters {
		if w.uid == c.uid && w.gid == c.gid && w.has(capFsetid) == c.has(capFsetid) && slices.Equal(w.creds.groups, c.creds.groups) {
			return
		}
	}
	ws.ptWriters = append(ws.ptWriters, c)
}

// passthroughLocked makes h pass through to the staging file st.
func (n *fileNode) passthroughLocked(h *handle, st *staged) {
	h.passthrough, h.fd, h.stage = true, int(st.f.Fd()), st.hold()
	n.modes.count(h)
}

// backingLocked is the staging file every open of the inode must pass
// through to, if any: the passthrough write state's, or the one that
// passthrough handles still open use after their write state ended.
func (n *fileNode) backingLocked() *staged {
	if n.ws != nil && n.ws.passesThrough() {
		return n.ws.stageRef
	}
	return n.modes.backing()
}

// awaitStageReuse waits, before a writer opens a file whose passthrough
// handles outlived their write state, for the last put of that staging
// file to have read it: the new writer writes into the same file
// (beginWrite), which must not change under the put.
func (n *fileNode) awaitStageReuse(ctx context.Context) error {
	for {
		n.mu.Lock()
		p := n.pending
		reuse := n.ws == nil && n.modes.mustPassThrough()
		n.mu.Unlock()
		if !reuse || p == nil {
			return nil
		}
		select {
		case <-p.Done():
			n.mu.Lock()
			same := n.pending == p
			n.mu.Unlock()
			if same {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// passthroughMinFree is the free space under which writers do not take
// the passthrough path: the kernel does not tell the mount about a
// failed write, so near a full disk every write goes through the mount,
// which keeps a file whose write failed from being committed torn.
const passthroughMinFree = 256 << 20

// roomToStage says whether the staging directory and every drive have
// room to spare, asking their filesystems at most every statfsEvery.
func (f *FS) roomToStage(ctx context.Context) bool {
	f.roomMu.Lock()
	defer f.roomMu.Unlock()
	if time.Since(f.roomAt) < statfsEvery {
		return f.room
	}
	var st unix.Statfs_t
	f.room = unix.Statfs(f.opt.TmpDir, &st) == nil && st.Bavail*uint64(st.Bsize) >= passthroughMinFree
	if f.room {
		avail, err := f.store.MinDriveAvail(ctx)
		f.room = err == nil && avail >= passthroughMinFree
	}
	f.roomAt = time.Now()
	return f.room
}

// statfsEvery is how long roomToStage trusts its last answer.
const statfsEvery = 100 * time.Millisecond

// refreshLocked learns the size and mtime of a passthrough content from
// its staging file, and whether it changed since last looked at.
func (n *fileNode) refreshLocked() error {
	ws := n.ws
	if !ws.passesThrough() {
		return nil
	}
	fi, err := ws.stage.Stat()
	if err != nil {
		return fmt.Errorf("stat staging file of %s: %w", n.Path(nil), err)
	}
	ws.size = fi.Size()
	if st := (stamp{fi.Size(), fi.ModTime()}); st != ws.stamp {
		if ws.stamp != (stamp{}) {
			ws.dirty = true
			ws.attrs.mtime, ws.mtimeSet = fi.ModTime(), false
			// Written to since the last look, which every chmod takes
			// first: set-ID bits set since are cleared as the write
			// would have (it is refused passthrough while they are).
			var kill uint32
			for _, c := range ws.ptWriters {
				kill |= setIDKill(c, ws.attrs.perm, ws.attrs.gid, false)
			}
			n.killLocked(kill)
		}
		ws.stamp = st
	}
	return nil
}

// markStageLocked sets the staging file's mtime of a passthrough write
// state to a time no write gives it, so that refreshLocked sees any
// later write, even one within the same timestamp tick that does not
// change the size (a chmod setting set-ID bits relies on it).
func (n *fileNode) markStageLocked() {
	ws := n.ws
	if !ws.passesThrough() {
		return
	}
	epoch := []unix.Timeval{{}, {}}
	if err := unix.Futimes(int(ws.stage.Fd()), epoch); err != nil {
		n.fsys.log.Warn().Err(err).Str("path", n.Path(nil)).Msg("cannot mark the staging file: a write right after this chmod may keep set-ID bits")
		return
	}
	ws.stamp.mtime = time.Unix(0, 0)
	// A write between the last look and the mark would go unseen.
	ws.dirty = true
}
