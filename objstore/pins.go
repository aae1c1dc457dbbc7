package objstore

import (
	"iter"

	"github.com/cairnstore/cairn/objstore/meta"
)

// pin marks the data objects of datas (id and record), and the pack
// segments holding them, as in use by a reader. Call with pinGate held
// for reading, in the same critical section as the lookup.
func (s *Store) pin(datas iter.Seq2[string, meta.Data]) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	for id, d := range datas {
		s.pins[id]++
		if d.Pack != 0 {
			s.pinSegs[d.Pack]++
		}
	}
}

// unpin undoes pin.
func (s *Store) unpin(datas iter.Seq2[string, meta.Data]) {
	s.pinMu.Lock()
	freed := false
	for id, d := range datas {
		if s.pins[id]--; s.pins[id] <= 0 {
			delete(s.pins, id)
			freed = true
		}
		if d.Pack != 0 {
			if s.pinSegs[d.Pack]--; s.pinSegs[d.Pack] <= 0 {
				delete(s.pinSegs, d.Pack)
			}
		}
	}
	s.pinMu.Unlock()
	if freed {
		s.wakeCleaner()
	}
}
func (s *Store) pinned(id string) bool {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	return s.pins[id] > 0
}

func (s *Store) segPinned(seg uint64) bool {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	return s.pinSegs[seg] > 0
}

func (s *Store) wakeCleaner() {
	select {
	case s.cleanWake <- struct{}{}:
	default:
	}
}

func (s *Store) queueHeal(id string) {
	if !s.degraded.add(id) {
		return // queued already
	}
	select {
	case s.healq <- id:
	default: // the queue is full; fsck and heal find it later
		s.degraded.dequeued(id)
	}
}
