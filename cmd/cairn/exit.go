package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cairnstore/cairn/objstore"
)

// Exit codes, in the grep/fsck tradition: 1 means "ran fine, found
// something", 2 means "could not do the job".
const (
	exitOK          = 0
	exitProblems    = 1   // fsck found problems; heal left something broken
	exitError       = 2   // bad command line, bad options, or the run failed
	exitInterrupted = 130 // SIGINT/SIGTERM stopped an offline tool
)

var (
	// errUsage marks a command line the parser rejected.
	errUsage = errors.New("usage")
	// errProblems marks a run that worked and found damage.
	errProblems = errors.New("problems found")
)

// usageError is a rejected command line; it wraps errUsage.
type usageError struct {
	cmd string // "serve", "admin fsck", or "" before a command was known
	msg string
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return errUsage }

func usageErrorf(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// exitRule maps the errors matching err (errors.Is) to an exit code and an
// optional hint printed under the message.
type exitRule struct {
	err  error
	code int
	hint string
}

// exitRules is the one table of error -> exit code. The first match wins.
// Every objstore sentinel is listed (exit_test.go checks it), so adding a
// sentinel means deciding here what an operator should be told.
func exitRules() []exitRule {
	const usageHint = "run 'cairn help' or 'cairn COMMAND -h' for usage"
	const repairHint = "run 'cairn admin fsck' on the stopped server to see the damage, 'cairn admin heal' to repair it"
	return []exitRule{
		{errUsage, exitError, usageHint},
		{errProblems, exitProblems, ""},
		{context.Canceled, exitInterrupted, ""},
		{context.DeadlineExceeded, exitError, ""},

		{objstore.ErrInvalidArgument, exitError, usageHint},
		{objstore.ErrQuorumLost, exitError, "too few drives answered; check that every --drive path (or DIR/drives/dN) is mounted and readable"},
		{objstore.ErrDataCorrupt, exitError, repairHint},
		{objstore.ErrClosed, exitError, ""},
		{objstore.ErrTooManyChanges, exitError, "the operation changes more keys than the index takes at once; change fewer keys per request"},
		{objstore.ErrInternal, exitError, "this is a bug in cairn; please report it with the log above"},
		// Request-level errors: the faces map these for clients; a command
		// that meets one just fails.
		{objstore.ErrInvalidBucketName, exitError, ""},
		{objstore.ErrBucketExists, exitError, ""},
		{objstore.ErrNoSuchBucket, exitError, ""},
		{objstore.ErrBucketNotEmpty, exitError, ""},
		{objstore.ErrInvalidKey, exitError, ""},
		{objstore.ErrNoSuchKey, exitError, ""},
		{objstore.ErrNoSuchVersion, exitError, ""},
		{objstore.ErrDeleteMarker, exitError, ""},
		{objstore.ErrPreconditionFailed, exitError, ""},
		{objstore.ErrInvalidRange, exitError, ""},
		{objstore.ErrNoSuchUpload, exitError, ""},
		{objstore.ErrInvalidPartNumber, exitError, ""},
		{objstore.ErrInvalidPart, exitError, ""},
		{objstore.ErrInvalidPartOrder, exitError, ""},
		{objstore.ErrEntityTooSmall, exitError, ""},
		{objstore.ErrIncompleteBody, exitError, ""},
		{objstore.ErrBadDigest, exitError, ""},
		{objstore.ErrObjectLocked, exitError, ""},
		{objstore.ErrInvalidBucketState, exitError, ""},
		{objstore.ErrInvalidWriteOffset, exitError, ""},
		{objstore.ErrTooManySegments, exitError, ""},
		{objstore.ErrNotAppendable, exitError, ""},
	}
}

// exitStatus maps err from command name to an exit code and the message
// for stderr ("" when there is nothing to say).
func exitStatus(name string, err error) (int, string) {
	if err == nil {
		return exitOK, ""
	}
	var ue *usageError
	if errors.As(err, &ue) {
		name = ue.cmd
	}
	prefix := "cairn"
	if name != "" {
		prefix += " " + name
	}
	code, hint := exitError, ""
	for _, r := range exitRules() {
		if errors.Is(err, r.err) {
			code, hint = r.code, r.hint
			break
		}
	}
	msg := prefix + ": " + err.Error()
	if code == exitInterrupted {
		msg = prefix + ": interrupted"
	}
	if hint != "" {
		msg += "\n" + hint
	}
	return code, msg
}

// exit prints the message for err on w and returns the exit code.
func exit(w io.Writer, name string, err error) int {
	code, msg := exitStatus(name, err)
	if msg != "" {
		_, _ = fmt.Fprintln(w, msg)
	}
	return code
}
