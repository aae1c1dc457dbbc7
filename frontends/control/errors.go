package control

import (
	"context"
	"errors"
	"net/http"
	"syscall"
)

// Sentinel errors of control operations. An operation returns an error
// wrapping one of them (fmt.Errorf("%w: ...")) and a face maps it once:
// Errno for the mount, HTTPStatus for HTTP.
var (
	// ErrBusy: the operation cannot run now, e.g. a fence is held or
	// another run of it is in progress. EBUSY, 409.
	ErrBusy = errors.New("control: busy")
	// ErrDenied: the caller may not run the operation. EACCES, 403.
	ErrDenied = errors.New("control: permission denied")
	// ErrInvalid: the request is malformed, e.g. an unknown word was
	// written. EINVAL, 400.
	ErrInvalid = errors.New("control: invalid request")
	// ErrNotFound: no such control file, or the thing it is about (a
	// warehouse, say) does not exist. ENOENT, 404.
	ErrNotFound = errors.New("control: not found")
	// ErrUnsupported: the file takes no writes (or no reads). EPERM, 405.
	ErrUnsupported = errors.New("control: operation not supported")
)

// sentinels lists every sentinel, for the mapping tests.
func sentinels() []error {
	return []error{ErrBusy, ErrDenied, ErrInvalid, ErrNotFound, ErrUnsupported}
}

// WrapsSentinel reports whether err wraps one of the sentinels above, so
// that a translation of another package's errors (catalogctl's) can leave
// errors already mapped as they are.
func WrapsSentinel(err error) bool {
	for _, s := range sentinels() {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// Errno maps an error of a control operation to the errno the mount
// returns: the sentinels as documented, a cancelled context to EINTR, a
// deadline to ETIMEDOUT, a wrapped syscall.Errno to itself, nil to 0 and
// anything else to EIO. It is the only errno mapping of control errors.
func Errno(err error) syscall.Errno {
	var errno syscall.Errno
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrBusy):
		return syscall.EBUSY
	case errors.Is(err, ErrDenied):
		return syscall.EACCES
	case errors.Is(err, ErrInvalid):
		return syscall.EINVAL
	case errors.Is(err, ErrNotFound):
		return syscall.ENOENT
	case errors.Is(err, ErrUnsupported):
		return syscall.EPERM
	case errors.Is(err, context.Canceled):
		return syscall.EINTR
	case errors.Is(err, context.DeadlineExceeded):
		return syscall.ETIMEDOUT
	case errors.As(err, &errno) && errno != 0:
		return errno
	}
	return syscall.EIO
}

// HTTPStatus maps an error of a control operation to the HTTP status an
// HTTP face answers with: the sentinels as documented, a cancelled or
// expired context to 503, nil to 200 and anything else to 500.
func HTTPStatus(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrBusy):
		return http.StatusConflict
	case errors.Is(err, ErrDenied):
		return http.StatusForbidden
	case errors.Is(err, ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrUnsupported):
		return http.StatusMethodNotAllowed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
