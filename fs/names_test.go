package fs

import (
	"strings"
	"testing"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"empty", "", false},
		{"dot", ".", false},
		{"dotdot", "..", false},
		{"three dots", "...", true},
		{"leading dot", ".hidden", true},
		{"control dir name", controlDirName, true},
		{"NUL alone", "\x00", false},
		{"NUL inside", "a\x00b", false},
		{"slash alone", "/", false},
		{"slash inside", "a/b", false},
		{"trailing slash", "a/", false},
		{"255 bytes", strings.Repeat("a", 255), true},
		{"256 bytes", strings.Repeat("a", 256), false},
		{"255 bytes multibyte", strings.Repeat("é", 127) + "a", true}, // 254+1 bytes
		{"256 bytes multibyte", strings.Repeat("é", 128), false},
		{"invalid UTF-8", "\xff", false},
		{"truncated UTF-8", "a\xc3", false},
		{"surrogate half", "\xed\xa0\x80", false},
		{"ordinary", "report.txt", true},
		{"space", "a b", true},
		{"backslash", `a\b`, true},
		{"newline", "a\nb", true},
		{"unicode", "日本語", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := visible(tc.in); got != tc.want {
				t.Errorf("visible(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestSplitPath(t *testing.T) {
	for _, tc := range []struct {
		in, bucket, key string
	}{
		{"", "", ""},
		{"bucket", "bucket", ""},
		{"bucket/", "bucket", ""},
		{"bucket/a", "bucket", "a"},
		{"bucket/a/b", "bucket", "a/b"},
		{"bucket/a/b/", "bucket", "a/b/"},
		{"bucket//a", "bucket", "/a"},
	} {
		bucket, key := splitPath(tc.in)
		if bucket != tc.bucket || key != tc.key {
			t.Errorf("splitPath(%q) = (%q, %q), want (%q, %q)", tc.in, bucket, key, tc.bucket, tc.key)
		}
	}
}

func TestDirPrefix(t *testing.T) {
	for _, tc := range []struct {
		key, want string
	}{
		{"", ""},
		{"a", "a/"},
		{"a/b", "a/b/"},
		{"a b", "a b/"},
	} {
		if got := dirPrefix(tc.key); got != tc.want {
			t.Errorf("dirPrefix(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}
