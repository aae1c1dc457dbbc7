package objstore

import "github.com/cairnstore/cairn/objstore/meta"

// pin marks the data of segs as in use by a reader. Call with pinGate
// held for reading, in the same critical section as the lookup.
func (s *Store) pin(segs []meta.Segment) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	for _, sg := range segs {
		s.pins[sg.Data]++
	}
}

func (s *Store) unpin(segs []meta.Segment) {
	s.pinMu.Lock()
	freed := false
	for _, sg := range segs {
		if s.pins[sg.Data]--; s.pins[sg.Data] <= 0 {
			delete(s.pins, sg.Data)
			freed = true
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

func (s *Store) wakeCleaner() {
	select {
	case s.cleanWake <- struct{}{}:
	default:
	}
}

func (s *Store) queueHeal(id string) {
	select {
	case s.healq <- id:
	default: // the queue is full; fsck and heal find it later
	}
}
