package objstore

import "github.com/cairnstore/cairn/objstore/meta"

// pin marks the data of segs, and the pack segments packSegs, as in use
// by a reader. Call with pinGate held for reading, in the same critical
// section as the lookup.
func (s *Store) pin(segs []meta.Segment, packSegs []uint64) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	for _, sg := range segs {
		s.pins[sg.Data]++
	}
	for _, p := range packSegs {
		s.pinSegs[p]++
	}
}

func (s *Store) unpin(segs []meta.Segment, packSegs []uint64) {
	s.pinMu.Lock()
	freed := false
	for _, sg := range segs {
		if s.pins[sg.Data]--; s.pins[sg.Data] <= 0 {
			delete(s.pins, sg.Data)
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
