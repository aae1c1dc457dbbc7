package failpoint

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// ErrInjected is the error of an "error" failpoint.
var ErrInjected = errors.New("failpoint: injected failure")

// Actions.
const (
	Kill      = "kill"
	Error     = "error"
	ErrorOnce = "error-once"
)

// Set is a parsed CAIRN_FAILPOINTS value. The zero value has no points.
type Set struct {
	mu      sync.Mutex
	actions map[string]string
	fired   map[string]bool
	// kill ends the process; tests replace it.
	kill func()
}

// Parse parses spec against the known point names. An empty spec gives
// an empty Set.
func Parse(spec string, known []string) (*Set, error) {
	s := &Set{actions: map[string]string{}, fired: map[string]bool{}, kill: killSelf}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, action, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("failpoint %q: want point=action", item)
		}
		if !slices.Contains(known, name) {
			return nil, fmt.Errorf("failpoint %q: unknown point (known: %s)", name, strings.Join(known, ", "))
		}
		switch action {
		case Kill, Error, ErrorOnce:
		default:
			return nil, fmt.Errorf("failpoint %q: unknown action %q (want kill, error or error-once)", name, action)
		}
		s.actions[name] = action
	}
	return s, nil
}

// Empty reports whether no point is set.
func (s *Set) Empty() bool { return s == nil || len(s.actions) == 0 }

// String lists the points set, for the start-up log line.
func (s *Set) String() string {
	if s.Empty() {
		return ""
	}
	var out []string
	for k, v := range s.actions {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// Hit runs the action of point, if any: it returns nil when the point is
// not set.
func (s *Set) Hit(point string) error {
	if s.Empty() {
		return nil
	}
	s.mu.Lock()
	action := s.actions[point]
	fired := s.fired[point]
	s.fired[point] = true
	kill := s.kill
	s.mu.Unlock()
	switch {
	case action == Kill:
		kill()
		return fmt.Errorf("%w: %s (kill did not stop the process)", ErrInjected, point)
	case action == Error, action == ErrorOnce && !fired:
		return fmt.Errorf("%w: %s", ErrInjected, point)
	}
	return nil
}

func killSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL is not delivered synchronously; never go on
}
