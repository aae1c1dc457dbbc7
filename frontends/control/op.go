package control

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// The states of an Outcome.
const (
	StateNone      = "none"      // the operation has not run since the server started
	StateRunning   = "running"   // a run is in progress
	StateSucceeded = "succeeded" // the last run returned no error
	StateFailed    = "failed"    // the last run (or an invalid write) failed
)

// Outcome is the document of an operation's last-result file: what the
// last write asked for and what came of it, in full, since the errno of
// the failed write cannot say why.
type Outcome[R any] struct {
	State    string    `json:"state"`
	Word     string    `json:"word,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	// Error is the error of a failed run, or why a write was refused.
	Error string `json:"error,omitempty"`
	// Result is what Run returned, kept whether or not it failed (a Run
	// with a pointer R returns nil to leave it out); nil before any run
	// and for refused writes.
	Result *R `json:"result,omitempty"`
}

// Op is an operation served as two files (see Files): reading the
// operation file shows Preview, writing one of Words to it calls Run, and
// the last-result file shows the Outcome of the last write. P is the
// preview document, R the result document; both are encoded with JSON.
//
// Runs are exclusive: a write while a run is in progress fails with
// ErrBusy and leaves the outcome alone. Fill the exported fields before
// the first use and do not change them afterwards; an Op must not be
// copied after first use.
type Op[P, R any] struct {
	// Words lists the words a write may hold ("materialize", "cancel").
	// Empty means any single word, for Run to check.
	Words []string
	// Preview returns what reading the operation file shows. Nil means
	// {"words": Words}.
	Preview func(ctx context.Context) (P, error)
	// Run (required) runs the operation word names. Its error should wrap one of
	// the package's sentinels (ErrBusy when a fence is held, ...); the
	// write returns it as is.
	Run func(ctx context.Context, word string) (R, error)
	// Now is the clock of Outcome times; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex // protects running and last
	running bool
	last    Outcome[R]
}

// Files returns the operation file and the last-result file, to add to a
// Dir side by side:
//
//	dir.Add("migration", op).Add("last-result", result)
func (o *Op[P, R]) Files() (op, result *File) {
	op = &File{
		Read: func(ctx context.Context) ([]byte, error) {
			if o.Preview == nil {
				return JSON(struct {
					Words []string `json:"words"`
				}{o.words()})
			}
			p, err := o.Preview(ctx)
			if err != nil {
				return nil, err
			}
			return JSON(p)
		},
		Write: func(ctx context.Context, data []byte) error {
			_, err := o.Do(ctx, string(data))
			return err
		},
	}
	result = &File{Read: func(context.Context) ([]byte, error) {
		return JSON(o.Last())
	}}
	return op, result
}

// Do runs the operation the written text names: one word, surrounded by
// any white space. It returns the Outcome recorded for the run and Run's
// error. A text that is not one of Words fails with ErrInvalid and is
// recorded as a failed outcome; a write while a run is in progress fails
// with ErrBusy and is not recorded. HTTP faces call Do and answer with
// the outcome.
func (o *Op[P, R]) Do(ctx context.Context, text string) (Outcome[R], error) {
	word, err := o.parse(text)
	if err != nil {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.running {
			return o.last, err
		}
		now := o.now()
		o.last = Outcome[R]{State: StateFailed, Word: word, Started: now, Finished: now, Error: err.Error()}
		return o.last, err
	}

	o.mu.Lock()
	if o.running {
		last := o.last
		o.mu.Unlock()
		return last, fmt.Errorf("%w: %q is running since %s", ErrBusy, last.Word, last.Started.Format(time.RFC3339))
	}
	started := o.now()
	o.running = true
	o.last = Outcome[R]{State: StateRunning, Word: word, Started: started}
	o.mu.Unlock()

	out := Outcome[R]{State: StateFailed, Word: word, Started: started, Error: "run panicked"}
	defer func() { // also when Run panics, so that later writes are not refused forever
		o.mu.Lock()
		defer o.mu.Unlock()
		if out.Finished.IsZero() {
			out.Finished = o.now()
		}
		o.last = out
		o.running = false
	}()
	res, err := o.Run(ctx, word)
	if v := reflect.ValueOf(&res).Elem(); v.Kind() != reflect.Pointer || !v.IsNil() {
		out.Result = &res // a nil pointer result is left out, as documented
	}
	out.Finished = o.now()
	out.State, out.Error = StateSucceeded, ""
	if err != nil {
		out.State, out.Error = StateFailed, err.Error()
	}
	return out, err
}

// Last returns the outcome of the last write (State "none" before any).
func (o *Op[P, R]) Last() Outcome[R] {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last.State == "" {
		return Outcome[R]{State: StateNone}
	}
	return o.last
}

// parse returns the one word of text; ErrInvalid when text holds no word,
// several, or one that is not in Words (the word is returned then, to
// record).
func (o *Op[P, R]) parse(text string) (string, error) {
	fields := strings.Fields(text)
	switch {
	case len(fields) == 0:
		return "", fmt.Errorf("%w: empty write, want one of %s", ErrInvalid, o.want())
	case len(fields) > 1:
		return "", fmt.Errorf("%w: %q: want one word of %s", ErrInvalid, strings.Join(fields, " "), o.want())
	case len(o.Words) > 0 && !slices.Contains(o.Words, fields[0]):
		return fields[0], fmt.Errorf("%w: unknown word %q, want one of %s", ErrInvalid, fields[0], o.want())
	}
	return fields[0], nil
}

func (o *Op[P, R]) want() string {
	if len(o.Words) == 0 {
		return "the operation's words"
	}
	return strings.Join(o.Words, ", ")
}

func (o *Op[P, R]) words() []string {
	if o.Words == nil {
		return []string{}
	}
	return o.Words
}

func (o *Op[P, R]) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now().UTC()
}
