package objstore

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key S3 accepts, in bytes.
const MaxKeyLen = 1024

// MaxPartNumber is the highest multipart part number.
const MaxPartNumber = 10000

// ValidateBucketName applies the S3 general purpose bucket naming rules.
func ValidateBucketName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %q: %s", ErrInvalidBucketName, name, why)
	}
	if len(name) < 3 || len(name) > 63 {
		return bad("must be 3 to 63 characters long")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) && c != '.' && c != '-' {
			return bad("only lowercase letters, digits, dots and hyphens are allowed")
		}
	}
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return bad("must begin and end with a letter or digit")
	}
	if strings.Contains(name, "..") {
		return bad("must not contain two adjacent periods")
	}
	if looksLikeIPv4(name) {
		return bad("must not be formatted as an IP address")
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return bad("must not start with " + p)
		}
	}
	for _, s := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, s) {
			return bad("must not end with " + s)
		}
	}
	return nil
}

// looksLikeIPv4 reports whether name is four dot-separated groups of
// digits ("192.168.5.4", but also "999.1.1.01"): S3 refuses names formatted
// as an IP address, whether or not the address is valid.
func looksLikeIPv4(name string) bool {
	groups := strings.Split(name, ".")
	if len(groups) != 4 {
		return false
	}
	for _, g := range groups {
		if g == "" || strings.Trim(g, "0123456789") != "" {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// ValidateKey checks an object key: 1 to 1024 bytes of UTF-8 without NUL.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrInvalidKey, len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidKey)
	case strings.IndexByte(key, 0) >= 0:
		return fmt.Errorf("%w: holds a NUL byte", ErrInvalidKey)
	}
	return nil
}

// validatePrefix checks a key prefix (may be empty) for list and rename.
func validatePrefix(p string) error {
	if p == "" {
		return nil
	}
	return ValidateKey(p)
}

func validatePartNumber(n int) error {
	if n < 1 || n > MaxPartNumber {
		return fmt.Errorf("%w: %d is outside 1..%d", ErrInvalidPartNumber, n, MaxPartNumber)
	}
	return nil
}

func validateIfNoneMatch(v string) error {
	if v != "" && v != "*" {
		return fmt.Errorf("%w: If-None-Match supports only *", ErrInvalidArgument)
	}
	return nil
}

// normETag strips the quotes and weak prefix clients put around ETags.
func normETag(e string) string {
	e = strings.TrimSpace(e)
	e = strings.TrimPrefix(e, "W/")
	return strings.Trim(e, `"`)
}
