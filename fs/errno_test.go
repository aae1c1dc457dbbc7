package fs

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

func TestErrnoOf(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("put b/k: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want syscall.Errno
	}{
		{"nil", nil, 0},
		{"no such key", wrap(objstore.ErrNoSuchKey), syscall.ENOENT},
		{"no such bucket", wrap(objstore.ErrNoSuchBucket), syscall.ENOENT},
		{"no such version", wrap(objstore.ErrNoSuchVersion), syscall.ENOENT},
		{"delete marker", wrap(objstore.ErrDeleteMarker), syscall.ENOENT},
		{"precondition failed", wrap(objstore.ErrPreconditionFailed), syscall.EEXIST},
		{"bucket exists", wrap(objstore.ErrBucketExists), syscall.EEXIST},
		{"bucket not empty", wrap(objstore.ErrBucketNotEmpty), syscall.ENOTEMPTY},
		{"invalid key", wrap(objstore.ErrInvalidKey), syscall.EINVAL},
		{"invalid bucket name", wrap(objstore.ErrInvalidBucketName), syscall.EINVAL},
		{"invalid argument", wrap(objstore.ErrInvalidArgument), syscall.EINVAL},
		{"invalid range", wrap(objstore.ErrInvalidRange), syscall.EINVAL},
		{"incomplete body", wrap(objstore.ErrIncompleteBody), syscall.EIO},
		{"bad digest", wrap(objstore.ErrBadDigest), syscall.EIO},
		{"quorum lost", wrap(objstore.ErrQuorumLost), syscall.EIO},
		{"data corrupt", wrap(objstore.ErrDataCorrupt), syscall.EIO},
		{"internal", wrap(objstore.ErrInternal), syscall.EIO},
		{"closed", wrap(objstore.ErrClosed), syscall.EIO},
		{"bare sentinel", objstore.ErrNoSuchKey, syscall.ENOENT},
		{"doubly wrapped", wrap(wrap(objstore.ErrBucketNotEmpty)), syscall.ENOTEMPTY},
		{"part error", wrap(&objstore.PartError{Number: 2, Err: objstore.ErrInvalidPart}), syscall.EIO},
		// A full drive keeps its ENOSPC even when it cost the quorum.
		{"ENOSPC inside quorum lost", fmt.Errorf("%w: %w", objstore.ErrQuorumLost,
			&os.PathError{Op: "write", Path: "/d1/x", Err: syscall.ENOSPC}), syscall.ENOSPC},
		{"ENOSPC after quorum lost", fmt.Errorf("%w: %w", syscall.ENOSPC, objstore.ErrQuorumLost), syscall.ENOSPC},
		{"EDQUOT is ENOSPC", wrap(&os.PathError{Op: "write", Path: "/tmp/stage", Err: syscall.EDQUOT}), syscall.ENOSPC},
		{"bare ENOSPC", syscall.ENOSPC, syscall.ENOSPC},
		{"EACCES in a PathError", &os.PathError{Op: "open", Path: "/tmp/stage-1", Err: syscall.EACCES}, syscall.EACCES},
		{"wrapped EROFS", wrap(&os.PathError{Op: "open", Path: "/x", Err: syscall.EROFS}), syscall.EROFS},
		{"bare EPERM", syscall.EPERM, syscall.EPERM},
		// A sentinel wins over an errno it wraps.
		{"quorum lost over EROFS", fmt.Errorf("%w: %w", objstore.ErrQuorumLost, syscall.EROFS), syscall.EIO},
		{"canceled", context.Canceled, syscall.EINTR},
		{"wrapped canceled", wrap(context.Canceled), syscall.EINTR},
		{"deadline", wrap(context.DeadlineExceeded), syscall.EINTR},
		{"unknown", errors.New("something else"), syscall.EIO},
		{"wrapped unknown", wrap(errors.New("something else")), syscall.EIO},
		{"os.ErrNotExist without errno", wrap(os.ErrNotExist), syscall.EIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errnoOf(tc.err); got != tc.want {
				t.Errorf("errnoOf(%v) = %v (%d), want %v (%d)", tc.err, got, int(got), tc.want, int(tc.want))
			}
		})
	}
}

