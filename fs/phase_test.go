package fs

import (
	"errors"
	"syscall"
	"testing"
)

var allPhases = []writePhase{phaseNew, phaseBase, phaseBuffered, phaseStaged, phasePassthrough, phaseGated, phasePatched}

// TestWritePhaseMoves checks every move between two phases against the
// write path's edges, written out here apart from phaseMoves: the allowed
// ones change the phase, the others leave it and fail with errBadMove,
// which the mount answers with EIO.
func TestWritePhaseMoves(t *testing.T) {
	type move struct{ from, to writePhase }
	allowed := map[move]bool{
		{phaseNew, phaseBase}:                true, // open without O_TRUNC
		{phaseNew, phaseBuffered}:            true, // create, O_TRUNC
		{phaseNew, phasePassthrough}:         true, // reuse of a backing staging file
		{phaseBase, phaseStaged}:             true, // first change
		{phaseBase, phasePassthrough}:        true, // passthrough writer at open
		{phaseBase, phasePatched}:            true, // first change of a large base
		{phasePatched, phaseStaged}:          false,
		{phasePatched, phasePassthrough}:     false,
		{phaseBuffered, phasePatched}:        false,
		{phaseBuffered, phaseStaged}:         true, // outgrows the buffer
		{phaseBuffered, phasePassthrough}:    true, // passthrough writer at create
		{phasePassthrough, phaseGated}:       true, // flush
		{phaseGated, phasePassthrough}:       true, // gate opens
		{phaseStaged, phasePassthrough}:      false,
		{phasePassthrough, phaseStaged}:      false,
		{phaseBuffered, phaseBase}:           false,
		{phaseStaged, phaseGated}:            false,
		{phaseBuffered, phaseGated}:          false,
		{phaseGated, phaseStaged}:            false,
		{phasePassthrough, phasePassthrough}: false,
	}
	for _, from := range allPhases {
		for _, to := range allPhases {
			want := allowed[move{from, to}]
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				ws := &writeState{phase: from}
				err := ws.moveTo(to)
				switch {
				case want && err != nil:
					t.Fatalf("moveTo: %v, want the move allowed", err)
				case want && ws.phase != to:
					t.Fatalf("phase %s after the move, want %s", ws.phase, to)
				case !want && !errors.Is(err, errBadMove):
					t.Fatalf("moveTo: %v, want errBadMove", err)
				case !want && ws.phase != from:
					t.Fatalf("phase %s after a refused move, want %s kept", ws.phase, from)
				case !want && errnoOf(err) != syscall.EIO:
					t.Fatalf("errno %v for a refused move, want EIO", errnoOf(err))
				}
				if got := ws.checkMove(to) == nil; !want && got {
					t.Fatalf("checkMove allows what moveTo refused")
				}
			})
		}
	}
}

// TestWritePhaseUnknown checks that a phase outside the table moves
// nowhere and names itself.
func TestWritePhaseUnknown(t *testing.T) {
	bad := writePhase(len(phaseMoves))
	for _, to := range allPhases {
		if bad.canMove(to) {
			t.Errorf("%s may move to %s", bad, to)
		}
	}
	ws := &writeState{phase: bad}
	if err := ws.moveTo(phaseStaged); !errors.Is(err, errBadMove) {
		t.Errorf("moveTo from %s: %v, want errBadMove", bad, err)
	}
	if got, want := bad.String(), "phase(7)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestWritePhaseQueries checks what each phase says about the content.
func TestWritePhaseQueries(t *testing.T) {
	for _, tc := range []struct {
		phase                  writePhase
		passesThrough, onStage bool
	}{
		{phaseNew, false, false},
		{phaseBase, false, false},
		{phaseBuffered, false, false},
		{phaseStaged, false, true},
		{phasePassthrough, true, true},
		{phaseGated, true, true},
		{phasePatched, false, false}, // its staging file holds the changed ranges only
	} {
		ws := &writeState{phase: tc.phase}
		if got := ws.passesThrough(); got != tc.passesThrough {
			t.Errorf("%s: passesThrough() = %v, want %v", tc.phase, got, tc.passesThrough)
		}
		if got := ws.onStage(); got != tc.onStage {
			t.Errorf("%s: onStage() = %v, want %v", tc.phase, got, tc.onStage)
		}
	}
}
