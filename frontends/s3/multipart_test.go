package s3

import (
	"reflect"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

func TestLastOfEachNumber(t *testing.T) {
	p := func(n int, etag string) objstore.CompletePart { return objstore.CompletePart{Number: n, ETag: etag} }
	for _, tc := range []struct {
		name     string
		in, want []objstore.CompletePart
	}{
		{"one", []objstore.CompletePart{p(1, "a")}, []objstore.CompletePart{p(1, "a")}},
		{"ascending", []objstore.CompletePart{p(1, "a"), p(2, "b"), p(5, "c")}, []objstore.CompletePart{p(1, "a"), p(2, "b"), p(5, "c")}},
		{"re-sent part: the last answer counts", []objstore.CompletePart{p(1, "b"), p(1, "a")}, []objstore.CompletePart{p(1, "a")}},
		{"runs", []objstore.CompletePart{p(1, "a"), p(2, "x"), p(2, "y"), p(2, "z"), p(3, "c")}, []objstore.CompletePart{p(1, "a"), p(2, "z"), p(3, "c")}},
		// Not ascending: left for the store to refuse (InvalidPartOrder).
		{"descending kept", []objstore.CompletePart{p(2, "b"), p(1, "a")}, []objstore.CompletePart{p(2, "b"), p(1, "a")}},
		{"apart kept", []objstore.CompletePart{p(1, "a"), p(2, "b"), p(1, "c")}, []objstore.CompletePart{p(1, "a"), p(2, "b"), p(1, "c")}},
	} {
		in := append([]objstore.CompletePart(nil), tc.in...)
		if got := lastOfEachNumber(in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
