package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

// internalMarkers are texts of the backing and the store that a client
// must never read (the log keeps them).
var internalMarkers = []string{".cairn.sys", "record not found", "version conflict", "no such key", "backing:", "objectbacked:", "strong:"}

// TestClientMessageOfRealErrors runs requests that fail on both backings
// and checks that the client's message keeps the catalog's words (the
// sentinel and the name) and drops the backing's and the store's.
func TestClientMessageOfRealErrors(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			e := &env{t: t, dir: t.TempDir(), durable: durable}
			e.open()
			ctx := context.Background()
			if _, err := e.svc.CreateWarehouse(ctx, "lake"); err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name     string
				sentinel error
				want     string // a word of the catalog's that must stay
				call     func() error
			}{
				{"unknown warehouse", catalog.ErrNoSuchWarehouse, "nope", func() error {
					_, err := e.svc.GetWarehouse(ctx, "nope")
					return err
				}},
				{"unknown namespace", catalog.ErrNoSuchNamespace, "ghost", func() error {
					_, err := e.svc.LoadNamespace(ctx, "lake", []string{"ghost"})
					return err
				}},
				{"namespace twice", catalog.ErrAlreadyExists, "twice", func() error {
					if err := e.svc.CreateNamespace(ctx, "lake", []string{"twice"}, nil); err != nil {
						return err
					}
					return e.svc.CreateNamespace(ctx, "lake", []string{"twice"}, nil)
				}},
				{"unknown table", catalog.ErrNoSuchTable, "missing", func() error {
					_, err := e.svc.LoadTable(ctx, "lake", catalog.Ident{Namespace: []string{"twice"}, Name: "missing"}, "")
					return err
				}},
				{"unknown view", catalog.ErrNoSuchView, "nov", func() error {
					_, err := e.svc.LoadView(ctx, "lake", catalog.Ident{Namespace: []string{"twice"}, Name: "nov"})
					return err
				}},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					err := tc.call()
					if !errors.Is(err, tc.sentinel) {
						t.Fatalf("error %v, want %v", err, tc.sentinel)
					}
					msg := catalog.ClientMessage(err)
					if !strings.Contains(msg, tc.sentinel.Error()) || !strings.Contains(msg, tc.want) {
						t.Errorf("message %q lost the catalog's words %q, %q (error %q)", msg, tc.sentinel, tc.want, err)
					}
					for _, m := range internalMarkers {
						if strings.Contains(msg, m) {
							t.Errorf("message %q holds internal %q (error %q)", msg, m, err)
						}
					}
				})
			}
		})
	}
}

// TestClientMessageCuts checks which causes are cut: the backing's, the
// store's and system calls' go; the catalog's own stay, and so do causes
// that describe the client's input.
func TestClientMessageCuts(t *testing.T) {
	storeErr := fmt.Errorf("%w: .cairn.sys/warehouse/-/nope", objstore.ErrNoSuchKey)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"backing not found", fmt.Errorf("%w: nope: %w", catalog.ErrNoSuchWarehouse, fmt.Errorf("%w: warehouse/-/nope: %w", catalog.ErrNotFound, storeErr)), "no such warehouse: nope"},
		{"backing error joined", fmt.Errorf("%w: %w", fmt.Errorf("%w: nope", catalog.ErrNoSuchWarehouse), fmt.Errorf("%w: k", catalog.ErrNotFound)), "no such warehouse: nope"},
		{"store error in the middle", fmt.Errorf("%w: t1: %w; refresh and retry", catalog.ErrCommitFailed, storeErr), "commit failed: t1; refresh and retry"},
		{"system call", fmt.Errorf("%w: read: %w", catalog.ErrUnavailable, syscall.EIO), "warehouse not served by the catalog backing: read"},
		{"client input kept", fmt.Errorf("%w: create table request: %w", catalog.ErrBadRequest, errors.New("unknown field \"x\"")), `bad request: create table request: unknown field "x"`},
		{"catalog words wrapped again", fmt.Errorf("%w: %w", catalog.ErrFenced, fmt.Errorf("%w: migration m-1", catalog.ErrMigrationConflict)), "catalog writes fenced by a migration: catalog migration conflict: migration m-1"},
		{"plain", catalog.ErrNoSuchTable, "no such table"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := catalog.ClientMessage(tc.err); got != tc.want {
				t.Errorf("ClientMessage(%q) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
