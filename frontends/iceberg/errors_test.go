package iceberg

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

// internalMarkers are texts of the backing and the store that must stay
// in the server log and never reach a client.
var internalMarkers = []string{".cairn.sys", "record not found", "no such key:", "version conflict", "objectbacked:", "strong:"}

// storeChain is a backing's not-found error as the object backing words
// it, over the store's.
func storeChain(key string) error {
	return fmt.Errorf("%w: %s: %w", catalog.ErrNotFound, key,
		fmt.Errorf("%w: .cairn.sys/%s", objstore.ErrNoSuchKey, key))
}

// TestErrorMessagesSayWhatToDo answers catalog errors as the catalog
// words them (their chains hold the backing's and the store's errors)
// through the face, and checks the JSON message: no internal marker, the
// name the client sent, and what to do.
func TestErrorMessagesSayWhatToDo(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		status    int
		typ       string
		want      []string // in the message
		notWant   []string // besides internalMarkers
		requestID bool     // the message names the request id
	}{
		{"unknown warehouse", fmt.Errorf("%w: nope: %w", catalog.ErrNoSuchWarehouse, storeChain("warehouse/-/nope")),
			404, "NoSuchWarehouseException", []string{"no such warehouse: nope", "cairn admin table-bucket create"}, nil, false},
		{"unknown namespace", fmt.Errorf("%w: ghost: %w", catalog.ErrNoSuchNamespace, storeChain("namespace/wh/ghost")),
			404, "NoSuchNamespaceException", []string{"ghost", "create the namespace first"}, nil, false},
		{"unknown table", fmt.Errorf("%w: ns.t: %w", catalog.ErrNoSuchTable, storeChain("table/wh/ns\x1et")),
			404, "NoSuchTableException", []string{"ns.t", "create the table first"}, nil, false},
		{"commit conflict", fmt.Errorf("%w: ns.t: %w", catalog.ErrCommitFailed, fmt.Errorf("%w: table/wh/ns: gone", catalog.ErrConflict)),
			409, "CommitFailedException", []string{"ns.t", "retry the commit"}, nil, false},
		{"state unknown", fmt.Errorf("%w: flip ns.t: %w", catalog.ErrCommitStateUnknown, fmt.Errorf("%w: 2 of 3 drives", objstore.ErrQuorumLost)),
			500, "CommitStateUnknownException", []string{"may or may not have been applied", "load the table"}, []string{"drives", "flip"}, true},
		{"unknown error", fmt.Errorf("objectbacked: read .cairn.sys/x: %w", errors.New("disk on fire")),
			500, "InternalServerError", []string{"internal error", "server log"}, []string{"disk on fire"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.cat.failNext = tc.err
			target := "/iceberg/v1/wh/namespaces/ns/tables/t"
			if tc.typ == "NoSuchNamespaceException" {
				target = "/iceberg/v1/wh/namespaces/ghost"
			}
			w := e.do("reader", "GET", target, "")
			em := errorOf(t, w)
			if w.Code != tc.status || em.Type != tc.typ || em.Code != tc.status {
				t.Fatalf("answer %d %s (code %d), want %d %s", w.Code, em.Type, em.Code, tc.status, tc.typ)
			}
			for _, m := range append(internalMarkers, tc.notWant...) {
				if strings.Contains(em.Message, m) {
					t.Errorf("message %q holds %q", em.Message, m)
				}
			}
			for _, s := range tc.want {
				if !strings.Contains(em.Message, s) {
					t.Errorf("message %q does not say %q", em.Message, s)
				}
			}
			rid := w.Header().Get("X-Request-Id")
			if got := strings.Contains(em.Message, "request id "+rid); rid == "" || got != tc.requestID {
				t.Errorf("message %q names request id %s: %v, want %v", em.Message, rid, got, tc.requestID)
			}
		})
	}
}
