package objstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/meta"
)

// commitReq is one mutation waiting for the committer.
type commitReq struct {
	// fn applies the mutation. It may run more than once (when another
	// request of its batch fails, the batch is rolled back and re-run), so
	// it must derive everything from the transaction and its inputs, and
	// check before it writes.
	fn func(tx meta.Tx) error
	// shards lists the drives holding data this request wrote, nil when it
	// wrote none; quorum is how many of them must flush.
	shards []int
	quorum int
	// packSeg is the pack segment the data went to (zero: shard files).
	packSeg uint64
	// data names the shard files (the data ID) when the request wrote
	// shard files; without it the batch flushes whole filesystems.
	data string
	// background: nobody waits on this request (an asynchronous put),
	// so it may wait a little for company.
	background bool
	done       chan error
}

// backgroundLinger is how long a batch of background requests alone
// waits for more before it is flushed: a writer closing many small files
// on the mount then shares one flush among them instead of paying one
// each. A request somebody waits for, or anybody waiting for a pending
// operation (a reader of its key, fsync), ends the wait at once.
const backgroundLinger = 50 * time.Millisecond

// backgroundKey marks a context whose commits nobody waits for.
type backgroundKey struct{}

// withBackground marks ctx's commits as background requests.
func withBackground(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

func isBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

// commit runs fn in the next group commit and waits for its outcome. When
// shards is non-nil the drives are flushed first and the request fails
// with ErrQuorumLost unless quorum of those drives flushed. Once queued, a
// request is waited for even if ctx ends, since it may already be durable.
func (s *Store) commit(ctx context.Context, shards []int, quorum int, fn func(tx meta.Tx) error) error {
	return s.enqueue(ctx, &commitReq{fn: fn, shards: shards, quorum: quorum})
}

// enqueue hands r to the committer and waits for its outcome.
func (s *Store) enqueue(ctx context.Context, r *commitReq) error {
	if err := s.send(ctx, r); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	return <-r.done
}

// send hands r to the committer without waiting: r.done will carry the
// outcome. Unless it fails, the caller must receive from r.done and then
// call s.closeMu.RUnlock (the store does not close under a request).
func (s *Store) send(ctx context.Context, r *commitReq) error {
	s.closeMu.RLock()
	if err := s.checkOpen(); err != nil {
		s.closeMu.RUnlock()
		return err
	}
	if err := ctx.Err(); err != nil {
		s.closeMu.RUnlock()
		return err
	}
	s.queueLocked(ctx, r)
	return nil
}

// queueLocked hands r to the committer; the caller holds closeMu shared
// and receives from r.done.
func (s *Store) queueLocked(ctx context.Context, r *commitReq) {
	r.done = make(chan error, 1)
	r.background = isBackground(ctx)
	s.commits <- r
}

// runCommitter runs the two stages of the group commit until ctx ends,
// then drains what was queued: the syncer takes every request waiting and
// flushes the drives once for them; the indexer takes every flushed batch
// waiting and applies them in one index transaction. The stages overlap,
// so the drives of batch N+1 flush while batch N's index commit runs.
func (s *Store) runCommitter(ctx context.Context) {
	synced := make(chan []*commitReq, 2)
	go func() {
		defer close(synced)
		for {
			var first *commitReq
			select {
			case first = <-s.commits:
			case <-ctx.Done():
				for {
					select {
					case r := <-s.commits:
						synced <- s.syncBatch([]*commitReq{r})
					default:
						return
					}
				}
			}
			batch := []*commitReq{first}
		drain:
			for len(batch) < 1024 {
				select {
				case r := <-s.commits:
					batch = append(batch, r)
				default:
					break drain
				}
			}
			batch = s.linger(ctx, batch)
			synced <- s.syncBatch(batch)
		}
	}()
	for batch := range synced {
	merge:
		for len(batch) < 4096 {
			select {
			case more, ok := <-synced:
				if !ok {
					break merge
				}
				batch = append(batch, more...)
			default:
				break merge
			}
		}
		s.commitBatch(batch)
	}
}

// linger lets a batch of background requests only wait up to
// backgroundLinger for more, ending as soon as a request somebody waits
// for arrives or the batch is full.
func (s *Store) linger(ctx context.Context, batch []*commitReq) []*commitReq {
	for _, r := range batch {
		if !r.background {
			return batch
		}
	}
	timer := time.NewTimer(backgroundLinger)
	defer timer.Stop()
	for len(batch) < 1024 {
		select {
		case r := <-s.commits:
			batch = append(batch, r)
			if !r.background {
				return batch
			}
		case <-timer.C:
			return batch
		case <-s.pending.kick:
			return batch
		case <-ctx.Done():
			return batch
		}
	}
	return batch
}

// Flushing a batch's shard files: syncfs of each drive's filesystem
// costs one device flush for any number of files, but writes every dirty
// page of the filesystem, the drives' or not (a staging file the mount
// writes beside them: 1 GiB more written for a `dd conv=fsync` of 1 GiB);
// fdatasync of each shard file and of its directory writes only those,
// at the cost of a device flush each (8-10% fewer 256 KiB-1 MiB PUTs a
// second when nothing else is dirty). The batch flushes file by file
// when the page cache holds at least syncFilesDirty bytes to write back,
// for at most syncFilesMax requests that named their files. Drives that
// are not local (drive.Local) always flush by name within that bound.
const (
	syncFilesDirty = 64 << 20
	syncFilesMax   = 64
)

// fileSyncs returns the shard files the batch's requests wrote, per
// drive, how many requests wrote shard files, and whether the batch may
// flush them file by file: at most syncFilesMax requests, each with its
// files named.
func fileSyncs(batch []*commitReq, drives int) (names [][]string, reqs int, byFile bool) {
	names = make([][]string, drives)
	byFile = true
	for _, r := range batch {
		if r.shards == nil || r.packSeg != 0 {
			continue
		}
		reqs++
		if r.data == "" {
			byFile = false
		}
		for _, d := range r.shards {
			names[d] = append(names[d], r.data)
		}
	}
	return names, reqs, byFile && reqs <= syncFilesMax
}

// syncBatch makes the data the batch wrote durable and answers the
// requests whose data did not reach quorum; it returns the rest. Shard
// files are flushed with one Sync per drive (syncfs per filesystem for
// local drives, which covers pack segments too), or by name (SyncFiles)
// while much else is dirty (see syncFilesDirty); pack segments are then
// flushed by name too (SyncPacks).
func (s *Store) syncBatch(batch []*commitReq) []*commitReq {
	ctx := context.Background()
	packSegs := map[uint64]bool{}
	for _, r := range batch {
		if r.shards != nil && r.packSeg != 0 {
			packSegs[r.packSeg] = true
		}
	}
	names, fileReqs, byFile := fileSyncs(batch, len(s.drives))
	if fileReqs == 0 && len(packSegs) == 0 {
		return batch
	}
	if fileReqs > 0 && byFile && allLocal(s.drives) {
		// Drives that are not local directories share no filesystem
		// flush, so they always flush by name when they can.
		dirty, err := drive.DirtyBytes(ctx)
		byFile = err == nil && dirty >= syncFilesDirty
	}
	var fsErrs, fileErrs []error
	var packErrs map[uint64][]error
	if byFile {
		if fileReqs > 0 {
			fileErrs = drive.SyncFilesAll(ctx, s.drives, names)
		}
		if len(packSegs) > 0 {
			packErrs = s.syncPacks(ctx, packSegs)
		}
	} else {
		fsErrs = drive.SyncAll(ctx, s.drives)
	}
	kept := batch[:0]
	for _, r := range batch {
		if r.shards == nil {
			kept = append(kept, r)
			continue
		}
		errs := fsErrs
		switch {
		case errs != nil:
		case r.packSeg != 0:
			errs = packErrs[r.packSeg]
		default:
			errs = fileErrs
		}
		ok := 0
		var causes []error
		for _, d := range r.shards {
			if err := errs[d]; err == nil {
				ok++
			} else {
				causes = append(causes, err)
			}
		}
		if ok < r.quorum {
			// The drives' errors go with it: a full drive is ENOSPC to
			// the faces, not a lost quorum alone.
			r.done <- fmt.Errorf("%w: %d of %d drives flushed, %d needed: %w", ErrQuorumLost, ok, len(r.shards), r.quorum, errors.Join(causes...))
			continue
		}
		kept = append(kept, r)
	}
	return kept
}

// commitBatch applies the batch in one transaction, request after
// request, each seeing the writes of those before it (the index's
// read-your-writes rule). A request whose fn fails gets its error and the
// batch is re-run without it (the failed attempt is rolled back, which
// costs no I/O). The batch is split where the index's transaction bound
// (meta.Limits) would be passed: the requests before that point commit
// together and the rest go on in the next transaction; a request that
// alone passes it fails with ErrTooManyChanges.
func (s *Store) commitBatch(batch []*commitReq) {
	ctx := context.Background() // requests are committed even when their caller gave up
	limits := s.idx.Limits()
	for len(batch) > 0 {
		failed, split := -1, len(batch)
		var ferr error
		var made bool
		err := s.idx.Update(ctx, func(tx meta.Tx) error {
			btx := &batchTx{Tx: tx}
			for i, r := range batch {
				err := runFn(r.fn, btx)
				if err == nil && !limits.Fits(btx.writes, btx.bytes) {
					err = fmt.Errorf("%w: %d writes of %d bytes, the index takes %d and %d", meta.ErrTxTooLarge,
						btx.writes, btx.bytes, limits.MaxWrites, limits.MaxBytes)
				}
				if err != nil {
					if i > 0 && errors.Is(err, meta.ErrTxTooLarge) {
						split = i
						return errSplit
					}
					failed, ferr = i, err
					return err
				}
			}
			made = btx.made
			return nil
		})
		if err == nil {
			for _, r := range batch {
				r.done <- nil
			}
			if made {
				// Free the space (and the page cache) of what was just
				// deleted or overwritten now, not at the next tick.
				s.wakeCleaner()
			}
			return
		}
		if failed < 0 && split == len(batch) && errors.Is(err, meta.ErrTxTooLarge) && len(batch) > 1 {
			split = len(batch) / 2 // a request hid the index's refusal: halve and retry
		}
		if split < len(batch) {
			s.commitBatch(batch[:split])
			batch = batch[split:]
			continue
		}
		if failed < 0 {
			if errors.Is(err, meta.ErrTxTooLarge) {
				failed, ferr = 0, err
			} else {
				// The commit itself failed: nothing of the batch is visible.
				for _, r := range batch {
					r.done <- fmt.Errorf("index commit: %w", err)
				}
				s.log.Error().Err(err).Int("requests", len(batch)).Msg("index commit failed")
				return
			}
		}
		if errors.Is(ferr, meta.ErrTxTooLarge) {
			ferr = fmt.Errorf("%w: %w", ErrTooManyChanges, ferr)
		}
		batch[failed].done <- ferr
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

// errSplit ends a transaction whose batch must be split.
var errSplit = errors.New("objstore: batch passes the index's transaction bound")

// batchTx is a transaction that counts its writes, for the index's
// transaction bound, and notes whether it made garbage.
type batchTx struct {
	meta.Tx
	writes, bytes int
	made          bool
}

func (t *batchTx) Put(table meta.Table, key, value []byte) error {
	t.writes++
	t.bytes += len(key) + len(value)
	if table == meta.Garbage {
		t.made = true
	}
	return t.Tx.Put(table, key, value)
}

func (t *batchTx) Delete(table meta.Table, key []byte) error {
	t.writes++
	t.bytes += len(key)
	return t.Tx.Delete(table, key)
}

// runFn runs fn, turning a panic into an error so one bad request cannot
// take the server down.
func runFn(fn func(meta.Tx) error, tx meta.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: panic in commit: %v", ErrInternal, p)
		}
	}()
	return fn(tx)
}
