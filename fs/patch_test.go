package fs

import (
	"reflect"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

type rg = objstore.Range

// TestRangeSetAdd checks the merging of changed ranges.
func TestRangeSetAdd(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   rangeSet
		off  int64
		n    int64
		want rangeSet
	}{
		{"into-empty", nil, 10, 5, rangeSet{{10, 5}}},
		{"empty-write", rangeSet{{10, 5}}, 3, 0, rangeSet{{10, 5}}},
		{"before", rangeSet{{10, 5}}, 0, 5, rangeSet{{0, 5}, {10, 5}}},
		{"after", rangeSet{{10, 5}}, 20, 5, rangeSet{{10, 5}, {20, 5}}},
		{"touching-before", rangeSet{{10, 5}}, 5, 5, rangeSet{{5, 10}}},
		{"touching-after", rangeSet{{10, 5}}, 15, 5, rangeSet{{10, 10}}},
		{"inside", rangeSet{{10, 10}}, 12, 3, rangeSet{{10, 10}}},
		{"covering", rangeSet{{10, 10}}, 0, 100, rangeSet{{0, 100}}},
		{"bridging-two", rangeSet{{0, 5}, {10, 5}, {30, 5}}, 4, 7, rangeSet{{0, 15}, {30, 5}}},
		{"bridging-all", rangeSet{{0, 5}, {10, 5}, {30, 5}}, 5, 25, rangeSet{{0, 35}}},
		{"between", rangeSet{{0, 5}, {30, 5}}, 10, 5, rangeSet{{0, 5}, {10, 5}, {30, 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append(rangeSet(nil), tc.in...)
			if got := in.add(tc.off, tc.n); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("add(%d, %d) to %v = %v, want %v", tc.off, tc.n, tc.in, got, tc.want)
			}
		})
	}
}

// TestRangeSetClip checks the cutting of changed ranges by a truncation.
func TestRangeSetClip(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   rangeSet
		size int64
		want rangeSet
	}{
		{"nothing-past", rangeSet{{0, 5}, {10, 5}}, 20, rangeSet{{0, 5}, {10, 5}}},
		{"at-end", rangeSet{{0, 5}, {10, 5}}, 15, rangeSet{{0, 5}, {10, 5}}},
		{"cuts-one", rangeSet{{0, 5}, {10, 5}}, 12, rangeSet{{0, 5}, {10, 2}}},
		{"drops-one", rangeSet{{0, 5}, {10, 5}}, 10, rangeSet{{0, 5}}},
		{"in-gap", rangeSet{{0, 5}, {10, 5}}, 7, rangeSet{{0, 5}}},
		{"to-zero", rangeSet{{0, 5}, {10, 5}}, 0, rangeSet{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append(rangeSet(nil), tc.in...)
			got := in.clip(tc.size)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("clip(%d) of %v = %v, want %v", tc.size, tc.in, got, tc.want)
			}
		})
	}
}
