package fs

import (
	"strings"
	"unicode/utf8"
)

// maxNameLen is the longest name a directory entry may have (NAME_MAX).
const maxNameLen = 255

// controlDirName is the root directory holding the control tree.
const controlDirName = ".cairn"

// visible says whether a path segment can be shown on the mount: keys with
// empty segments, "." or "..", or names POSIX cannot hold stay reachable
// over S3 only.
func visible(name string) bool {
	return name != "" && name != "." && name != ".." && len(name) <= maxNameLen &&
		!strings.ContainsAny(name, "/\x00") && utf8.ValidString(name)
}

// splitPath splits a mount path relative to the root ("bucket/a/b") into
// the bucket and the key ("a/b"; empty for the bucket itself).
func splitPath(p string) (bucket, key string) {
	bucket, key, _ = strings.Cut(p, "/")
	return bucket, key
}

// dirPrefix is the key prefix of the directory at key ("" for a bucket).
func dirPrefix(key string) string {
	if key == "" {
		return ""
	}
	return key + "/"
}
