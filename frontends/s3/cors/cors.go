package cors

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// MaxRules is the most rules a configuration holds (S3's limit).
const MaxRules = 100

// maxDocument bounds the XML Parse reads (S3 documents the 100 rules, not
// a size; 64 KiB holds 100 generous rules).
const maxDocument = 64 << 10

// Errors of Parse. The text after the sentinel says what is wrong, in
// S3's words where S3 has them.
var (
	// ErrMalformed: the XML is not a CORSConfiguration S3 would take
	// (S3 answers MalformedXML).
	ErrMalformed = errors.New("malformed CORS configuration")
	// ErrInvalid: a well-formed rule asks for something S3 refuses (S3
	// answers InvalidRequest).
	ErrInvalid = errors.New("invalid CORS configuration")
)

// Methods are the methods a rule may allow.
var Methods = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodHead}

// Rule is one CORSRule.
type Rule struct {
	ID             string   `xml:"ID,omitempty"`
	AllowedHeaders []string `xml:"AllowedHeader"`
	AllowedMethods []string `xml:"AllowedMethod"`
	AllowedOrigins []string `xml:"AllowedOrigin"`
	ExposeHeaders  []string `xml:"ExposeHeader"`
	MaxAgeSeconds  *int     `xml:"MaxAgeSeconds,omitempty"`
}

// Config is a bucket's CORS configuration.
type Config struct {
	XMLName xml.Name `xml:"CORSConfiguration"`
	Rules   []Rule   `xml:"CORSRule"`
}

