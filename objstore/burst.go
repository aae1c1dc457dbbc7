package objstore

import (
	"sync"
	"time"
)

// burstDelay is how long an asynchronous operation waits for others
// before they start together, unless somebody waits for one of them
// first (pendingSet.hurry). A cp -r of small files closes one every few
// hundred µs: started one by one, each background put woke a thread and
// took a core from the copy's own round trips at a random moment (a
// quarter of the copy's time, measured); started in bursts they cost one
// wake-up per burst, and their commits share a flush. The committer lets
// background commits linger five times longer anyway (backgroundLinger).
const burstDelay = 10 * time.Millisecond

// launcher starts queued operations in bursts: all those queued, delay
// after the first of them was, or at fire. An operation queued with add
// runs on a goroutine of its own. One queued with addWrite is a small
// write: the burst writes those one after the other, in the order they
// were queued, on one goroutine (which starts after the previous burst's
// writes are done, so that writes reach the committer in order across
// bursts), then waits for their commits on it.
type launcher struct {
	delay time.Duration

	mu      sync.Mutex // protects the following
	queue   []burstOp
	timer   *time.Timer   // armed while queue is not empty
	writing chan struct{} // closed once the last burst's writes are done
}

// burstOp is one queued operation: run, or write (which returns what
// completes it, or nil when it completes on its own).
type burstOp struct {
	run   func()
	write func() func()
}

func (l *launcher) add(run func()) { l.push(nil, burstOp{run: run}) }

// addWrite queues a small write, calling register first under the
// launcher's lock, so that writes are queued in the order they were
// registered.
func (l *launcher) addWrite(register func(), write func() func()) {
	l.push(register, burstOp{write: write})
}

func (l *launcher) push(register func(), op burstOp) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if register != nil {
		register()
	}
	l.queue = append(l.queue, op)
	if len(l.queue) > 1 {
		return
	}
	if l.timer == nil {
		l.timer = time.AfterFunc(l.delay, l.fire)
	} else {
		l.timer.Reset(l.delay)
	}
}

// fire starts everything queued now.
func (l *launcher) fire() {
	l.mu.Lock()
	q := l.queue
	l.queue = nil
	if l.timer != nil {
		l.timer.Stop()
	}
	var writes []func() func()
	for _, op := range q {
		if op.write != nil {
			writes = append(writes, op.write)
		} else {
			go op.run()
		}
	}
	if len(writes) == 0 {
		l.mu.Unlock()
		return
	}
	prev, done := l.writing, make(chan struct{})
	l.writing = done
	l.mu.Unlock()
	go func() {
		if prev != nil {
			<-prev
		}
		finish := make([]func(), 0, len(writes))
		for _, w := range writes {
			if f := w(); f != nil {
				finish = append(finish, f)
			}
		}
		close(done)
		for _, f := range finish {
			f()
		}
	}()
}