// objstoreSentinelNames parses objstore/errors.go for the exported
// `ErrX = errors.New(...)` sentinels.
func objstoreSentinelNames(t *testing.T) []string {
	t.Helper()
	path := filepath.Join("..", "objstore", "errors.go")
	af, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(af, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for _, name := range vs.Names {
			if strings.HasPrefix(name.Name, "Err") && name.IsExported() {
				names = append(names, name.Name)
			}
		}
		return true
	})
	if len(names) == 0 {
		t.Fatalf("no Err* sentinels found in %s", path)
	}
	return names
}

// Every sentinel of the store has a row in errnoTable, except those that
// are meant to fall through to EIO: a sentinel added to objstore fails
// this test until it is mapped in errno.go or listed in fallsToEIO.
func TestErrnoTableCoversSentinels(t *testing.T) {
	known := map[string]error{
		"ErrInvalidArgument": objstore.ErrInvalidArgument, "ErrInvalidBucketName": objstore.ErrInvalidBucketName,
		"ErrBucketExists": objstore.ErrBucketExists, "ErrNoSuchBucket": objstore.ErrNoSuchBucket,
		"ErrBucketNotEmpty": objstore.ErrBucketNotEmpty, "ErrInvalidKey": objstore.ErrInvalidKey,
		"ErrNoSuchKey": objstore.ErrNoSuchKey, "ErrNoSuchVersion": objstore.ErrNoSuchVersion,
		"ErrDeleteMarker": objstore.ErrDeleteMarker, "ErrPreconditionFailed": objstore.ErrPreconditionFailed,
		"ErrInvalidRange": objstore.ErrInvalidRange, "ErrNoSuchUpload": objstore.ErrNoSuchUpload,
		"ErrInvalidPartNumber": objstore.ErrInvalidPartNumber, "ErrInvalidPart": objstore.ErrInvalidPart,
		"ErrInvalidPartOrder": objstore.ErrInvalidPartOrder, "ErrEntityTooSmall": objstore.ErrEntityTooSmall,
		"ErrIncompleteBody": objstore.ErrIncompleteBody, "ErrBadDigest": objstore.ErrBadDigest,
		"ErrQuorumLost": objstore.ErrQuorumLost, "ErrDataCorrupt": objstore.ErrDataCorrupt,
		"ErrInternal": objstore.ErrInternal, "ErrClosed": objstore.ErrClosed,
		"ErrTooManyChanges": objstore.ErrTooManyChanges,
		"ErrObjectLocked":   objstore.ErrObjectLocked, "ErrInvalidBucketState": objstore.ErrInvalidBucketState,
		"ErrInvalidWriteOffset": objstore.ErrInvalidWriteOffset, "ErrTooManySegments": objstore.ErrTooManySegments,
		"ErrNotAppendable": objstore.ErrNotAppendable, "ErrUnavailable": objstore.ErrUnavailable, "ErrBusy": objstore.ErrBusy,
	}
	// The multipart sentinels: the mount never makes multipart uploads
	// (it writes whole objects with Put), so meeting one is a bug of the
	// mount and EIO is the honest answer.
	fallsToEIO := map[string]bool{
		"ErrNoSuchUpload": true, "ErrInvalidPartNumber": true, "ErrInvalidPart": true,
		"ErrInvalidPartOrder": true, "ErrEntityTooSmall": true,
	}
	table := errnoTable()
	for _, name := range objstoreSentinelNames(t) {
		err, ok := known[name]
		if !ok {
			t.Errorf("objstore.%s is new: list it in this test and map it in errno.go (or list it in fallsToEIO)", name)
			continue
		}
		var row *errnoMapping
		for i := range table {
			if table[i].err == err {
				row = &table[i]
				break
			}
		}
		got := errnoOf(fmt.Errorf("wrapped: %w", err))
		switch {
		case fallsToEIO[name] && row != nil:
			t.Errorf("objstore.%s is mapped to %v: remove it from fallsToEIO", name, row.errno)
		case fallsToEIO[name] && got != syscall.EIO:
			t.Errorf("objstore.%s: errnoOf = %v, want the EIO fallback", name, got)
		case !fallsToEIO[name] && row == nil:
			t.Errorf("objstore.%s has no row in errnoTable", name)
		case row != nil && got != row.errno:
			// An earlier row matching through errors.Is shadows it.
			t.Errorf("objstore.%s: errnoOf = %v, but its row says %v", name, got, row.errno)
		}
	}
	for _, m := range table {
		if m.err == nil || m.errno == 0 {
			t.Errorf("errnoTable row %v -> %d maps to or from nothing", m.err, m.errno)
		}
	}
}
