package catalog

import (
	"errors"
	"testing"
)

// FuzzCommitRequest: the commit request decoder never panics and fails
// only with ErrBadRequest.
func FuzzCommitRequest(f *testing.F) {
	for _, s := range []string{
		`{"requirements":[{"type":"assert-create"}],"updates":[]}`,
		`{"identifier":{"namespace":["a"],"name":"t"},"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}],"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":1,"timestamp-ms":1,"manifest-list":"s3://x/y","summary":{"operation":"append"}}},{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":1}]}`,
		`{"updates":[{"action":"set-properties","updates":{"a":"b"}},{"action":"remove-properties","removals":["a"]}]}`,
		`{"updates":[{"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[{"id":1,"name":"a","type":"long","required":true}]}}]}`,
		`{"updates":[{"action":"add-spec","spec":{"spec-id":1,"fields":[{"source-id":1,"field-id":1000,"name":"b","transform":"bucket[4]"}]}}]}`,
		`{"updates":[{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}}]}`,
		`{"requirements":[{"type":"nope"}]}`, `{`, `null`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeCommitRequest(body)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("error without ErrBadRequest: %v", err)
			}
			return
		}
		for _, r := range req.Requirements {
			_ = r.GetType()
		}
		for _, u := range req.Updates {
			_ = u.Action()
		}
	})
}
