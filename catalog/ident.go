package catalog

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Key separators in backing keys. Identifiers may contain neither (they
// are control characters, which validName refuses).
const (
	// tableSep separates a table or view name from its namespace key.
	tableSep = "\x1e"
	// maxNameLen bounds one namespace level or name, in bytes.
	maxNameLen = 255
)

// validName checks one namespace level or table/view name: non-empty, at
// most 255 bytes of valid UTF-8, not "." or "..", without "/", NUL or any
// other control character.
func validName(what, n string) error {
	switch {
	case n == "":
		return fmt.Errorf("%w: empty %s", ErrBadRequest, what)
	case len(n) > maxNameLen:
		return fmt.Errorf("%w: %s longer than %d bytes", ErrBadRequest, what, maxNameLen)
	case !utf8.ValidString(n):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrBadRequest, what)
	case n == "." || n == "..":
		return fmt.Errorf("%w: %s %q is reserved", ErrBadRequest, what, n)
	case strings.Contains(n, "/"):
		return fmt.Errorf("%w: %s %q holds a \"/\"", ErrBadRequest, what, n)
	}
	for _, r := range n {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return fmt.Errorf("%w: %s %q holds a control character", ErrBadRequest, what, n)
		}
	}
	return nil
}

// validNamespace checks a namespace of one level or more.
func validNamespace(ns []string) error {
	if len(ns) == 0 {
		return fmt.Errorf("%w: empty namespace", ErrBadRequest)
	}
	for _, l := range ns {
		if err := validName("namespace level", l); err != nil {
			return err
		}
	}
	return nil
}

// validIdent checks a table or view identifier.
func validIdent(id Ident) error {
	if err := validNamespace(id.Namespace); err != nil {
		return err
	}
	return validName("name", id.Name)
}

// nsKey is the backing key of a namespace.
func nsKey(ns []string) string { return strings.Join(ns, NamespaceSep) }

// nsFromKey inverts nsKey.
func nsFromKey(k string) []string { return strings.Split(k, NamespaceSep) }

// identKey is the backing key of a table or view.
func identKey(id Ident) string { return nsKey(id.Namespace) + tableSep + id.Name }

// TableKey is the backing key of a table or view identifier (namespace
// levels joined by NamespaceSep, then "\x1e" and the name).
func TableKey(id Ident) string { return identKey(id) }

// IdentFromKey inverts TableKey.
func IdentFromKey(k string) Ident { return identFromKey(k) }

// identFromKey inverts identKey.
func identFromKey(k string) Ident {
	i := strings.LastIndex(k, tableSep)
	if i < 0 {
		return Ident{Name: k}
	}
	return Ident{Namespace: nsFromKey(k[:i]), Name: k[i+len(tableSep):]}
}

// encodeToken and decodeToken make page tokens: the last key returned.
func encodeToken(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

func decodeToken(tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) == 0 {
		return "", fmt.Errorf("%w: invalid page token", ErrBadRequest)
	}
	return string(b), nil
}
