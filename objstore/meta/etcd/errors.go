package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Errors of the etcd index, besides meta's. Callers match them with
// errors.Is.
var (
	// ErrUnavailable means the cluster could not be reached, or could not
	// answer (no leader, a request timed out) within the request timeout:
	// the index is there but not now. A store maps it to 503 and EIO.
	// Nothing was committed, unless the error also wraps
	// ErrOutcomeUnknown.
	ErrUnavailable = fmt.Errorf("etcd: cluster unavailable: %w", meta.ErrUnavailable)
	// ErrOutcomeUnknown means an Update's commit was sent but the cluster
	// became unreachable before its answer, and stayed so while the index
	// tried to learn what happened: the transaction may or may not have
	// committed. It always comes wrapped with ErrUnavailable. A caller must
	// not undo what a committed transaction would reference (data files)
	// on this error.
	ErrOutcomeUnknown = fmt.Errorf("etcd: %w", meta.ErrOutcomeUnknown)
	// ErrConflict means an Update lost to concurrent writers of the same
	// store MaxAttempts times in a row; nothing of it was committed. It
	// wraps meta.ErrBusy.
	ErrConflict = fmt.Errorf("etcd: too many conflicting transactions: %w", meta.ErrBusy)
)

// errCompacted marks a read at a revision the cluster has compacted away:
// an Update starts again at a new one.
var errCompacted = errors.New("etcd: snapshot revision compacted")

// wrap turns an error of the etcd client into the index's: ctx's error
// when the caller's context ended, ErrUnavailable when the cluster did
// not answer in time, meta.ErrTxTooLarge when it refused the
// transaction's size.
func wrap(ctx context.Context, what string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("etcd: %s: %w", what, cerr)
	}
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%w: %s: %w", errCompacted, what, err)
	case errors.Is(err, rpctypes.ErrTooManyOps), errors.Is(err, rpctypes.ErrRequestTooLarge), tooBigForGRPC(err):
		return fmt.Errorf("%w: %s: %w", meta.ErrTxTooLarge, what, err)
	case unavailable(err):
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
	}
	return fmt.Errorf("etcd: %s: %w", what, err)
}

// tooBigForGRPC reports whether err is gRPC's refusal of a message over
// the server's receive bound (--max-request-bytes plus 512 KiB).
func tooBigForGRPC(err error) bool {
	return code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "larger than max")
}

// unavailable reports whether err says the cluster did not answer: a
// timeout of the index's own (the caller's context is still live), a
// connection that failed, or a cluster without a leader.
func unavailable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	switch code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}

// ambiguous reports whether a commit that failed with err may have been
// applied all the same: the request may have reached the cluster. A
// refusal by the cluster (too large, permission denied) is not.
func ambiguous(err error) bool {
	if unavailable(err) {
		return true
	}
	switch code(err) {
	case codes.Unknown, codes.Internal:
		return true
	}
	return false
}

// code returns err's gRPC code, as the server or the client's own
// conversion set it.
func code(err error) codes.Code {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code()
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return codes.Unknown
}
