package objstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	md5simd "github.com/minio/md5-simd"
	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/objstore/blockcache"
	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Store is the object store. It is safe for concurrent use. Build it with
// Open and release it with Close.
type Store struct {
	opt    Options
	log    zerolog.Logger
	idx    meta.Index
	drives []drive.Drive
	layout meta.Layout
	// chunkMax is Options.ChunkSegments in effect; zero: lists stay flat.
	chunkMax int

	commits     chan *commitReq
	closeMu     sync.RWMutex // commit holds it shared; Close takes it to stop the committer
	stopCommit  context.CancelFunc
	committerWG sync.WaitGroup
	stopBG      context.CancelFunc // background workers
	bg          sync.WaitGroup
	closed      atomic.Bool

	codecMu sync.Mutex // protects codecs
	codecs  map[[3]int]*erasure.Codec

	pinGate sync.RWMutex // readers share it while they look up and pin; the cleaner takes it alone
	pinMu   sync.Mutex   // protects pins and pinSegs
	pins    map[string]int
	pinSegs map[uint64]int // pack segments holding pinned data

	packs packs

	leases *leaser // this process's reader leases (ReaderGrace > 0)

	watch watchers

	buckets bucketCache // decoded bucket records, checked against the index (HeadBucket)

	pending pendingSet // asynchronous puts not yet committed

	md5srv      md5simd.Server  // multi-stream MD5 for concurrent large writes
	largeWrites atomic.Int32    // large writes in flight
	writeBufs   *erasure.Budget // bounds the block buffers of writes; nil: no bound

	cache    *blockcache.Cache // nil when Options.ReadCacheSize is 0
	cacheLog zerolog.Logger    // log, sampled: cache errors come per block

	healq     chan string // data ids seen degraded
	degraded  degradedSet // data ids seen degraded and not healed since (health.go)
	driveErrs []driveErrCounts
	cleanWake chan struct{} // nudges the cleaner
	cleanMu   sync.Mutex    // one Clean at a time: two would free the same garbage twice

	segq segQueue // versions waiting for the segment compactor (segqueue.go)

	driveWritten   atomic.Int64 // shard bytes written to the drives (Stats)
	segCompactions atomic.Int64 // versions whose segments were compacted (Stats)
}

