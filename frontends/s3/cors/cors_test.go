package cors

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func rules(body string) string {
	return `<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` + body + `</CORSConfiguration>`
}

func TestParse(t *testing.T) {
	many := strings.Repeat(`<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>`, MaxRules)
	for _, tc := range []struct {
		name string
		doc  string
		want error // nil: accepted
	}{
		{"one rule", rules(`<CORSRule><ID>a</ID><AllowedOrigin>http://a.example</AllowedOrigin><AllowedMethod>PUT</AllowedMethod><AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds></CORSRule>`), nil},
		{"no namespace", `<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>HEAD</AllowedMethod></CORSRule></CORSConfiguration>`, nil},
		{"one wildcard", rules(`<CORSRule><AllowedOrigin>https://*.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>x-amz-*</AllowedHeader></CORSRule>`), nil},
		{"100 rules", rules(many), nil},
		{"101 rules", rules(many + `<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>`), ErrMalformed},
		{"no rules", rules(``), ErrMalformed},
		{"not xml", `{"CORSRules": []}`, ErrMalformed},
		{"wrong root", `<Tagging><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></Tagging>`, ErrMalformed},
		{"truncated", rules(`<CORSRule><AllowedOrigin>*</AllowedOrigin>`)[:60], ErrMalformed},
		{"no origin", rules(`<CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule>`), ErrMalformed},
		{"no method", rules(`<CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule>`), ErrMalformed},
		{"negative max age", rules(`<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>-1</MaxAgeSeconds></CORSRule>`), ErrMalformed},
		{"max age not a number", rules(`<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>soon</MaxAgeSeconds></CORSRule>`), ErrMalformed},
		{"PATCH", rules(`<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod></CORSRule>`), ErrInvalid},
		{"lower-case get", rules(`<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>get</AllowedMethod></CORSRule>`), ErrInvalid},
		{"two wildcards in origin", rules(`<CORSRule><AllowedOrigin>*.a.*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>`), ErrInvalid},
		{"two wildcards in header", rules(`<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>**</AllowedHeader></CORSRule>`), ErrInvalid},
		{"wildcard expose header", rules(`<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><ExposeHeader>x-*</ExposeHeader></CORSRule>`), ErrInvalid},
		{"long id", rules(`<CORSRule><ID>` + strings.Repeat("i", 256) + `</ID><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>`), ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.doc))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				enc, err := c.Encode()
				if err != nil {
					t.Fatal(err)
				}
				back, err := Parse(enc)
				if err != nil || !reflect.DeepEqual(back, c) {
					t.Fatalf("round trip: %v\n%+v\n%+v", err, back, c)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Parse = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestParseUnsupportedMethodMessage(t *testing.T) {
	_, err := Parse([]byte(rules(`<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod></CORSRule>`)))
	if err == nil || !strings.Contains(err.Error(), "Unsupported method is PATCH") {
		t.Fatalf("err = %v", err)
	}
}

// The rules of ceph s3-tests' test_cors_origin_response and
// test_cors_header_option, and what those tests expect of them.
func TestMatch(t *testing.T) {
	c, err := Parse([]byte(rules(`
<CORSRule><AllowedMethod>PUT</AllowedMethod><AllowedMethod>DELETE</AllowedMethod><AllowedOrigin>http://www.example1.com</AllowedOrigin><AllowedHeader>*</AllowedHeader></CORSRule>
<CORSRule><AllowedMethod>GET</AllowedMethod><AllowedOrigin>*</AllowedOrigin><AllowedHeader>x-amz-meta-header1</AllowedHeader></CORSRule>
<CORSRule><AllowedMethod>DELETE</AllowedMethod><AllowedOrigin>http://www.example2.com</AllowedOrigin><AllowedOrigin>http://www.example3.com</AllowedOrigin></CORSRule>
<CORSRule><AllowedMethod>PUT</AllowedMethod><AllowedOrigin>http://www.example.com</AllowedOrigin><AllowedHeader>x-amz-meta-header2</AllowedHeader><AllowedHeader>x-amz-meta-header3</AllowedHeader></CORSRule>
<CORSRule><AllowedMethod>GET</AllowedMethod><AllowedOrigin>*suffix</AllowedOrigin><AllowedOrigin>start*end</AllowedOrigin><AllowedOrigin>prefix*</AllowedOrigin></CORSRule>
`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		origin, method, headers string
		rule                    int // -1: no match
		any                     bool
	}{
		{"http://www.example1.com", "GET", "", 1, true},
		{"http://www.example1.com", "PUT", "", 0, false},
		{"http://www.example1.com", "DELETE", "X-Anything", 0, false},
		{"http://www.example3.com", "DELETE", "", 2, false},
		{"http://www.example3.com", "PUT", "", -1, false},
		{"http://www.example2.com", "DELETE", "x-amz-meta-header", -1, false},
		{"http://not.exists", "GET", "", 1, true},
		{"http://not.exists", "GET", "x-amz-meta-header1", 1, true},
		{"http://not.exists", "GET", "x-amz-meta-header2", -1, false},
		{"http://www.example.com", "PUT", "x-amz-meta-header2, X-Amz-Meta-Header3", 3, false},
		{"http://www.example.com", "PUT", "x-amz-meta-header1", -1, false},
		{"http://www.example.com", "PUT", "", 3, false},
		{"http://www.example.com", "POST", "", -1, false},
		{"http://www.example.com", "OPTIONS", "", -1, false},
	} {
		m, ok := c.Match(tc.origin, tc.method, RequestHeaders(tc.headers))
		switch {
		case tc.rule < 0 && ok:
			t.Errorf("%s %s %q matched rule %+v", tc.origin, tc.method, tc.headers, *m.Rule)
		case tc.rule >= 0 && (!ok || m.Rule != &c.Rules[tc.rule] || m.AnyOrigin != tc.any):
			t.Errorf("%s %s %q: got %v %+v, want rule %d any=%v", tc.origin, tc.method, tc.headers, ok, m, tc.rule, tc.any)
		}
	}
	// The wildcard origins of the last rule (ceph's test_cors_origin_response),
	// on a configuration holding only that rule.
	only := Config{Rules: c.Rules[4:]}
	for origin, want := range map[string]bool{
		"foo.suffix": true, "foo.bar": false, "foo.suffix.get": false,
		"start_end": true, "start1end": true, "startend": true, "0start12end": false,
		"prefix": true, "prefix.suffix": true, "bla.prefix": false, "": false,
	} {
		if _, ok := only.Match(origin, "GET", nil); ok != want {
			t.Errorf("origin %q: match %v, want %v", origin, ok, want)
		}
	}
}

func TestSetHeaders(t *testing.T) {
	age := 3000
	r := &Rule{AllowedMethods: []string{"PUT", "DELETE"}, ExposeHeaders: []string{"ETag", "x-amz-request-id"}, MaxAgeSeconds: &age}
	for _, tc := range []struct {
		name  string
		m     Match
		creds bool
		want  map[string]string
	}{
		{"any origin", Match{Rule: r, AnyOrigin: true}, false, map[string]string{
			"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "",
			"Access-Control-Allow-Methods": "PUT, DELETE", "Access-Control-Allow-Headers": "x-a, x-b",
			"Access-Control-Expose-Headers": "ETag, x-amz-request-id", "Access-Control-Max-Age": "3000",
			"Vary": vary,
		}},
		{"any origin, signed request", Match{Rule: r, AnyOrigin: true}, true, map[string]string{
			"Access-Control-Allow-Origin": "http://o.example", "Access-Control-Allow-Credentials": "true",
		}},
		{"named origin", Match{Rule: r}, false, map[string]string{
			"Access-Control-Allow-Origin": "http://o.example", "Access-Control-Allow-Credentials": "true",
		}},
	} {
		h := http.Header{}
		tc.m.SetHeaders(h, "http://o.example", []string{"x-a", "x-b"}, tc.creds)
		for k, v := range tc.want {
			if got := h.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", tc.name, k, got, v)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		rules(`<CORSRule><ID>a</ID><AllowedOrigin>http://a.example</AllowedOrigin><AllowedMethod>PUT</AllowedMethod><AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds></CORSRule>`),
		rules(`<CORSRule><AllowedOrigin>*.a.*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>`),
		rules(`<CORSRule><AllowedOrigin> * </AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>-1</MaxAgeSeconds></CORSRule>`),
		`<CORSConfiguration><CORSRule><ID>&#x9;x</ID></CORSRule></CORSConfiguration>`,
		`<x/>`, ``,
	} {
		f.Add([]byte(s), "http://a.example", "GET", "x-amz-meta-a, b")
	}
	f.Fuzz(func(t *testing.T, doc []byte, origin, method, hdrs string) {
		c, err := Parse(doc)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse error %v wraps neither sentinel", err)
			}
			return
		}
		if len(c.Rules) == 0 || len(c.Rules) > MaxRules {
			t.Fatalf("accepted %d rules", len(c.Rules))
		}
		for _, r := range c.Rules {
			if len(r.AllowedOrigins) == 0 || len(r.AllowedMethods) == 0 {
				t.Fatalf("accepted rule %+v", r)
			}
		}
		enc, err := c.Encode()
		if err != nil {
			t.Fatalf("Encode of a parsed configuration: %v", err)
		}
		back, err := Parse(enc)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("round trip of %q: %v\n%+v\n%+v", doc, err, back, c)
		}
		if m, ok := c.Match(origin, method, RequestHeaders(hdrs)); ok {
			m.SetHeaders(http.Header{}, origin, RequestHeaders(hdrs), false)
		}
	})
}
