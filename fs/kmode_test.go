package fs

import (
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// TestKernelModeRules checks which kind of open each set of counters
// allows next.
func TestKernelModeRules(t *testing.T) {
	st := &staged{}
	for _, tc := range []struct {
		name  string
		modes kernelModes
		// want
		canPassthrough, mustPassThrough, mayBeBacked, readsPinned bool
		backing                                                   *staged
	}{
		{name: "no handle", canPassthrough: true},
		{name: "cached handle", modes: kernelModes{cached: 1}},
		{name: "reader", modes: kernelModes{readers: 1, cached: 1}, readsPinned: true},
		{name: "direct handle beside a backing file", modes: kernelModes{uncached: 1}},
		{name: "passthrough handle", modes: kernelModes{ptLive: 1, ptOpen: 1, ptStage: st},
			mustPassThrough: true, mayBeBacked: true, backing: st},
		{name: "passthrough handle lingering", modes: kernelModes{ptOpen: 1}, mayBeBacked: true},
		{name: "stale stage without live handles", modes: kernelModes{ptStage: st}, canPassthrough: true},
		{name: "loose handle", modes: kernelModes{loose: 1}, canPassthrough: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := tc.modes
			if got := k.canPassthrough(); got != tc.canPassthrough {
				t.Errorf("canPassthrough() = %v, want %v", got, tc.canPassthrough)
			}
			if got := k.mustPassThrough(); got != tc.mustPassThrough {
				t.Errorf("mustPassThrough() = %v, want %v", got, tc.mustPassThrough)
			}
			if got := k.mayBeBacked(); got != tc.mayBeBacked {
				t.Errorf("mayBeBacked() = %v, want %v", got, tc.mayBeBacked)
			}
			if got := k.readsPinned(); got != tc.readsPinned {
				t.Errorf("readsPinned() = %v, want %v", got, tc.readsPinned)
			}
			if got := k.backing(); got != tc.backing {
				t.Errorf("backing() = %p, want %p", got, tc.backing)
			}
		})
	}
}

// TestKernelModeCache checks when a read open keeps the page cache.
func TestKernelModeCache(t *testing.T) {
	v1 := objstore.ObjectInfo{VersionID: "v1", ETag: "e1", Size: 3, ModTime: time.Unix(1, 0)}
	v2 := objstore.ObjectInfo{VersionID: "v2", ETag: "e2", Size: 3, ModTime: time.Unix(2, 0)}
	for _, tc := range []struct {
		name string
		// The cache was filled by a read open of v1 (quiet or not),
		// then prep ran, then a read open began at the generation gen
		// returned and found info, writing saying whether a write state
		// was open.
		filledQuiet bool
		prep        func(k *kernelModes, h *handle) (gen uint64)
		info        objstore.ObjectInfo
		writing     bool
		quiet, keep bool
	}{
		{name: "same version", filledQuiet: true, info: v1, quiet: true, keep: true},
		{name: "other version", filledQuiet: true, info: v2, quiet: true},
		{name: "filled while not quiet", info: v1, quiet: true},
		{name: "writer open", filledQuiet: true, info: v1, writing: true},
		{name: "writer began before the open", filledQuiet: true, info: v1, quiet: true,
			prep: func(k *kernelModes, _ *handle) uint64 { k.beginWriter(); return k.generation() }},
		{name: "writer began during the open", filledQuiet: true, info: v1,
			prep: func(k *kernelModes, _ *handle) uint64 { g := k.generation(); k.beginWriter(); return g }},
		{name: "loose handle", filledQuiet: true, info: v1,
			prep: func(k *kernelModes, h *handle) uint64 { k.pinLoose(h); return k.generation() }},
		{name: "loose handle released", filledQuiet: true, info: v1,
			// pinLoose drops the cache's validity for good.
			quiet: true,
			prep:  func(k *kernelModes, h *handle) uint64 { k.pinLoose(h); k.uncount(h); return k.generation() }},
		{name: "passthrough lingering", filledQuiet: true, info: v1,
			prep: func(k *kernelModes, h *handle) uint64 {
				h.passthrough = true
				k.count(h)
				k.uncount(h)
				return k.generation()
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var k kernelModes
			k.cacheHolds(v1, tc.filledQuiet)
			gen := k.generation()
			if tc.prep != nil {
				gen = tc.prep(&k, &handle{})
			}
			quiet := k.cacheQuiet(gen, tc.writing)
			if quiet != tc.quiet {
				t.Errorf("cacheQuiet() = %v, want %v", quiet, tc.quiet)
			}
			if got := k.keepsCache(tc.info, quiet); got != tc.keep {
				t.Errorf("keepsCache() = %v, want %v", got, tc.keep)
			}
		})
	}
}

// TestKernelModeCounts opens and releases handles of every kind and
// checks the counters and rules on the way and back at zero.
func TestKernelModeCounts(t *testing.T) {
	var k kernelModes
	st := &staged{}
	reader := &handle{cached: true}
	k.count(reader) // counted as cached while its version is looked up
	if k.canPassthrough() {
		t.Fatal("a read open under way allows passthrough")
	}
	k.countReader(reader)
	if !reader.counted || !k.readsPinned() {
		t.Fatal("countReader did not count the reader")
	}
	writer := &handle{write: true, passthrough: true, stage: st}
	k.count(writer)
	if !k.mustPassThrough() || k.backing() != st {
		t.Fatalf("after a passthrough open: mustPassThrough %v, backing %p", k.mustPassThrough(), k.backing())
	}
	peer := &handle{passthrough: true, stage: st}
	k.count(peer)
	loose := &handle{cached: true}
	k.count(loose)
	k.pinLoose(loose)
	k.uncount(writer)
	if !k.mustPassThrough() || k.backing() != st {
		t.Fatal("the backing file went with one of two passthrough handles")
	}
	k.uncount(peer)
	if k.mustPassThrough() || k.backing() != nil {
		t.Fatal("the backing file stayed after the last passthrough handle")
	}
	if !k.mayBeBacked() {
		t.Fatal("no linger after the passthrough handles' release")
	}
	direct := &handle{uncached: true}
	k.count(direct)
	k.lingerDone()
	k.lingerDone()
	if k.mayBeBacked() {
		t.Fatal("linger outlived lingerDone")
	}
	if k.canPassthrough() {
		t.Fatal("passthrough allowed beside direct and cached handles")
	}
	for _, h := range []*handle{reader, loose, direct} {
		k.uncount(h)
	}
	if k.readers != 0 || k.cached != 0 || k.uncached != 0 || k.loose != 0 || k.ptLive != 0 || k.ptOpen != 0 || k.ptStage != nil {
		t.Fatalf("counters after every release: %+v, want zero", k)
	}
	if !k.canPassthrough() {
		t.Fatal("passthrough refused with no handle open")
	}
}
