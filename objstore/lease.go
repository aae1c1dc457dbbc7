package objstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Readers and the cleaner across processes.
//
// In one process a reader pins its version's data (pins.go) in the same
// critical section as its lookup, and the cleaner, holding pinGate
// alone, frees only garbage nobody pins. Processes that share one index
// (Options.ReaderGrace > 0) cannot see each other's pins, so two rules
// recorded in the index carry the guarantee between them:
//
//   - Grace: the cleaner frees garbage only once it has been garbage for
//     ReaderGrace (GarbageEntry.Since), and removes a pack segment only
//     once it has been dead that long (PackInfo.Dead): a reader that
//     looked data up before it became garbage has that long to lease it.
//   - Leases: every leaseEvery (ReaderGrace/4) each process records a
//     lease until now+ReaderGrace for every data object and pack segment
//     its readers pin, renews them, and drops those no longer pinned. The
//     cleaner frees nothing under an unexpired lease and drops expired
//     ones (their holder died).
//
// So a reader is covered from its lookup on, provided ReaderGrace exceeds
// leaseEvery plus an index commit plus the clock skew between the
// processes. Reads shorter than leaseEvery never write to the index.
//
// This protects readers. Writers that share an index are told apart by
// Options.WriterID (writers.go): each takes its own pack segments and
// sweeps and compacts only its own. With ReaderGrace zero (an index only
// this process opens, as bbolt's file lock ensures) neither rule applies
// and pins alone decide, freeing garbage at once.

// leaseChunk is how many lease writes go in one commit request, so that
// renewals fit an index with bounded transactions.
const leaseChunk = 32

// leaser is the leases this process holds in the index.
type leaser struct {
	holder string
	mu     sync.Mutex          // one renewal at a time; protects held
	held   map[string]struct{} // lease keys recorded
}

func newLeaser() (*leaser, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	return &leaser{holder: hex.EncodeToString(b[:]), held: map[string]struct{}{}}, nil
}

func (s *Store) leaseEvery() time.Duration { return s.opt.ReaderGrace / 4 }

// renewLeases records a lease for everything this process's readers pin
// and drops the leases of what they no longer pin.
func (s *Store) renewLeases(ctx context.Context) error {
	l := s.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	want := map[string]struct{}{}
	s.pinMu.Lock()
	for id := range s.pins {
		did, err := erasure.ParseDataID(id)
		if err == nil {
			want[string(meta.LeaseKey(l.holder, meta.LeaseData, did[:]))] = struct{}{}
		}
	}
	for seg := range s.pinSegs {
		want[string(meta.LeaseKey(l.holder, meta.LeaseSegment, meta.PackKey(seg)))] = struct{}{}
	}
	s.pinMu.Unlock()
	rec := meta.Encode(meta.Lease{Until: time.Now().Add(s.opt.ReaderGrace).UTC()})
	var puts, dels [][]byte
	for k := range want {
		puts = append(puts, []byte(k))
	}
	for k := range l.held {
		if _, ok := want[k]; !ok {
			dels = append(dels, []byte(k))
		}
	}
	err := s.commitChunks(ctx, len(puts)+len(dels), 1, func(tx meta.Tx, i int) error {
		if i < len(puts) {
			return tx.Put(meta.Leases, puts[i], rec)
		}
		return tx.Delete(meta.Leases, dels[i-len(puts)])
	})
	if err != nil {
		// Some chunks may have committed: remember both, so that Close
		// drops whatever is there.
		for k := range want {
			l.held[k] = struct{}{}
		}
		return fmt.Errorf("renew reader leases: %w", err)
	}
	l.held = want
	return nil
}

// dropLeases removes every lease this process holds; Close calls it once
// the committer and the leaser have stopped, so it writes to the index
// itself, leaseChunk keys a transaction.
func (s *Store) dropLeases(ctx context.Context) error {
	l := s.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	var keys [][]byte
	for k := range l.held {
		keys = append(keys, []byte(k))
	}
	for lo := 0; lo < len(keys); lo += leaseChunk {
		chunk := keys[lo:min(lo+leaseChunk, len(keys))]
		err := s.idx.Update(ctx, func(tx meta.Tx) error {
			for _, k := range chunk {
				if err := tx.Delete(meta.Leases, k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	l.held = map[string]struct{}{}
	return nil
}

func (s *Store) runLeaser(ctx context.Context) {
	s.every(ctx, s.leaseEvery(), s.renewLeases, "readers of this process may lose data to another process's cleaner: check the index")
}

// leaseState is what the leases table says at one moment.
type leaseState struct {
	data    map[erasure.DataID]bool
	segs    map[uint64]bool
	expired [][]byte // keys of leases past their time
}

// readLeases reads the leases table as of now; empty when ReaderGrace is
// zero (no other process shares the index).
func (s *Store) readLeases(tx meta.Tx, now time.Time) (leaseState, error) {
	st := leaseState{data: map[erasure.DataID]bool{}, segs: map[uint64]bool{}}
	if s.opt.ReaderGrace <= 0 {
		return st, nil
	}
	err := meta.Scan(tx, meta.Leases, nil, func(k, v []byte) error {
		_, kind, id, ok := meta.SplitLeaseKey(k)
		if !ok {
			return fmt.Errorf("%w: lease key %q", meta.ErrCorruptRecord, k)
		}
		var l meta.Lease
		if err := meta.Decode(v, &l); err != nil {
			return err
		}
		if !l.Until.After(now) {
			st.expired = append(st.expired, append([]byte{}, k...))
			return nil
		}
		if kind == meta.LeaseData {
			var did erasure.DataID
			copy(did[:], id)
			st.data[did] = true
		} else {
			st.segs[binary.BigEndian.Uint64(id)] = true
		}
		return nil
	})
	return st, err
}

// inGrace reports whether something that became garbage (or dead) at
// since may still be read by another process that has not leased it yet.
func (s *Store) inGrace(since, now time.Time) bool {
	return s.opt.ReaderGrace > 0 && now.Sub(since) < s.opt.ReaderGrace
}

// commitChunks commits n items, write(tx, i) for i in [0, n), each of at
// most perItem index writes, as requests of leaseChunk items (fewer when
// the index's bound asks for it) sent together: one group commit for
// them all when they fit one index transaction, several otherwise.
func (s *Store) commitChunks(ctx context.Context, n, perItem int, write func(tx meta.Tx, i int) error) error {
	chunk := leaseChunk
	if lim := s.idx.Limits().MaxWrites; lim > 0 {
		chunk = max(1, min(chunk, lim/perItem))
	}
	// One shared hold of closeMu for all the requests: a second RLock
	// while the first is held would wait behind a Close waiting for the
	// first (RWMutex blocks new readers once a writer waits).
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	var reqs []*commitReq
	var errs []error
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		r := &commitReq{fn: func(tx meta.Tx) error {
			for i := lo; i < hi; i++ {
				if err := write(tx, i); err != nil {
					return err
				}
			}
			return nil
		}}
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		s.queueLocked(ctx, r)
		reqs = append(reqs, r)
	}
	for _, r := range reqs {
		errs = append(errs, <-r.done)
	}
	return errors.Join(errs...)
}
