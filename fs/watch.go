package fs

import (
	"context"
	"strings"
	"sync"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/cairnstore/cairn/objstore"
)

// selfEvents counts the store events the mount's own changes will cause,
// so that the watcher does not throw away kernel caches the mount has
// already kept right.
type selfEvents struct {
	mu sync.Mutex // protects n
	n  map[string]int
}

func (s *selfEvents) init() { s.n = map[string]int{} }

func selfKey(bucket, key string) string { return bucket + "\x00" + key }

// expect notes that the mount is about to change bucket/key.
func (s *selfEvents) expect(bucket, key string) {
	s.mu.Lock()
	s.n[selfKey(bucket, key)]++
	s.mu.Unlock()
}

// cancel undoes expect for a change that failed.
func (s *selfEvents) cancel(bucket, key string) { s.consume(bucket, key) }

// consume says whether an event for bucket/key was the mount's own.
func (s *selfEvents) consume(bucket, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := selfKey(bucket, key)
	if s.n[k] == 0 {
		return false
	}
	if s.n[k]--; s.n[k] == 0 {
		delete(s.n, k)
	}
	return true
}

// watch invalidates the kernel's caches of what changes in the store
// through other faces, until ctx ends.
func (f *FS) watch(ctx context.Context) {
	defer close(f.watchDone)
	events := f.store.Watch(ctx, "", "")
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				return
			}
			f.invalidate(e)
		}
	}
}

func (f *FS) invalidate(e objstore.Event) {
	switch e.Op {
	case objstore.OpOverflow:
		f.invalidateAll(f.root.EmbeddedInode())
		return
	case objstore.OpRename, objstore.OpRenamePrefix:
		if f.self.consume(e.Bucket, e.Key) {
			return
		}
		f.invalidateKey(e.Bucket, strings.TrimSuffix(e.Key, "/"))
		f.invalidateKey(e.Bucket, strings.TrimSuffix(e.To, "/"))
	default:
		if f.self.consume(e.Bucket, e.Key) {
			return
		}
		f.invalidateKey(e.Bucket, strings.TrimSuffix(e.Key, "/"))
	}
}

// invalidateKey drops what the kernel and the directory nodes cache about
// key and every directory above it.
func (f *FS) invalidateKey(bucket, key string) {
	parent := f.root.EmbeddedInode()
	segs := append([]string{bucket}, strings.Split(key, "/")...)
	for _, name := range segs {
		if d, ok := parent.Operations().(*dirNode); ok {
			d.dropListing()
		}
		child := parent.GetChild(name)
		if child != nil && f.detach(parent, name, child) {
			return
		}
		_ = parent.NotifyEntry(name)
		if child == nil {
			return
		}
		if _, isDir := child.Operations().(*dirNode); !isDir {
			_ = child.NotifyContent(0, 0)
			return
		}
		parent = child
	}
	if d, ok := parent.Operations().(*dirNode); ok {
		d.dropListing()
	}
}

// invalidateAll drops every cached entry under n.
func (f *FS) invalidateAll(n *gofs.Inode) {
	if d, ok := n.Operations().(*dirNode); ok {
		d.dropListing()
	}
	for name, ch := range n.Children() {
		if name == controlDirName && n == f.root.EmbeddedInode() {
			continue
		}
		_ = n.NotifyEntry(name)
		f.invalidateAll(ch)
	}
}

// detachNode detaches n from its name, if it still has one.
func (f *FS) detachNode(n *fileNode) {
	name, parent := n.Parent()
	if parent == nil {
		return
	}
	if d, ok := parent.Operations().(*dirNode); ok {
		d.dropListing()
	}
	f.detach(parent, name, n.EmbeddedInode())
}

// detach handles another face replacing or deleting a file the kernel
// knows: like a rename over it on a local filesystem, the name gets a new
// inode at the next lookup while open descriptors keep the old one, with
// its pinned version, size and page cache. A file open for writing on the
// mount stays: its next commit replaces what the other face wrote (the
// last writer wins). It says whether child was a file.
func (f *FS) detach(parent *gofs.Inode, name string, child *gofs.Inode) bool {
	switch op := child.Operations().(type) {
	case *fileNode:
		if op.writing() {
			_ = parent.NotifyEntry(name)
			_ = child.NotifyContent(0, 0)
			return true
		}
	case *linkNode:
	default:
		return false
	}
	parent.RmChild(name)
	_ = parent.NotifyEntry(name)
	return true
}
