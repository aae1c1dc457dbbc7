package objstore

import (
	"context"
	"strings"
	"sync"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Op is the kind of a change event.
type Op int

// Change kinds.
const (
	OpPut          Op = iota + 1 // a new current version of Key
	OpDelete                     // Key lost its current version (or a version)
	OpRename                     // Key was renamed to To
	OpRenamePrefix               // every key under prefix Key now lives under To
	OpOverflow                   // events were dropped: forget what you cached
)

// Event is one committed change.
type Event struct {
	Op     Op
	Bucket string
	Key    string
	To     string
}

type watcher struct {
	bucket, prefix string
	ch             chan Event
	overflow       bool
}

// watchers fans events out to the Watch subscribers.
type watchers struct {
	mu   sync.Mutex // protects list
	list map[*watcher]struct{}
}

// Watch streams committed changes to keys of bucket under prefix ("" for
// every bucket) until ctx ends or the store closes, when the channel is
// closed. A subscriber that falls behind loses events and receives one
// OpOverflow event instead.
func (s *Store) Watch(ctx context.Context, bucket, prefix string) <-chan Event {
	w := &watcher{bucket: bucket, prefix: prefix, ch: make(chan Event, 1024)}
	s.watch.mu.Lock()
	if s.watch.list == nil {
		s.watch.list = map[*watcher]struct{}{}
	}
	s.watch.list[w] = struct{}{}
	s.watch.mu.Unlock()
	if s.closed.Load() {
		s.watch.remove(w)
		return w.ch
	}
	go func() {
		<-ctx.Done()
		s.watch.remove(w)
	}()
	return w.ch
}

func (ws *watchers) remove(w *watcher) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if _, ok := ws.list[w]; ok {
		delete(ws.list, w)
		close(w.ch)
	}
}

func (ws *watchers) closeAll() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for w := range ws.list {
		close(w.ch)
	}
	ws.list = nil
}

func (s *Store) notify(e Event) {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	for w := range s.watch.list {
		if !w.matches(e) {
			continue
		}
		if w.overflow {
			select {
			case w.ch <- Event{Op: OpOverflow, Bucket: e.Bucket}:
				w.overflow = false
			default:
				continue
			}
		}
		select {
		case w.ch <- e:
		default:
			w.overflow = true
		}
	}
}

func (w *watcher) matches(e Event) bool {
	if e.Op == OpOverflow && e.Bucket == "" {
		return true // every bucket's
	}
	if w.bucket != "" && w.bucket != e.Bucket {
		return false
	}
	if w.prefix == "" {
		return true
	}
	overlaps := func(k string) bool {
		return strings.HasPrefix(k, w.prefix) || (e.Op == OpRenamePrefix && strings.HasPrefix(w.prefix, k))
	}
	return overlaps(e.Key) || (e.To != "" && overlaps(e.To))
}

// runForeignWatch passes on to the store's watchers the changes other
// processes sharing the index (other nodes on etcd) commit to the
// objects table: a put of a key's current record is OpPut, its delete
// OpDelete (a rename elsewhere arrives as both), and a gap in what the
// index could report is OpOverflow for every bucket. The store's own
// commits are not reported again.
func (s *Store) runForeignWatch(ctx context.Context) {
	w := s.idx.(meta.Watcher)
	err := w.WatchOthers(ctx, meta.Objects, func(key []byte, deleted bool) {
		if key == nil {
			s.notify(Event{Op: OpOverflow})
			return
		}
		bucket, k, ok := meta.SplitObjectKey(key)
		if !ok {
			return
		}
		op := OpPut
		if deleted {
			op = OpDelete
		}
		s.notify(Event{Op: op, Bucket: bucket, Key: k})
	})
	if err != nil && ctx.Err() == nil {
		s.log.Error().Err(err).Msg("watch of other nodes' changes stopped; the mount may show their writes late")
	}
}
