package s3

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cairnstore/cairn/frontends/s3/sigv2"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
	"github.com/cairnstore/cairn/objstore"
)

// sentinelNames parses a package directory for `ErrX = errors.New(...)`.
func sentinelNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if filepath.Ext(f) != ".go" || len(f) > 8 && f[len(f)-8:] == "_test.go" {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if call, ok := vs.Values[i].(*ast.CallExpr); ok {
						if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" && len(name.Name) > 3 && name.Name[:3] == "Err" {
							names = append(names, name.Name)
						}
					}
				}
			}
			return true
		})
	}
	return names
}

// Every sentinel of the store, sigv4 and sigv2 has an S3 mapping other than
// the InternalError fallback (the store's own internal errors excepted). A
// sentinel added to either package fails this test until it is listed
// below and mapped in errors.go.
func TestErrorTablesCoverSentinels(t *testing.T) {
	for _, tc := range []struct {
		dir      string
		known    map[string]error
		internal map[string]bool
	}{
		{"../../objstore", objstoreSentinels(), map[string]bool{"ErrInternal": true, "ErrDataCorrupt": true}},
		{"sigv4", sigv4Sentinels(), nil},
		{"sigv2", sigv2Sentinels(), nil},
	} {
		for _, name := range sentinelNames(t, tc.dir) {
			err, ok := tc.known[name]
			if !ok {
				t.Errorf("%s: %s is new: list it in this test and map it in errors.go", tc.dir, name)
				continue
			}
			if api := toAPIError(fmt.Errorf("wrapped: %w", err)); api.Code == "InternalError" && !tc.internal[name] {
				t.Errorf("%s: %s maps to the InternalError fallback", tc.dir, name)
			}
		}
	}
}

func objstoreSentinels() map[string]error {
	return map[string]error{
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
		"ErrNotAppendable": objstore.ErrNotAppendable,
	}
}

func sigv2Sentinels() map[string]error {
	return map[string]error{
		"ErrMalformedAuth": sigv2.ErrMalformedAuth, "ErrMalformedQuery": sigv2.ErrMalformedQuery,
		"ErrMissingDate": sigv2.ErrMissingDate, "ErrUnknownAccessKey": sigv2.ErrUnknownAccessKey,
		"ErrSignatureMismatch": sigv2.ErrSignatureMismatch, "ErrTimeSkewed": sigv2.ErrTimeSkewed,
		"ErrExpired": sigv2.ErrExpired,
	}
}

func sigv4Sentinels() map[string]error {
	return map[string]error{
		"ErrMissingAuth": sigv4.ErrMissingAuth, "ErrMalformedAuth": sigv4.ErrMalformedAuth,
		"ErrUnsupportedAlgorithm": sigv4.ErrUnsupportedAlgorithm, "ErrUnknownAccessKey": sigv4.ErrUnknownAccessKey,
		"ErrSignatureMismatch": sigv4.ErrSignatureMismatch, "ErrTimeSkewed": sigv4.ErrTimeSkewed,
		"ErrExpired": sigv4.ErrExpired, "ErrExpiresRange": sigv4.ErrExpiresRange, "ErrContentSHA256Mismatch": sigv4.ErrContentSHA256Mismatch,
		"ErrChecksumMismatch": sigv4.ErrChecksumMismatch, "ErrInvalidChecksum": sigv4.ErrInvalidChecksum,
		"ErrMalformedChunk": sigv4.ErrMalformedChunk, "ErrIncompleteBody": sigv4.ErrIncompleteBody,
	}
}

func TestToAPIError(t *testing.T) {
	full := &fs.PathError{Op: "write", Path: "/d0/data/ab/x", Err: syscall.ENOSPC}
	for _, tc := range []struct {
		name   string
		err    error
		code   string
		status int
	}{
		{"part error maps to its cause", &objstore.PartError{Number: 3, Err: fmt.Errorf("%w: 10 bytes", objstore.ErrEntityTooSmall)}, "EntityTooSmall", 400},
		{"unknown error", errors.New("boom"), "InternalError", 500},
		{"quorum lost", fmt.Errorf("%w: 2 of 4 drives", objstore.ErrQuorumLost), "SlowDown", 503},
		{"quorum lost to full drives", fmt.Errorf("%w: %w", objstore.ErrQuorumLost, errors.Join(full, full)), "InsufficientStorage", 507},
		{"full drive in a part", &objstore.PartError{Number: 1, Err: full}, "InsufficientStorage", 507},
		{"quota", fmt.Errorf("commit: %w", syscall.EDQUOT), "InsufficientStorage", 507},
		{"one full drive, two broken", fmt.Errorf("%w: %w", objstore.ErrQuorumLost, errors.Join(full, &fs.PathError{Op: "write", Path: "/d1/x", Err: syscall.EIO}, syscall.EIO)), "SlowDown", 503},
		{"cancelled", fmt.Errorf("read body: %w", context.Canceled), "RequestTimeout", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if api := toAPIError(tc.err); api.Code != tc.code || api.Status != tc.status {
				t.Fatalf("got %+v, want %s %d", api, tc.code, tc.status)
			}
		})
	}
}