// Open opens the store in opt.Dir, creating it when new, sweeps the shard
// files that no committed write references and starts the background
// workers (unless opt.NoBackground). A data directory can be open in one
// process at a time.
func Open(ctx context.Context, opt Options) (*Store, error) {
	s, err := open(ctx, opt)
	if err != nil {
		return nil, err
	}
	if err := s.sweep(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	if !s.opt.NoBackground {
		s.startBackground()
	}
	return s, nil
}

// chunkLimit is the chunk size in effect for opt on idx: zero (flat
// lists) when chunking is off or the index bounds its transactions,
// which a patch of many chunks could pass.
func chunkLimit(opt Options, idx meta.Index) int {
	if opt.ChunkSegments < 0 || idx.Limits().MaxWrites != 0 {
		return 0
	}
	return opt.ChunkSegments
}

// open opens the index and drives without sweeping or background work (the
// offline tools start here).
func open(ctx context.Context, opt Options) (*Store, error) {
	if opt.Index == nil {
		return nil, fmt.Errorf("%w: an index is required (open one with meta.OpenBolt)", ErrInvalidArgument)
	}
	if err := opt.Validate(); err != nil {
		if opt.Index != nil {
			_ = opt.Index.Close()
		}
		return nil, err
	}
	s, err := openIndexed(ctx, opt)
	if err != nil {
		_ = opt.Index.Close()
		return nil, err
	}
	return s, nil
}

// openIndexed is open once the options are valid; on error the caller
// closes the index.
func openIndexed(ctx context.Context, opt Options) (*Store, error) {
	opt = opt.withDefaults()
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if err := os.RemoveAll(opt.tmpDir()); err != nil {
		return nil, fmt.Errorf("clear tmp: %w", err)
	}
	if err := os.MkdirAll(opt.tmpDir(), 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	idx := opt.Index
	s := &Store{
		opt:       opt,
		chunkMax:  chunkLimit(opt, idx),
		log:       opt.Logger,
		idx:       idx,
		commits:   make(chan *commitReq, 4096),
		codecs:    map[[3]int]*erasure.Codec{},
		pins:      map[string]int{},
		pinSegs:   map[uint64]int{},
		packs:     packs{files: map[uint64][]drive.PackFile{}},
		healq:     make(chan string, 4096),
		cleanWake: make(chan struct{}, 1),
		segq:      newSegQueue(),
		stopBG:    func() {},
		md5srv:    md5simd.NewServer(),
	}
	if opt.WriteBuffers > 0 {
		s.writeBufs = erasure.NewBudget(opt.WriteBuffers)
	}
	fresh, err := s.loadLayout(ctx)
	if err != nil {
		s.md5srv.Close()
		return nil, err
	}
	if err := s.openDrives(ctx, fresh); err != nil {
		s.md5srv.Close()
		return nil, err
	}
	if s.leases, err = newLeaser(); err != nil {
		s.md5srv.Close()
		return nil, err
	}
	s.openCache()
	s.pending.init()
	cctx, cancel := context.WithCancel(context.Background())
	s.stopCommit = cancel
	s.committerWG.Add(1)
	go func() {
		defer s.committerWG.Done()
		s.runCommitter(cctx)
	}()
	return s, nil
}

// loadLayout reads the recorded layout, or records a new one; fresh
// reports the latter (a new store).
func (s *Store) loadLayout(ctx context.Context) (fresh bool, err error) {
	err = s.idx.Update(ctx, func(tx meta.Tx) error {
		fresh = false
		want := s.opt.DriveCount
		if len(s.opt.Drives) > 0 {
			want = len(s.opt.Drives)
		}
		raw, err := tx.Get(meta.Settings, []byte("layout"))
		if err != nil {
			return err
		}
		if raw != nil {
			if err := meta.Decode(raw, &s.layout); err != nil {
				return err
			}
			if want != 0 && want != s.layout.Drives {
				return fmt.Errorf("%w: %s holds a store of %d drives, %d were given", ErrInvalidArgument, s.opt.Dir, s.layout.Drives, want)
			}
			if s.opt.Parity >= 0 && s.opt.Parity != s.layout.Parity {
				if err := checkParity(s.layout.Drives, s.opt.Parity); err != nil {
					return err
				}
				s.layout.Parity = s.opt.Parity // applies to new writes only
				return tx.Put(meta.Settings, []byte("layout"), meta.Encode(s.layout))
			}
			return nil
		}
		if want == 0 {
			want = defaultDriveCount
		}
		parity := s.opt.Parity
		if parity < 0 {
			parity = erasure.DefaultParity(want)
		}
		if err := checkParity(want, parity); err != nil {
			return err
		}
		var set [16]byte
		if _, err := rand.Read(set[:]); err != nil {
			return err
		}
		s.layout = meta.Layout{Set: hex.EncodeToString(set[:]), Drives: want, Parity: parity, BlockSize: s.opt.BlockSize}
		fresh = true
		return tx.Put(meta.Settings, []byte("layout"), meta.Encode(s.layout))
	})
	return fresh, err
}

func checkParity(drives, parity int) error {
	if parity < 0 || parity >= drives {
		return fmt.Errorf("%w: parity %d needs at least %d drives, there are %d", ErrInvalidArgument, parity, parity+1, drives)
	}
	return nil
}

// openDrives opens the layout's drives, formatting those missing or
// empty. A drive formatted beside drives that already hold data (or in a
// store that was already there) has lost its shards: that is warned about,
// with the way to restore them. A new store whose drives are all new is
// just created, with one info line.
func (s *Store) openDrives(ctx context.Context, fresh bool) error {
	paths := s.opt.Drives
	if len(paths) == 0 {
		for i := 0; i < s.layout.Drives; i++ {
			paths = append(paths, filepath.Join(s.opt.Dir, "drives", fmt.Sprintf("d%d", i)))
		}
	}
	var formatted []int // drives formatted now
	for i, p := range paths {
		var d drive.Drive
		var created bool
		var err error
		if s.opt.OpenDrive != nil {
			d, created, err = s.opt.OpenDrive(ctx, s.layout.Set, i)
			if err == nil && (d == nil || d.Index() != i) {
				err = fmt.Errorf("%w: OpenDrive gave no drive or the wrong slot for drive %d", ErrInvalidArgument, i)
			}
		} else {
			d, created, err = drive.OpenDir(p, s.layout.Set, i)
		}
		if err != nil {
			return err
		}
		if created {
			formatted = append(formatted, i)
		}
		s.drives = append(s.drives, d)
	}
	s.driveErrs = make([]driveErrCounts, len(s.drives))
	if fresh && len(formatted) == len(s.drives) {
		s.log.Info().Str("dir", s.opt.Dir).Int("drives", s.layout.Drives).Int("parity", s.layout.Parity).Msg("created a new store")
		return nil
	}
	for _, i := range formatted {
		s.log.Warn().Str("drive", s.drives[i].String()).Int("index", i).Msg("drive directory was missing or unformatted; formatted it empty, run heal to restore its shards")
	}
	return nil
}

// Close stops the background workers and closes the index. Readers still
// open keep working on their open files but can no longer be unpinned
// usefully; close them first.
func (s *Store) Close() error {
	s.pending.drain() // asynchronous writes finish first: closing loses none
	if s.closed.Swap(true) {
		return nil
	}
	s.stopBG()
	s.bg.Wait()
	s.closeMu.Lock() // waits for commits in flight
	s.stopCommit()
	s.committerWG.Wait()
	s.closeMu.Unlock()
	if err := s.dropLeases(context.Background()); err != nil {
		s.log.Warn().Err(err).Msg("reader leases left in the index; they expire on their own")
	}
	s.watch.closeAll()
	s.closePacks()
	s.md5srv.Close()
	if s.cache != nil {
		_ = s.cache.Close()
	}
	return s.idx.Close()
}

// Ready reports whether the store serves: nil when open and the index
// answers.
func (s *Store) Ready(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.idx.View(ctx, func(meta.Tx) error { return nil })
}

// geometry is the k, m and block size of new writes.
func (s *Store) geometry() (k, m, bs int) {
	return s.layout.Drives - s.layout.Parity, s.layout.Parity, s.layout.BlockSize
}

func (s *Store) codec(k, m, bs int) (*erasure.Codec, error) {
	s.codecMu.Lock()
	defer s.codecMu.Unlock()
	key := [3]int{k, m, bs}
	if c, ok := s.codecs[key]; ok {
		return c, nil
	}
	c, err := erasure.NewCodec(k, m, bs)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDataCorrupt, err)
	}
	s.codecs[key] = c
	return c, nil
}

func (s *Store) checkOpen() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// errIs is errors.Is over several targets.
func errIs(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
