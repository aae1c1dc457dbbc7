package iceberg

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// UnitSeparator is the namespace level separator every client may use
// (the spec's default, %1F in a path).
const UnitSeparator = "\x1f"

// errBadPath is a path or namespace that cannot be decoded (400).
var errBadPath = errors.New("iceberg: malformed path")

// splitPath splits an escaped path (no leading slash) into its decoded
// segments. Splitting happens before decoding, so a %2F inside a table
// name stays part of the name.
func splitPath(escaped string) ([]string, error) {
	if escaped == "" {
		return nil, nil
	}
	raw := strings.Split(escaped, "/")
	out := make([]string, len(raw))
	for i, s := range raw {
		d, err := url.PathUnescape(s)
		if err != nil {
			return nil, fmt.Errorf("%w: segment %d: %v", errBadPath, i, err)
		}
		out[i] = d
	}
	return out, nil
}

// decodeNamespace splits a decoded namespace path segment (or a parent=
// query value) into its levels, on the unit separator and on sep when sep
// is another non-empty string. Every level must be non-empty valid UTF-8
// without control characters.
func decodeNamespace(s, sep string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: empty namespace", errBadPath)
	}
	if sep != "" && sep != UnitSeparator {
		s = strings.ReplaceAll(s, sep, UnitSeparator)
	}
	levels := strings.Split(s, UnitSeparator)
	for i, l := range levels {
		if err := checkName(l); err != nil {
			return nil, fmt.Errorf("namespace level %d: %w", i, err)
		}
	}
	return levels, nil
}

// checkName validates one namespace level, table or view name.
func checkName(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty name", errBadPath)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: name is not valid UTF-8", errBadPath)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: name holds control character %U", errBadPath, r)
		}
	}
	return nil
}

// encodeNamespace joins levels with the unit separator: the inverse of
// decodeNamespace, used for page tokens and logs.
func encodeNamespace(ns []string) string { return strings.Join(ns, UnitSeparator) }
