package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/internal/srcscan"
	"github.com/cairnstore/cairn/objstore"
)

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name     string
		cmd      string
		err      error
		wantCode int
		wantMsg  []string // substrings of the message
	}{
		{name: "success", err: nil, wantCode: exitOK},
		{name: "usage", err: usageErrorf("serve", "--data is required"), wantCode: exitError,
			wantMsg: []string{"cairn serve: --data is required", "for usage"}},
		{name: "usage before a command", err: usageErrorf("", "no command given"), wantCode: exitError,
			wantMsg: []string{"cairn: no command given"}},
		{name: "invalid argument", cmd: "serve", err: fmt.Errorf("open: %w: at most 256 drives", objstore.ErrInvalidArgument),
			wantCode: exitError, wantMsg: []string{"cairn serve: open: invalid argument: at most 256 drives", "for usage"}},
		{name: "problems", cmd: "admin fsck", err: fmt.Errorf("%w: 2 missing", errProblems), wantCode: exitProblems,
			wantMsg: []string{"cairn admin fsck: problems found: 2 missing"}},
		{name: "quorum", cmd: "admin heal", err: fmt.Errorf("heal: %w", objstore.ErrQuorumLost), wantCode: exitError,
			wantMsg: []string{"drive quorum lost", "--drive"}},
		{name: "interrupted", cmd: "admin fsck", err: fmt.Errorf("fsck: %w", context.Canceled), wantCode: exitInterrupted,
			wantMsg: []string{"cairn admin fsck: interrupted"}},
		{name: "anything else", cmd: "serve", err: errors.New("listen: address already in use"), wantCode: exitError,
			wantMsg: []string{"cairn serve: listen: address already in use"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := exitStatus(tt.cmd, tt.err)
			if code != tt.wantCode {
				t.Fatalf("code %d, want %d (message %q)", code, tt.wantCode, msg)
			}
			if tt.err == nil && msg != "" {
				t.Fatalf("message %q for success", msg)
			}
			for _, want := range tt.wantMsg {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not contain %q", msg, want)
				}
			}
		})
	}
}

// TestExitRulesCoverSentinels fails when objstore grows a sentinel that
// exitRules does not list: each one needs a decision on what to tell the
// operator.
func TestExitRulesCoverSentinels(t *testing.T) {
	listed := map[string]bool{}
	for _, r := range exitRules() {
		listed[r.err.Error()] = true
	}
	for name, msg := range objstoreSentinels(t) {
		t.Run(name, func(t *testing.T) {
			if !listed[msg] {
				t.Fatalf("objstore.%s (%q) has no entry in exitRules (cmd/cairn/exit.go)", name, msg)
			}
		})
	}
}

// objstoreSentinels finds the package-level `ErrX = errors.New("msg")`
// declarations of package objstore and returns name -> message.
func objstoreSentinels(t *testing.T) map[string]string {
	t.Helper()
	out, err := srcscan.Sentinels(filepath.Join("..", "..", "objstore"))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no sentinels found in objstore; has errors.go moved?")
	}
	return out
}
