package main

import (
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/cairnstore/cairn/objstore"
)

// progress draws the store's progress callbacks as a bar per phase on a
// terminal, and does nothing otherwise. It is safe for concurrent use, since
// the store does not promise which goroutine calls back.
type progress struct {
	w  io.Writer
	on bool

	mu    sync.Mutex // protects the following
	phase string
	bar   *progressbar.ProgressBar
}

func newProgress(w io.Writer, tty bool) *progress {
	return &progress{w: w, on: tty}
}

// update is the objstore progress callback.
func (p *progress) update(pr objstore.Progress) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil || pr.Phase != p.phase {
		p.finishLocked()
		p.phase = pr.Phase
		p.bar = p.newBarLocked(pr)
	}
	if pr.Total > 0 && pr.Total != p.bar.GetMax64() {
		p.bar.ChangeMax64(pr.Total)
	}
	_ = p.bar.Set64(pr.Done)
}

// finish completes the current bar, if any.
func (p *progress) finish() {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishLocked()
}

func (p *progress) finishLocked() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_, _ = io.WriteString(p.w, "\n")
		p.bar = nil
	}
}

func (p *progress) newBarLocked(pr objstore.Progress) *progressbar.ProgressBar {
	total := pr.Total
	if total <= 0 {
		total = -1 // unknown: a spinner
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(pr.Phase),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
}
