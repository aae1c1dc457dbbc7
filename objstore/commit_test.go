package objstore

import (
	"slices"
	"testing"
)

func TestFileSyncs(t *testing.T) {
	file := func(data string, shards ...int) *commitReq {
		return &commitReq{shards: shards, data: data}
	}
	meta := &commitReq{}
	pack := &commitReq{shards: []int{0, 1, 2, 3}, packSeg: 7}
	many := make([]*commitReq, syncFilesMax+1)
	for i := range many {
		many[i] = file("m", 0, 1)
	}
	for _, tc := range []struct {
		name   string
		batch  []*commitReq
		names  [][]string
		reqs   int
		byFile bool
	}{
		{"metadata only", []*commitReq{meta}, [][]string{nil, nil, nil, nil}, 0, true},
		{"pack segments only", []*commitReq{pack, meta}, [][]string{nil, nil, nil, nil}, 0, true},
		{"one object on every drive", []*commitReq{file("a", 0, 1, 2, 3)}, [][]string{{"a"}, {"a"}, {"a"}, {"a"}}, 1, true},
		{"objects on some drives, beside a pack", []*commitReq{file("a", 0, 2), pack, file("b", 2, 3)}, [][]string{{"a"}, nil, {"a", "b"}, {"b"}}, 2, true},
		{"unnamed shard files", []*commitReq{file("a", 0), file("", 1)}, [][]string{{"a"}, {""}, nil, nil}, 2, false},
		{"more requests than syncFilesMax", many, nil, len(many), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, reqs, byFile := fileSyncs(tc.batch, 4)
			if reqs != tc.reqs || byFile != tc.byFile {
				t.Fatalf("fileSyncs: %d requests, by file %v; want %d, %v", reqs, byFile, tc.reqs, tc.byFile)
			}
			if tc.names != nil && !slices.EqualFunc(names, tc.names, slices.Equal) {
				t.Errorf("names = %q, want %q", names, tc.names)
			}
		})
	}
}
