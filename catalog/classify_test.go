package catalog

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestClassifyStaged(t *testing.T) {
	const (
		from  = "s3://lake/ns/t/metadata/00001-a.metadata.json"
		to    = "s3://lake/ns/t/metadata/00002-b.metadata.json"
		later = "s3://lake/ns/t/metadata/00003-c.metadata.json"
	)
	commit := commitRec{ID: "c1", Kind: KindTable, From: from, To: to, State: commitStaged}
	create := commitRec{ID: "c0", Kind: KindTable, To: from, State: commitStaged}
	at := func(loc string) pointerSeen { return pointerSeen{found: true, p: pointerRec{MetadataLocation: loc}} }
	md := func(log ...string) currentMetadata {
		var b strings.Builder
		b.WriteString(`{"format-version":2,"metadata-log":[`)
		for i, l := range log {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"metadata-file":%q,"timestamp-ms":1}`, l)
		}
		b.WriteString("]}")
		return currentMetadata{data: []byte(b.String())}
	}
	missing := func(loc string) currentMetadata {
		return currentMetadata{err: fmt.Errorf("%w: metadata file %s is missing", ErrNotFound, loc)}
	}
	storeErr := currentMetadata{err: errors.New("catalog: read metadata: objstore: not enough shards")}
	corrupt := currentMetadata{data: []byte(`{"metadata-log":[{"metadata-file":`)}
	cases := []struct {
		name   string
		c      commitRec
		ptr    pointerSeen
		cur    currentMetadata
		want   stagedOutcome
		reason string // a part of the reason
	}{
		{"create never published", create, pointerSeen{}, currentMetadata{}, stagedAbandoned, "never published"},
		{"entry gone", commit, pointerSeen{}, currentMetadata{}, stagedAbandoned, "no longer exists"},
		{"undecodable pointer", commit, pointerSeen{found: true, decodeErr: errors.New("bad json")}, currentMetadata{}, stagedManualReview, "undecodable pointer"},
		{"flipped", commit, at(to), md(from), stagedCommitted, "flipped to"},
		{"flipped create", create, at(from), md(), stagedCommitted, "flipped to"},
		{"still on from", commit, at(from), md(), stagedAbandoned, "still on"},
		{"moved on, listed", commit, at(later), md(from, to), stagedCommitted, "metadata-log"},
		{"moved on, not listed", commit, at(later), md(from), stagedAbandoned, "moved on without"},
		{"moved on, empty log", commit, at(later), md(), stagedAbandoned, "moved on without"},
		// Fail closed: the current metadata file cannot be read.
		{"flipped, file missing", commit, at(to), missing(to), stagedManualReview, "which is missing"},
		{"flipped, store error", commit, at(to), storeErr, stagedManualReview, "unreadable"},
		{"flipped, corrupt", commit, at(to), corrupt, stagedManualReview, "not valid metadata JSON"},
		{"still on from, missing", commit, at(from), missing(from), stagedManualReview, "unreadable"},
		{"still on from, corrupt", commit, at(from), corrupt, stagedManualReview, "not valid metadata JSON"},
		{"moved on, missing", commit, at(later), missing(later), stagedManualReview, "unreadable"},
		{"moved on, store error", commit, at(later), storeErr, stagedManualReview, "unreadable"},
		{"moved on, corrupt", commit, at(later), corrupt, stagedManualReview, "not valid metadata JSON"},
		{"moved on, not an object", commit, at(later), currentMetadata{data: []byte(`[1]`)}, stagedManualReview, "not valid metadata JSON"},
		{"moved on, empty file", commit, at(later), currentMetadata{data: []byte{}}, stagedManualReview, "not valid metadata JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := classifyStaged(tc.c, tc.ptr, tc.cur)
			if v.outcome != tc.want || !strings.Contains(v.reason, tc.reason) {
				t.Fatalf("got %v (%q), want %v (%q)", v.outcome, v.reason, tc.want, tc.reason)
			}
		})
	}
}
