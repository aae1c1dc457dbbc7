package objstore

import "iter"

// pin marks the data objects ids, and the pack segments packSegs, as in
// use by a reader. Call with pinGate held for reading, in the same
// critical section as the lookup.
func (s *Store) pin(ids iter.Seq[string], packSegs []uint64) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	for id := range ids {
		s.pins[id]++
	}
	for _, p := range packSegs {
		s.pinSegs[p]++
	}
}

// unpin undoes pin.
func (s *Store) unpin(ids iter.Seq[string], packSegs []uint64) {
	s.pinMu.Lock()
	freed := false
	for id := range ids {
		if s.pins[id]--; s.pins[id] <= 0 {
			delete(s.pins, id)
			freed = true
		}
	}
	for _, p := range packSegs {
		if s.pinSegs[p]--; s.pinSegs[p] <= 0 {
			delete(s.pinSegs, p)
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
