package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"syscall"

	"github.com/cairnstore/cairn/objstore/drive"
)

// ErrAuth means the peer refused the request's authentication: the
// secrets differ, or the clocks are more than MaxSkew apart.
var ErrAuth = errors.New("peer: authentication failed")

// ErrUnreachable means the peer could not be asked or did not answer: the
// connection failed or broke, the peer stalled past Config.Timeout, an
// answer was cut short, or the peer does not serve the slot. The store
// treats the drive as failed.
var ErrUnreachable = errors.New("peer: drive unreachable")

// The codes of the error body {"code": ..., "message": ...} and the status
// each comes with. Errors of a stream's ShardWriter surface at its Close.
const (
	codeNotExist    = "not-exist"    // 404: wraps fs.ErrNotExist on the client
	codeInvalidName = "invalid-name" // 400: drive.ErrInvalidName
	codeNoSpace     = "no-space"     // 507: syscall.ENOSPC
	codeAuth        = "auth"         // 401: ErrAuth
	codeNoDrive     = "no-drive"     // 404: ErrUnreachable (the peer does not serve the slot)
	codeBadRequest  = "bad-request"  // 400: a request this server does not understand
	codeTooLarge    = "too-large"    // 413: a body or list past the limits
	codeCanceled    = "canceled"     // 503: the server's context ended
	codeInternal    = "internal"     // 500: any other error of the local drive
)

// authMessage is all a refused request learns.
const authMessage = "peer authentication failed"

// Server-side errors of requests, mapped to codes by errorCode.
var (
	errBadRequest = errors.New("bad request")
	errTooLarge   = errors.New("request too large")
	errNoDrive    = errors.New("slot not served here")
)

// wireError is the JSON body of an error answer.
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// errorCode maps a server-side error to its code and status.
func errorCode(err error) (string, int) {
	switch {
	case errors.Is(err, drive.ErrInvalidName):
		return codeInvalidName, http.StatusBadRequest
	case errors.Is(err, errNoDrive):
		return codeNoDrive, http.StatusNotFound
	case errors.Is(err, fs.ErrNotExist):
		return codeNotExist, http.StatusNotFound
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return codeNoSpace, http.StatusInsufficientStorage
	case errors.Is(err, errBadRequest), errors.Is(err, errCut):
		return codeBadRequest, http.StatusBadRequest
	case errors.Is(err, errTooLarge):
		return codeTooLarge, http.StatusRequestEntityTooLarge
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return codeCanceled, http.StatusServiceUnavailable
	default:
		return codeInternal, http.StatusInternalServerError
	}
}

// writeError answers err as a JSON error body with its status.
func writeError(w http.ResponseWriter, err error) {
	code, status := errorCode(err)
	writeErrorCode(w, code, status, err.Error())
}

func writeErrorCode(w http.ResponseWriter, code string, status int, msg string) {
	body, _ := json.Marshal(wireError{Code: code, Message: msg})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", fmt.Sprint(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// RemoteError is an error the peer answered. Its Unwrap gives the
// sentinel its code stands for (fs.ErrNotExist, drive.ErrInvalidName,
// syscall.ENOSPC, ErrAuth, ErrUnreachable), nil for the others.
type RemoteError struct {
	Peer    string // the drive's description
	Status  int    // the HTTP status
	Code    string // the error code ("internal" for an answer without one)
	Message string // the peer's message
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Peer, e.Message, e.Code)
}

// Unwrap returns the sentinel of the error's code.
func (e *RemoteError) Unwrap() error {
	switch e.Code {
	case codeNotExist:
		return fs.ErrNotExist
	case codeInvalidName:
		return drive.ErrInvalidName
	case codeNoSpace:
		return syscall.ENOSPC
	case codeAuth:
		return ErrAuth
	case codeNoDrive:
		return ErrUnreachable
	}
	return nil
}

// maxErrorBody bounds how much of an error answer the client reads.
const maxErrorBody = 64 << 10

// remoteError reads the error answer resp (not 2xx) and closes its body.
// An answer that is not one of ours (a proxy's page) is an internal error
// with its status, or ErrUnreachable for a gateway's 502, 503 or 504.
func remoteError(peer string, resp *http.Response) error {
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var we wireError
	if err := json.Unmarshal(raw, &we); err == nil && we.Code != "" {
		if we.Code == codeAuth {
			we.Message = authMessage
		}
		return &RemoteError{Peer: peer, Status: resp.StatusCode, Code: we.Code, Message: we.Message}
	}
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fmt.Errorf("%s: %w: %s", peer, ErrUnreachable, resp.Status)
	case http.StatusUnauthorized:
		return &RemoteError{Peer: peer, Status: resp.StatusCode, Code: codeAuth, Message: authMessage}
	}
	return &RemoteError{Peer: peer, Status: resp.StatusCode, Code: codeInternal, Message: "unexpected answer " + resp.Status}
}
