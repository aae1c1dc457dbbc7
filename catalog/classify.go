package catalog

import (
	"context"
	"encoding/json"
	"errors"
)

// The one decision about a staged commit, shared by the two recovery
// paths: Recover at start (recover.go) and the operator's
// RecoverWarehouse and its dry run Inspect (inspect.go). Both gather the
// same facts (the commit record, the table's or view's pointer, the
// current metadata file the pointer names) and call classifyStaged, so
// they cannot disagree.
//
// The rule fails closed: a commit is abandoned (and its metadata file
// removed) only when the current metadata file was read, decoded, is not
// the commit's file and does not list it in its metadata-log. When the
// pointer record or the current metadata file cannot be read or decoded,
// nothing can be told and the answer is manual review: the commit stays
// staged and nothing is deleted.

// stagedOutcome is the verdict on a staged commit.
type stagedOutcome int

const (
	// stagedCommitted: the pointer names the commit's file, or the current
	// metadata-log lists it; the staged record is dropped, no file is.
	stagedCommitted stagedOutcome = iota + 1
	// stagedAbandoned: the commit never landed; the staged record and the
	// commit's metadata file are removed.
	stagedAbandoned
	// stagedManualReview: recovery cannot tell; the commit stays staged
	// and nothing is deleted.
	stagedManualReview
)

// String names the outcome with the recovery action an operator sees.
func (o stagedOutcome) String() string {
	switch o {
	case stagedCommitted:
		return RecoverRollForward
	case stagedAbandoned:
		return RecoverRollBack
	case stagedManualReview:
		return RecoverManualReview
	}
	return "UNKNOWN"
}

// stagedVerdict is an outcome with the reason an operator reads.
type stagedVerdict struct {
	outcome stagedOutcome
	reason  string
}

// pointerSeen is a table's or view's pointer record as a recovery path
// found it.
type pointerSeen struct {
	found     bool  // the record exists
	decodeErr error // it exists but its value does not decode
	p         pointerRec
}

// currentMetadata is the read of the metadata file a pointer names.
type currentMetadata struct {
	data []byte
	err  error // missing (wraps ErrNotFound) or any read failure
}

// classifyStaged decides a staged commit c from its pointer and, when
// the pointer exists and decodes, the current metadata file it names. It
// does no I/O.
func classifyStaged(c commitRec, ptr pointerSeen, cur currentMetadata) stagedVerdict {
	manual := func(reason string) stagedVerdict { return stagedVerdict{stagedManualReview, reason} }
	switch {
	case !ptr.found && c.From == "":
		return stagedVerdict{stagedAbandoned, "the create never published the entry"}
	case !ptr.found:
		return stagedVerdict{stagedAbandoned, "the entry no longer exists"}
	case ptr.decodeErr != nil:
		return manual("undecodable pointer record, cannot tell whether " + c.To + " landed: " + ptr.decodeErr.Error())
	}
	loc := ptr.p.MetadataLocation
	if cur.err != nil {
		if loc == c.To && errors.Is(cur.err, ErrNotFound) {
			return manual("the pointer names " + c.To + ", which is missing")
		}
		return manual("current metadata " + loc + " unreadable, cannot tell whether " + c.To + " landed: " + cur.err.Error())
	}
	var m struct {
		Log []struct {
			File string `json:"metadata-file"`
		} `json:"metadata-log"`
	}
	if err := json.Unmarshal(cur.data, &m); err != nil {
		return manual("current metadata " + loc + " is not valid metadata JSON, cannot tell whether " + c.To + " landed: " + err.Error())
	}
	if loc == c.To {
		return stagedVerdict{stagedCommitted, "the pointer was flipped to " + c.To}
	}
	for _, e := range m.Log {
		if e.File == c.To {
			return stagedVerdict{stagedCommitted, c.To + " is in the current metadata-log"}
		}
	}
	if loc == c.From {
		return stagedVerdict{stagedAbandoned, "the pointer is still on " + c.From}
	}
	return stagedVerdict{stagedAbandoned, "the pointer moved on without " + c.To}
}

// classify reads the current metadata file ptr names (when it exists and
// decodes) and classifies c. An error is returned only when ctx ends: a
// read failure is a manual-review verdict, not an error.
func (s *Service) classify(ctx context.Context, wh string, c commitRec, ptr pointerSeen) (stagedVerdict, error) {
	var cur currentMetadata
	if ptr.found && ptr.decodeErr == nil {
		cur.data, cur.err = s.readMetadata(ctx, wh, ptr.p.MetadataLocation)
		if cur.err != nil && ctx.Err() != nil {
			return stagedVerdict{}, ctx.Err()
		}
	}
	return classifyStaged(c, ptr, cur), nil
}
