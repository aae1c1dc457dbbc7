package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/cairnstore/cairn/frontends/health"
)

func TestProbes(t *testing.T) {
	errDown := errors.New("index not open")
	blocking := func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}
	tests := []struct {
		name       string
		opt        health.Options
		method     string
		path       string
		wantCode   int
		wantStatus string // "" when no JSON body is expected
		wantError  string
	}{
		{name: "live", method: http.MethodGet, path: health.LivePath, wantCode: 200, wantStatus: "ok"},
		{name: "live while not ready", opt: health.Options{Ready: func(context.Context) error { return errDown }},
			method: http.MethodGet, path: health.LivePath, wantCode: 200, wantStatus: "ok"},
		{name: "ready without check", method: http.MethodGet, path: health.ReadyPath, wantCode: 200, wantStatus: "ready"},
		{name: "ready", opt: health.Options{Ready: func(context.Context) error { return nil }},
			method: http.MethodGet, path: health.ReadyPath, wantCode: 200, wantStatus: "ready"},
		{name: "not ready", opt: health.Options{Ready: func(context.Context) error { return errDown }},
			method: http.MethodGet, path: health.ReadyPath, wantCode: 503, wantStatus: "not ready", wantError: "index not open"},
		{name: "check times out", opt: health.Options{Ready: blocking, CheckTimeout: 10 * time.Millisecond},
			method: http.MethodGet, path: health.ReadyPath, wantCode: 503, wantStatus: "not ready", wantError: context.DeadlineExceeded.Error()},
		{name: "head ready", method: http.MethodHead, path: health.ReadyPath, wantCode: 200},
		{name: "head not ready", opt: health.Options{Ready: func(context.Context) error { return errDown }},
			method: http.MethodHead, path: health.ReadyPath, wantCode: 503},
		{name: "post refused", method: http.MethodPost, path: health.LivePath, wantCode: 405},
		{name: "unknown path", method: http.MethodGet, path: "/health/other", wantCode: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mux.NewRouter()
			health.Register(r, tt.opt)
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))

			if rec.Code != tt.wantCode {
				t.Fatalf("status %d, want %d (body %q)", rec.Code, tt.wantCode, rec.Body.String())
			}
			if tt.wantStatus == "" {
				if tt.method == http.MethodHead && rec.Body.Len() != 0 {
					t.Fatalf("HEAD answered with a body: %q", rec.Body.String())
				}
				return
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			var body struct {
				Status string `json:"status"`
				Error  string `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q is not JSON: %v", rec.Body.String(), err)
			}
			if body.Status != tt.wantStatus || body.Error != tt.wantError {
				t.Fatalf("body %+v, want status %q error %q", body, tt.wantStatus, tt.wantError)
			}
		})
	}
}

func TestReadyPassesRequestContext(t *testing.T) {
	type key struct{}
	var seen any
	r := mux.NewRouter()
	health.Register(r, health.Options{Ready: func(ctx context.Context) error {
		seen = ctx.Value(key{})
		if _, ok := ctx.Deadline(); !ok {
			return errors.New("no deadline on the check context")
		}
		return nil
	}})
	req := httptest.NewRequest(http.MethodGet, health.ReadyPath, nil)
	req = req.WithContext(context.WithValue(req.Context(), key{}, "v"))
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || seen != "v" {
		t.Fatalf("status %d, context value %v; want 200 and the request's context", rec.Code, seen)
	}
}