// Parse reads and checks a CORSConfiguration document.
func Parse(doc []byte) (Config, error) {
	if len(doc) > maxDocument {
		return Config{}, fmt.Errorf("%w: document larger than %d bytes", ErrMalformed, maxDocument)
	}
	var c Config
	dec := xml.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if c.XMLName.Local != "CORSConfiguration" {
		return Config{}, fmt.Errorf("%w: root element %q", ErrMalformed, c.XMLName.Local)
	}
	c.XMLName = xml.Name{}
	switch {
	case len(c.Rules) == 0:
		return Config{}, fmt.Errorf("%w: no CORSRule", ErrMalformed)
	case len(c.Rules) > MaxRules:
		return Config{}, fmt.Errorf("%w: %d rules, at most %d allowed", ErrMalformed, len(c.Rules), MaxRules)
	}
	for i := range c.Rules {
		if err := c.Rules[i].check(); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

func (r *Rule) check() error {
	trimAll(r.AllowedHeaders)
	trimAll(r.AllowedMethods)
	trimAll(r.AllowedOrigins)
	trimAll(r.ExposeHeaders)
	r.ID = strings.TrimSpace(r.ID)
	switch {
	case len(r.ID) > 255:
		return fmt.Errorf("%w: rule ID longer than 255 characters", ErrMalformed)
	case len(r.AllowedOrigins) == 0:
		return fmt.Errorf("%w: a CORSRule has no AllowedOrigin", ErrMalformed)
	case len(r.AllowedMethods) == 0:
		return fmt.Errorf("%w: a CORSRule has no AllowedMethod", ErrMalformed)
	case r.MaxAgeSeconds != nil && *r.MaxAgeSeconds < 0:
		return fmt.Errorf("%w: MaxAgeSeconds %d is negative", ErrMalformed, *r.MaxAgeSeconds)
	}
	for _, m := range r.AllowedMethods {
		if !isMethod(m) {
			return fmt.Errorf("%w: Found unsupported HTTP method in CORS config. Unsupported method is %s", ErrInvalid, clip(m))
		}
	}
	for _, o := range r.AllowedOrigins {
		if o == "" {
			return fmt.Errorf("%w: an AllowedOrigin is empty", ErrMalformed)
		}
		if strings.Count(o, "*") > 1 {
			return fmt.Errorf("%w: AllowedOrigin %q can not have more than one wildcard", ErrInvalid, clip(o))
		}
	}
	for _, h := range r.AllowedHeaders {
		if strings.Count(h, "*") > 1 {
			return fmt.Errorf("%w: AllowedHeader %q can not have more than one wildcard", ErrInvalid, clip(h))
		}
	}
	for _, h := range r.ExposeHeaders {
		if strings.Contains(h, "*") {
			return fmt.Errorf("%w: ExposeHeader %q contains wildcard. We currently do not support wildcard for ExposeHeader", ErrInvalid, clip(h))
		}
	}
	return nil
}

func trimAll(s []string) {
	for i := range s {
		s[i] = strings.TrimSpace(s[i])
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func isMethod(m string) bool {
	for _, k := range Methods {
		if m == k {
			return true
		}
	}
	return false
}

// Encode returns the configuration as S3's CORSConfiguration XML: the
// document GetBucketCors returns and the one the S3 face stores.
func (c Config) Encode() ([]byte, error) {
	out := struct {
		XMLName xml.Name `xml:"CORSConfiguration"`
		NS      string   `xml:"xmlns,attr"`
		Rules   []Rule   `xml:"CORSRule"`
	}{NS: "http://s3.amazonaws.com/doc/2006-03-01/", Rules: c.Rules}
	b, err := xml.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("cors: encoding the configuration: %w", err)
	}
	return append([]byte(xml.Header), b...), nil
}

// Match is the rule that allows a request.
type Match struct {
	Rule *Rule
	// AnyOrigin: the rule allowed the origin by the bare "*".
	AnyOrigin bool
}

// Match finds the first rule allowing origin, method and every one of the
// requested headers (lower-case names, as RequestHeaders gives them).
func (c Config) Match(origin, method string, requested []string) (Match, bool) {
	for i := range c.Rules {
		r := &c.Rules[i]
		any, ok := r.allowsOrigin(origin)
		if !ok || !contains(r.AllowedMethods, method) {
			continue
		}
		if !r.allowsHeaders(requested) {
			continue
		}
		return Match{Rule: r, AnyOrigin: any}, true
	}
	return Match{}, false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (r *Rule) allowsOrigin(origin string) (any, ok bool) {
	for _, o := range r.AllowedOrigins {
		if o == "*" {
			return true, true
		}
	}
	for _, o := range r.AllowedOrigins {
		if wildcard(o, origin) {
			return false, true
		}
	}
	return false, false
}

func (r *Rule) allowsHeaders(requested []string) bool {
	for _, h := range requested {
		ok := false
		for _, a := range r.AllowedHeaders {
			if wildcard(a, h) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// wildcard matches s against a pattern holding at most one '*' (any run
// of characters), ignoring case.
func wildcard(pattern, s string) bool {
	pre, suf, star := strings.Cut(pattern, "*")
	if !star {
		return strings.EqualFold(pattern, s)
	}
	return len(s) >= len(pre)+len(suf) &&
		strings.EqualFold(s[:len(pre)], pre) && strings.EqualFold(s[len(s)-len(suf):], suf)
}

// RequestHeaders splits an Access-Control-Request-Headers value into
// lower-case header names.
func RequestHeaders(v string) []string {
	var out []string
	for _, h := range strings.Split(v, ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// vary names the request headers the CORS response headers depend on.
const vary = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"

// SetHeaders adds the Access-Control-* response headers a match gives: the
// allowed origin ("*" when the rule allows any origin and the request
// carries no credentials, the request's origin otherwise, with
// Allow-Credentials), the rule's methods, the requested headers (a
// preflight's, echoed), the exposed headers and the max age.
func (m Match) SetHeaders(h http.Header, origin string, requested []string, credentials bool) {
	r := m.Rule
	if m.AnyOrigin && !credentials {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Allow-Methods", strings.Join(r.AllowedMethods, ", "))
	if len(requested) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(requested, ", "))
	}
	if len(r.ExposeHeaders) > 0 {
		h.Set("Access-Control-Expose-Headers", strings.Join(r.ExposeHeaders, ", "))
	}
	if r.MaxAgeSeconds != nil {
		h.Set("Access-Control-Max-Age", strconv.Itoa(*r.MaxAgeSeconds))
	}
	h.Add("Vary", vary)
}
