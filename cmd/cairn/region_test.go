package main

import (
	"strings"
	"testing"
)

func TestValidRegion(t *testing.T) {
	for _, tc := range []struct {
		r  string
		ok bool
	}{
		{"us-east-1", true}, {"eu-central-2", true}, {"home", true}, {"a", true},
		{"", false}, {"-us", false}, {"us-", false}, {"US-EAST-1", false}, {"us east", false},
		{"us_east_1", false}, {"é", false}, {strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false},
	} {
		if got := validRegion(tc.r); got != tc.ok {
			t.Errorf("%q: %v, want %v", tc.r, got, tc.ok)
		}
	}
}

func FuzzValidRegion(f *testing.F) {
	for _, s := range []string{"us-east-1", "", "-", "a-b", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, r string) {
		if !validRegion(r) {
			return
		}
		if r == "" || len(r) > 64 || strings.HasPrefix(r, "-") || strings.HasSuffix(r, "-") ||
			strings.Trim(r, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			t.Fatalf("%q accepted", r)
		}
	})
}
