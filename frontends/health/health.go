package health

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/mux"
)

// Route paths, exported so that tests and callers need not repeat them.
const (
	LivePath  = "/health/live"
	ReadyPath = "/health/ready"
)

// DefaultCheckTimeout bounds one readiness check when Options.CheckTimeout
// is zero.
const DefaultCheckTimeout = 2 * time.Second

// Check reports whether the server can take traffic: nil means ready. It
// receives the request's context, bounded by the check timeout, and may be
// called concurrently.
type Check func(ctx context.Context) error

// Options configures the probes.
type Options struct {
	// Ready is the readiness check; nil means always ready.
	Ready Check
	// CheckTimeout bounds one call of Ready; zero means DefaultCheckTimeout.
	CheckTimeout time.Duration
}

// status is the JSON body of every probe response.
type status struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Register adds the liveness and readiness routes to r.
func Register(r *mux.Router, opt Options) {
	if opt.CheckTimeout <= 0 {
		opt.CheckTimeout = DefaultCheckTimeout
	}
	r.HandleFunc(LivePath, live).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc(ReadyPath, ready(opt)).Methods(http.MethodGet, http.MethodHead)
}

func live(w http.ResponseWriter, r *http.Request) {
	write(w, r, http.StatusOK, status{Status: "ok"})
}

func ready(opt Options) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if opt.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), opt.CheckTimeout)
			err := opt.Ready(ctx)
			cancel()
			if err != nil {
				write(w, r, http.StatusServiceUnavailable, status{Status: "not ready", Error: err.Error()})
				return
			}
		}
		write(w, r, http.StatusOK, status{Status: "ready"})
	}
}

func write(w http.ResponseWriter, r *http.Request, code int, body status) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if r.Method == http.MethodHead {
		return
	}
	// The client may have gone away; there is no one left to tell.
	_ = json.NewEncoder(w).Encode(body)
}
