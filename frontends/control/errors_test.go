package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"syscall"
	"testing"
)

func TestErrno(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want syscall.Errno
		http int
	}{
		{nil, 0, http.StatusOK},
		{ErrBusy, syscall.EBUSY, http.StatusConflict},
		{fmt.Errorf("%w: fence held by m1", ErrBusy), syscall.EBUSY, http.StatusConflict},
		{ErrDenied, syscall.EACCES, http.StatusForbidden},
		{fmt.Errorf("materialize: %w", ErrInvalid), syscall.EINVAL, http.StatusBadRequest},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", ErrNotFound)), syscall.ENOENT, http.StatusNotFound},
		{ErrUnsupported, syscall.EPERM, http.StatusMethodNotAllowed},
		{context.Canceled, syscall.EINTR, http.StatusServiceUnavailable},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), syscall.ETIMEDOUT, http.StatusServiceUnavailable},
		{&fs.PathError{Op: "open", Path: "p", Err: syscall.ENOSPC}, syscall.ENOSPC, http.StatusInternalServerError},
		{errors.New("disk on fire"), syscall.EIO, http.StatusInternalServerError},
		{syscall.Errno(0), syscall.EIO, http.StatusInternalServerError},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.err), func(t *testing.T) {
			if got := Errno(tc.err); got != tc.want {
				t.Errorf("Errno = %v, want %v", got, tc.want)
			}
			if got := HTTPStatus(tc.err); got != tc.http {
				t.Errorf("HTTPStatus = %d, want %d", got, tc.http)
			}
		})
	}
}

// Every sentinel has its own errno and status: none falls through to EIO
// or 500, and no two share one.
func TestSentinelsMapped(t *testing.T) {
	t.Parallel()
	errnos, statuses := map[syscall.Errno]error{}, map[int]error{}
	for _, s := range sentinels() {
		e, h := Errno(s), HTTPStatus(s)
		if e == syscall.EIO || e == 0 || h == http.StatusInternalServerError || h == http.StatusOK {
			t.Errorf("%v is not mapped: %v, %d", s, e, h)
		}
		if o, ok := errnos[e]; ok {
			t.Errorf("%v and %v share errno %v", s, o, e)
		}
		if o, ok := statuses[h]; ok {
			t.Errorf("%v and %v share status %d", s, o, h)
		}
		errnos[e], statuses[h] = s, s
	}
}

func TestWrapsSentinel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("disk on fire"), false},
		{context.Canceled, false},
		{fmt.Errorf("%w: fence held", ErrBusy), true},
		{fmt.Errorf("outer: %w", fmt.Errorf("%w: w1", ErrNotFound)), true},
		{fmt.Errorf("%w: %w", ErrInvalid, errors.New("bad word")), true},
	}
	for _, s := range sentinels() {
		tests = append(tests, struct {
			err  error
			want bool
		}{s, true})
	}
	for _, tc := range tests {
		if got := WrapsSentinel(tc.err); got != tc.want {
			t.Errorf("WrapsSentinel(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
