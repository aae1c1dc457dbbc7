package fs

// The write path as a state machine: where the content of a file being
// written lives (writeState.phase), and the moves between those places
// that the mount makes.

import (
	"errors"
	"fmt"
)

// writePhase is where the content of a file being written lives. A write
// state moves between phases only through writeState.moveTo, and only
// along the edges of phaseMoves:
//
//	               ┌──> phasePatched
//	               │
//	phaseNew ──> phaseBase ─────────┬──> phaseStaged
//	   │                            │
//	   ├──────> phaseBuffered ──────┤
//	   │                            │
//	   └────────────────────────────┴──> phasePassthrough <──> phaseGated
//
// Each edge, and who takes it:
//
//   - New -> Base: a writer opens an existing file without O_TRUNC
//     (beginWrite); the content is the version it opened.
//   - New -> Buffered: a file is created (startNew) or opened with
//     O_TRUNC (beginWrite); the content starts empty, in memory.
//   - New -> Passthrough: a writer opens a file whose passthrough handles
//     outlived their write state (reuseStageLocked): the kernel's backing
//     file of the inode is that staging file, which every open must use.
//   - Base -> Patched: the first write or truncation of a base larger
//     than patchMin and not ciphertext (patchLocked): nothing is copied;
//     the changed ranges go to a sparse staging file and each commit
//     writes only them (patch.go).
//   - Base, Buffered -> Staged: the content outgrows the buffer, or a
//     write or truncation changes a small or sealed base (stageLocked).
//   - Base, Buffered -> Passthrough: the first writer of a file that no
//     cached handle has open takes the passthrough path at its open
//     (writeHandleLocked): staged and passed through in one move.
//   - Passthrough -> Gated: a flush starts the background put, held at a
//     gate (gateLocked).
//   - Gated -> Passthrough: the gate opens (the last release, fsync,
//     gateDelay, or the file's removal: openGateLocked).
//
// Patched is final too: the state rebases on each version it commits
// (rebaseLocked) and stays patched until its last writer closes, and
// beyond, while it is kept idle for the next writer (park.go). Staged
// is final: a file written through the mount stays so until its
// last writer closes (the kernel would refuse a passthrough open beside
// its cached handles). Passthrough never goes back to the mount either:
// the kernel writes the staging file for as long as a handle has it. A
// write state ends (the last release) in any phase; the phase is not
// reset, the state is dropped. A move the table does not have is a bug of
// the mount: moveTo refuses it with errBadMove, which the request sees as
// EIO, logged once by FS.errno (or by the gate's timer, which has no
// request), and the state keeps its phase.
type writePhase uint8

const (
	// phaseNew is a write state being made: no content yet.
	phaseNew writePhase = iota
	// phaseBase: nothing changed yet, the content is writeState.base
	// (the version the writes start from).
	phaseBase
	// phaseBuffered: the content is in memory (writeState.buf), a file
	// written from empty while it fits in bufMax.
	phaseBuffered
	// phaseStaged: the content is in a staging file (writeState.stage)
	// that the mount writes with what the kernel sends it.
	phaseStaged
	// phasePassthrough: the content is in a staging file that the kernel
	// writes itself (FUSE passthrough): the mount learns of writes from
	// the file (refreshLocked).
	phasePassthrough
	// phaseGated: passthrough, and a flush started a background put that
	// waits at writeState.gate for the content to be final.
	phaseGated
	// phasePatched: the content is writeState.base with the ranges in
	// writeState.ranges changed; their bytes are in a sparse staging
	// file (writeState.stage) at their own offsets (patch.go).
	phasePatched
)

// phaseMoves is the transition table: phaseMoves[from] lists the phases
// a write state may move to from from. It is a constant table.
var phaseMoves = [...][]writePhase{
	phaseNew:         {phaseBase, phaseBuffered, phasePassthrough},
	phaseBase:        {phaseStaged, phasePassthrough, phasePatched},
	phaseBuffered:    {phaseStaged, phasePassthrough},
	phaseStaged:      nil,
	phasePassthrough: {phaseGated},
	phaseGated:       {phasePassthrough},
	phasePatched:     nil,
}

func (p writePhase) String() string {
	switch p {
	case phaseNew:
		return "new"
	case phaseBase:
		return "base"
	case phaseBuffered:
		return "buffered"
	case phaseStaged:
		return "staged"
	case phasePassthrough:
		return "passthrough"
	case phaseGated:
		return "gated"
	case phasePatched:
		return "patched"
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// canMove says whether phaseMoves has the edge from p to to.
func (p writePhase) canMove(to writePhase) bool {
	if int(p) >= len(phaseMoves) {
		return false
	}
	for _, q := range phaseMoves[p] {
		if q == to {
			return true
		}
	}
	return false
}

// errBadMove is a write state asked to make a move that phaseMoves does
// not have: a bug of the mount. It wraps no store sentinel, so the
// request that asked gets EIO (errnoOf's default), and FS.errno logs it.
var errBadMove = errors.New("write state: phase change not allowed")

// moveTo moves the write state to phase to, if phaseMoves allows it.
// It is the only place that changes writeState.phase.
func (ws *writeState) moveTo(to writePhase) error {
	if err := ws.checkMove(to); err != nil {
		return err
	}
	ws.phase = to
	return nil
}

// checkMove says, as moveTo would, whether the state may move to phase
// to, for a caller that must know before it starts the work the move
// stands for (staging, starting a gated put).
func (ws *writeState) checkMove(to writePhase) error {
	if !ws.phase.canMove(to) {
		return fmt.Errorf("%w: %s to %s", errBadMove, ws.phase, to)
	}
	return nil
}

// passesThrough says whether the kernel writes the content itself: it
// lives in a staging file that the inode's passthrough handles use.
func (ws *writeState) passesThrough() bool {
	return ws.phase == phasePassthrough || ws.phase == phaseGated
}

// onStage says whether the content lives in a staging file (ws.stage).
func (ws *writeState) onStage() bool {
	return ws.phase == phaseStaged || ws.passesThrough()
}
