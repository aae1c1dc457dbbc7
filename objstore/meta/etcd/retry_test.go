package etcd

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// TestElecting: the errors of a cluster between leaders, from the client
// or the server, and nothing else.
func TestElecting(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{rpctypes.ErrLeaderChanged, true},
		{rpctypes.ErrGRPCLeaderChanged, true},
		{rpctypes.ErrNoLeader, true},
		{rpctypes.ErrGRPCNoLeader, true},
		{fmt.Errorf("read: %w", rpctypes.ErrLeaderChanged), true},
		{nil, false},
		{context.DeadlineExceeded, false},
		{rpctypes.ErrCompacted, false},
		{errors.New("leader changed, said someone"), false},
	} {
		if got := electing(tc.err); got != tc.want {
			t.Errorf("electing(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestRetryRead: a read retried through an election, until it answers or
// its deadline passes; other errors are not retried.
func TestRetryRead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fails     int
		err       error
		wantCalls int
		wantErr   bool
	}{
		{"answers at once", 0, nil, 1, false},
		{"answers after an election", 2, rpctypes.ErrGRPCLeaderChanged, 3, false},
		{"another error at once", 5, rpctypes.ErrCompacted, 1, true},
		{"an election past the deadline", 1000, rpctypes.ErrLeaderChanged, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			calls := 0
			v, err := retryRead(ctx, func() (int, error) {
				calls++
				if calls <= tc.fails {
					return 0, tc.err
				}
				return 7, nil
			})
			if (err != nil) != tc.wantErr || (err == nil && v != 7) {
				t.Fatalf("retryRead: %d, %v", v, err)
			}
			if tc.wantCalls > 0 && calls != tc.wantCalls {
				t.Fatalf("%d calls, want %d", calls, tc.wantCalls)
			}
		})
	}
}
