package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRecorder(t *testing.T) {
	tests := []struct {
		name       string
		do         func(r *Recorder)
		wantStatus int
		wantBytes  int64
		wantWrote  bool
	}{
		{"nothing", func(*Recorder) {}, http.StatusOK, 0, false},
		{"body only", func(r *Recorder) { _, _ = r.Write([]byte("abc")) }, http.StatusOK, 3, true},
		{"status then body", func(r *Recorder) {
			r.WriteHeader(http.StatusNotFound)
			_, _ = r.Write([]byte("no"))
		}, http.StatusNotFound, 2, true},
		{"second status ignored", func(r *Recorder) {
			r.WriteHeader(http.StatusConflict)
			r.WriteHeader(http.StatusOK)
		}, http.StatusConflict, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := NewRecorder(w)
			tt.do(r)
			r.Flush()
			if r.Status != tt.wantStatus || r.Bytes != tt.wantBytes || r.Wrote() != tt.wantWrote {
				t.Fatalf("status %d bytes %d wrote %v, want %d %d %v", r.Status, r.Bytes, r.Wrote(), tt.wantStatus, tt.wantBytes, tt.wantWrote)
			}
			if tt.wantWrote && w.Code != tt.wantStatus {
				t.Fatalf("sent %d, want %d", w.Code, tt.wantStatus)
			}
		})
	}
}
