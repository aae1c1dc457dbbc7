package fs

// What the kernel has been told about one inode's opens, and the rules
// that follow from it: which kind of open the kernel accepts next, and
// when a read open may keep the page cache.

import "github.com/cairnstore/cairn/objstore"

// kernelModes counts a file's open handles by the I/O mode the kernel
// gave each, and remembers what its page cache holds. Linux keeps one I/O
// mode per inode (fs/fuse/iomode.c): cached opens (the page cache) and
// passthrough opens (a backing file) exclude each other, and every
// passthrough open of an inode must name the same backing file; an open
// that breaks this fails with EIO, so the mount chooses each open's kind
// from these counters. Direct-I/O opens (FOPEN_DIRECT_IO without
// passthrough) take no mode and fit beside either.
//
// It is fileNode.modes, protected by fileNode.mu like the node's other
// fields. A handle's flags (handle.counted, cached, uncached,
// passthrough, loose) say which counters it is in: count adds them at
// open, uncount removes them at release.
type kernelModes struct {
	// readers counts the open read-only handles that pinned a version
	// at open (handle.counted): they read fileNode.last, or older.
	readers int
	// cached counts the open handles the kernel serves through its page
	// cache (handle.cached), and read opens still looking their version
	// up.
	cached int
	// uncached counts the direct-I/O handles opened while the kernel may
	// still have had a backing file (handle.uncached).
	uncached int
	// loose counts the open handles that pinned a version at their
	// first read rather than at open (handle.pinned).
	loose int
	// ptLive counts the passthrough handles not yet released, and
	// ptStage is the staging file they pass through to: the kernel's
	// backing file of the inode.
	ptLive  int
	ptStage *staged
	// ptOpen counts the passthrough handles, each until ptLinger after
	// its release (lingerDone).
	ptOpen int
	// pcVer is the version whose data the kernel's page cache of the
	// inode holds, while pcValid.
	pcVer   objstore.ObjectInfo
	pcValid bool
	// writeGen counts the writers begun, so that a read open learns
	// whether one began while it looked its version up.
	writeGen uint64
}

// mustPassThrough says whether every open must pass through to backing():
// the kernel has a backing file for the inode while a passthrough handle
// is open, and refuses any other kind of cached open with EIO, even after
// the write state that made it ended.
func (k *kernelModes) mustPassThrough() bool { return k.ptLive > 0 }

// backing is the staging file every open must pass through to while
// mustPassThrough, else nil.
func (k *kernelModes) backing() *staged {
	if k.ptLive > 0 {
		return k.ptStage
	}
	return nil
}

// mayBeBacked says whether the kernel may still hold a backing file
// though no passthrough handle is open: go-fuse drops the kernel's
// backing file only after the release returns (ptLinger). A cached open
// could be refused meanwhile, so opens take direct I/O, which needs no
// mode.
func (k *kernelModes) mayBeBacked() bool { return k.ptOpen > 0 }

// canPassthrough says whether a new writer may take the passthrough path
// (register a new backing file). The kernel refuses a passthrough open
// while any cached one is open (ETXTBSY, seen as EIO), and one with
// another backing file while it still holds one (EBUSY): so no cached
// handle, no passthrough handle lingering. Nor a direct-I/O handle
// opened beside a backing file: go-fuse drops a backing reference at the
// release of any handle of the inode, which would drop the new one's.
func (k *kernelModes) canPassthrough() bool {
	return k.cached == 0 && k.ptOpen == 0 && k.uncached == 0
}

// readsPinned says whether read-only handles read a version pinned at
// open: the kernel keeps one size and one page cache per inode, so the
// inode keeps describing that version (fileNode.last) while they do.
func (k *kernelModes) readsPinned() bool { return k.readers > 0 }

// generation is the count of writers begun, for cacheQuiet.
func (k *kernelModes) generation() uint64 { return k.writeGen }

// beginWriter notes a writer beginning: writes through the page cache
// put data there that may never be committed, so the cache holds no
// version's data any more, and read opens under way learn of it.
func (k *kernelModes) beginWriter() {
	k.pcValid = false
	k.writeGen++
}

// cacheQuiet says whether nothing may have put data in the page cache
// that is not a committed version's since generation gen: no writer
// begun since or open now (writing), no passthrough handle open or
// lingering (until the kernel drops the backing file, the inode's data
// is that file's, written behind the page cache's back), no handle
// reading its own version through the cache (loose).
func (k *kernelModes) cacheQuiet(gen uint64, writing bool) bool {
	return k.writeGen == gen && !writing && k.ptOpen == 0 && k.loose == 0
}

// keepsCache says whether a read open of version info may keep the page
// cache (FOPEN_KEEP_CACHE): the cache holds that version's data, and
// quiet (cacheQuiet) says nothing else got in since. Otherwise the
// kernel drops it at open, as it must.
func (k *kernelModes) keepsCache(info objstore.ObjectInfo, quiet bool) bool {
	return quiet && k.pcValid && sameVersion(k.pcVer, info)
}

// keepsWriterCache says whether the writer h, opening a file whose
// write state was kept since its last writer closed (park.go), may keep
// the page cache: the state still describes the key, so what the cache
// holds is what its writers wrote and read, unless some handle reads a
// version of its own through the cache (a pinned reader, a loose one) or
// the kernel has a backing file.
func (k *kernelModes) keepsWriterCache(h *handle) bool {
	return h.cached && !h.passthrough && k.readers == 0 && k.loose == 0 && k.ptOpen == 0
}

// cacheHolds records that the page cache fills with version info's data
// from a read open; only a quiet one (cacheQuiet) may be trusted later.
func (k *kernelModes) cacheHolds(info objstore.ObjectInfo, quiet bool) {
	k.pcVer, k.pcValid = info, quiet
}

// count adds an opening handle to the counters its flags name (all but
// loose, which pinLoose sets later).
func (k *kernelModes) count(h *handle) {
	if h.counted {
		k.readers++
	}
	if h.cached {
		k.cached++
	}
	if h.uncached {
		k.uncached++
	}
	if h.passthrough {
		k.ptOpen++
		k.ptLive++
		k.ptStage = h.stage
	}
}

// countReader adds h, already counted as cached, as a reader too.
func (k *kernelModes) countReader(h *handle) {
	h.counted = true
	k.readers++
}

// pinLoose notes that h pinned a version at its first read: it reads
// that version through the page cache for as long as it stays open,
// whatever version later opens find, so none of them may keep the cache
// meanwhile.
func (k *kernelModes) pinLoose(h *handle) {
	k.pcValid = false
	k.loose++
	h.loose = true
}

// uncount removes a released handle from its counters. A passthrough
// handle stays in ptOpen until lingerDone.
func (k *kernelModes) uncount(h *handle) {
	if h.counted {
		k.readers--
	}
	if h.cached {
		k.cached--
	}
	if h.loose {
		k.loose--
	}
	if h.uncached {
		k.uncached--
	}
	if h.passthrough {
		if k.ptLive--; k.ptLive == 0 {
			k.ptStage = nil
		}
	}
}

// lingerDone ends a released passthrough handle's ptLinger.
func (k *kernelModes) lingerDone() { k.ptOpen-- }
