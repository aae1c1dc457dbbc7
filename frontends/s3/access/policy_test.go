package access

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustPolicy(t testing.TB, doc string, k Kind) *Policy {
	t.Helper()
	p, err := ParsePolicy([]byte(doc), k)
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return p
}

func values(m map[string][]string) func(string) ([]string, bool) {
	return func(k string) ([]string, bool) { v, ok := m[k]; return v, ok }
}

func TestWildcard(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"a*", "abc", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"arn:aws:s3:::b/*", "arn:aws:s3:::b/x/y", true}, {"arn:aws:s3:::b/*", "arn:aws:s3:::b", false},
		{"*a*b", "xxaxxbxb", true}, {"*a*b", "xxaxxbx", false}, {"", "", true}, {"", "a", false},
		{"a[b", "a[b", true},
		// A '*' or '?' in the name is a character like any other.
		{"arn:aws:s3:::b/*", "arn:aws:s3:::b/*x", true}, {"a*", "a*b", true}, {"*", "**", true},
		{"a*c", "a*", false}, {"?", "*", true}, {"a?", "a*b", false},
	} {
		if got := wildcard(tc.p, tc.s); got != tc.want {
			t.Errorf("wildcard(%q, %q) = %v", tc.p, tc.s, got)
		}
	}
}

func TestPolicyEval(t *testing.T) {
	p := mustPolicy(t, `{"Version":"2012-10-17","Statement":[
	  {"Sid":"pub","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/pub/*"},
	  {"Effect":"Allow","Principal":{"AWS":["arn:aws:iam::000000000000:user/alice"]},"Action":["s3:Put*","s3:ListBucket"],"Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]},
	  {"Effect":"Deny","Principal":{"AWS":"*"},"Action":"s3:*","Resource":"arn:aws:s3:::b/secret/*"},
	  {"Effect":"Allow","Principal":{"CanonicalUser":"carol"},"NotAction":"s3:Delete*","Resource":"arn:aws:s3:::b/*"},
	  {"Effect":"Allow","Principal":{"AWS":"000000000000"},"Action":"s3:GetObjectAcl","NotResource":"arn:aws:s3:::b/private/*"},
	  {"Effect":"Allow","Principal":{"AWS":"arn:aws:iam:::user/dave"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/dave/*"}
	]}`, Resource)
	for _, tc := range []struct {
		who, action, res string
		want             Effect
	}{
		{"", "s3:GetObject", "arn:aws:s3:::b/pub/x", Allow},
		{"", "s3:GetObject", "arn:aws:s3:::b/other", None},
		{"", "s3:PutObject", "arn:aws:s3:::b/pub/x", None},
		{"alice", "s3:PutObject", "arn:aws:s3:::b/k", Allow},
		{"alice", "S3:putobjectacl", "arn:aws:s3:::b/k", Allow},
		{"alice", "s3:ListBucket", "arn:aws:s3:::b", Allow},
		{"bob", "s3:PutObject", "arn:aws:s3:::b/k", None},
		{"alice", "s3:PutObject", "arn:aws:s3:::b/secret/k", Deny},
		{"", "s3:GetObject", "arn:aws:s3:::b/secret/k", Deny},
		{"carol", "s3:GetObject", "arn:aws:s3:::b/k", Allow},
		{"carol", "s3:DeleteObject", "arn:aws:s3:::b/k", None},
		{"bob", "s3:GetObjectAcl", "arn:aws:s3:::b/k", Allow},
		{"bob", "s3:GetObjectAcl", "arn:aws:s3:::b/private/k", None},
		{"", "s3:GetObjectAcl", "arn:aws:s3:::b/k", None},
		{"dave", "s3:GetObject", "arn:aws:s3:::b/dave/k", Allow},
		{"carol", "s3:DeleteObject", "arn:aws:s3:::b/dave/k", None},
	} {
		r := &Request{Principal: tc.who, Action: tc.action, Resource: tc.res}
		if got := p.Eval(r); got != tc.want {
			t.Errorf("%q %s %s: %v, want %v", tc.who, tc.action, tc.res, got, tc.want)
		}
	}
	if !p.Public() || !p.Within("b") || p.Within("c") {
		t.Errorf("Public %v Within(b) %v Within(c) %v", p.Public(), p.Within("b"), p.Within("c"))
	}
}

func TestConditions(t *testing.T) {
	for _, tc := range []struct {
		cond string
		ctx  map[string][]string
		want bool
	}{
		{`{"StringEquals":{"s3:prefix":"home/"}}`, map[string][]string{"s3:prefix": {"home/"}}, true},
		{`{"StringEquals":{"s3:prefix":"home/"}}`, map[string][]string{"s3:prefix": {"Home/"}}, false},
		{`{"StringEquals":{"s3:prefix":"home/"}}`, nil, false},
		{`{"StringEqualsIfExists":{"s3:prefix":"home/"}}`, nil, true},
		{`{"StringNotEquals":{"s3:prefix":"home/"}}`, nil, true},
		{`{"StringNotEquals":{"s3:prefix":["a","b"]}}`, map[string][]string{"s3:prefix": {"b"}}, false},
		{`{"StringEqualsIgnoreCase":{"s3:x-amz-acl":"PUBLIC-READ"}}`, map[string][]string{"s3:x-amz-acl": {"public-read"}}, true},
		{`{"StringLike":{"s3:prefix":["home/*","tmp/?"]}}`, map[string][]string{"s3:prefix": {"tmp/x"}}, true},
		{`{"StringNotLike":{"s3:prefix":"home/*"}}`, map[string][]string{"s3:prefix": {"home/a"}}, false},
		{`{"NumericLessThanEquals":{"s3:max-keys":"10"}}`, map[string][]string{"s3:max-keys": {"10"}}, true},
		{`{"NumericLessThan":{"s3:max-keys":10}}`, map[string][]string{"s3:max-keys": {"10"}}, false},
		{`{"NumericGreaterThan":{"s3:max-keys":"10"}}`, map[string][]string{"s3:max-keys": {"x"}}, false},
		{`{"NumericNotEquals":{"s3:max-keys":"10"}}`, map[string][]string{"s3:max-keys": {"11"}}, true},
		{`{"DateGreaterThan":{"aws:CurrentTime":"2020-01-01T00:00:00Z"}}`, map[string][]string{"aws:currenttime": {"2026-01-01T00:00:00Z"}}, true},
		{`{"DateLessThan":{"aws:CurrentTime":"2020-01-01T00:00:00Z"}}`, map[string][]string{"aws:currenttime": {"2026-01-01T00:00:00Z"}}, false},
		{`{"Bool":{"aws:SecureTransport":"false"}}`, map[string][]string{"aws:securetransport": {"false"}}, true},
		{`{"Bool":{"aws:SecureTransport":false}}`, map[string][]string{"aws:securetransport": {"true"}}, false},
		{`{"IpAddress":{"aws:SourceIp":"127.0.0.1/32"}}`, map[string][]string{"aws:sourceip": {"127.0.0.1"}}, true},
		{`{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","::1"]}}`, map[string][]string{"aws:sourceip": {"127.0.0.1"}}, false},
		{`{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","::1"]}}`, map[string][]string{"aws:sourceip": {"::1"}}, true},
		{`{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, map[string][]string{"aws:sourceip": {"127.0.0.1"}}, true},
		{`{"Null":{"s3:x-amz-acl":"true"}}`, nil, true},
		{`{"Null":{"s3:x-amz-acl":"false"}}`, nil, false},
		{`{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, map[string][]string{"s3:requestobjecttagkeys": {"c", "b"}}, true},
		{`{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, nil, false},
		{`{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, map[string][]string{"s3:requestobjecttagkeys": {"c", "b"}}, false},
		{`{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, map[string][]string{"s3:requestobjecttagkeys": {"a"}}, true},
		{`{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, nil, true},
		{`{"StringEquals":{"s3:RequestObjectTag/Project":"x"}}`, map[string][]string{"s3:requestobjecttag/Project": {"x"}}, true},
		{`{"StringEquals":{"aws:username":"alice"}}`, nil, true},
		{`{"StringEquals":{"aws:username":"bob"}}`, nil, false},
		{`{"StringEquals":{"s3:prefix":"a"},"NumericEquals":{"s3:max-keys":"1"}}`, map[string][]string{"s3:prefix": {"a"}, "s3:max-keys": {"2"}}, false},
	} {
		doc := fmt.Sprintf(`{"Statement":{"Effect":"Allow","Action":"s3:ListBucket","Resource":"*","Condition":%s}}`, tc.cond)
		p := mustPolicy(t, doc, Identity)
		r := &Request{Principal: "alice", Action: "s3:ListBucket", Resource: "arn:aws:s3:::b", Values: values(tc.ctx)}
		if got := p.Eval(r) == Allow; got != tc.want {
			t.Errorf("%s with %v: %v, want %v", tc.cond, tc.ctx, got, tc.want)
		}
	}
}

func TestParsePolicyErrors(t *testing.T) {
	ok := `"Effect":"Allow","Action":"s3:*","Resource":"*"`
	for _, tc := range []struct {
		doc  string
		kind Kind
	}{
		{``, Identity}, {`{}`, Identity}, {`{"Statement":[]}`, Identity}, {`[]`, Identity},
		{`{"Statement":[{` + ok + `}]} x`, Identity},
		{`{"Version":"2013-01-01","Statement":[{` + ok + `}]}`, Identity},
		{`{"Statement":[{` + ok + `,"Extra":1}]}`, Identity},
		{`{"Statement":[{` + ok + `}],"Bogus":1}`, Identity},
		{`{"Statement":[{"Effect":"Maybe","Action":"s3:*","Resource":"*"}]}`, Identity},
		{`{"Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*"}]}`, Identity},
		{`{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:ec2:::x"}]}`, Identity},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"arn:aws:iam::1:user/x"}]}`, Resource},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"iam:PutUserPolicy","Resource":"*"}]}`, Resource},
		{`{"Statement":[{"Effect":"Allow","Action":"s3:*"}]}`, Identity},
		{`{"Statement":[{"Effect":"Allow","Resource":"*"}]}`, Identity},
		{`{"Statement":[{"Effect":"Allow","Action":"s3:*","NotAction":"s3:Get*","Resource":"*"}]}`, Identity},
		{`{"Statement":[{` + ok + `,"Principal":"*"}]}`, Identity},
		{`{"Statement":[{` + ok + `}]}`, Resource},
		{`{"Statement":[{` + ok + `,"Principal":"alice"}]}`, Resource},
		{`{"Statement":[{` + ok + `,"Principal":{"AWS":"alice"}}]}`, Resource},
		{`{"Statement":[{` + ok + `,"Principal":{"Nobody":"x"}}]}`, Resource},
		{`{"Statement":[{` + ok + `,"Principal":"*","NotPrincipal":"*"}]}`, Resource},
		{`{"Statement":[{` + ok + `,"NotPrincipal":{"AWS":"arn:aws:iam::000000000000:user/alice"}}]}`, Resource}, // Allow: IAM supports NotPrincipal with Deny only
		{`{"Statement":[{` + ok + `,"Condition":{"StringSortOf":{"s3:prefix":"a"}}}]}`, Identity},
		{`{"Statement":[{` + ok + `,"Condition":{"NumericEquals":{"s3:max-keys":"ten"}}}]}`, Identity},
		{`{"Statement":[{` + ok + `,"Condition":{"IpAddress":{"aws:SourceIp":"1.2.3.999/8"}}}]}`, Identity},
		{`{"Statement":[{` + ok + `,"Condition":{"DateLessThan":{"aws:CurrentTime":"yesterday"}}}]}`, Identity},
		{`{"Statement":[{` + ok + `,"Condition":{"Bool":{"aws:SecureTransport":"maybe"}}}]}`, Identity},
		{`{"Statement":[{` + ok + `,"Condition":{"StringEquals":{"s3:prefix":[]}}}]}`, Identity},
		{`{"Statement":[{"Sid":"a",` + ok + `},{"Sid":"a",` + ok + `}]}`, Identity},
	} {
		if _, err := ParsePolicy([]byte(tc.doc), tc.kind); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q (kind %d): %v, want ErrMalformed", tc.doc, tc.kind, err)
		}
	}
}

func TestPublic(t *testing.T) {
	for _, tc := range []struct {
		stmt string
		want bool
	}{
		{`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"`, true},
		{`"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"`, true},
		{`"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"`, false},
		{`"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/a"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"`, false},
		{`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, false},
		{`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"IpAddress":{"aws:SourceIp":"0.0.0.0/1"}}`, true},
		{`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"StringEquals":{"aws:SourceAccount":"1"}}`, false},
		{`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"StringLike":{"s3:prefix":"a"}}`, true},
	} {
		p := mustPolicy(t, `{"Statement":[{`+tc.stmt+`}]}`, Resource)
		if got := p.Public(); got != tc.want {
			t.Errorf("%s: public %v, want %v", tc.stmt, got, tc.want)
		}
	}
}

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*"}]}`))
	f.Add([]byte(`{"Version":"2012-10-17","Statement":{"Effect":"Deny","Principal":{"AWS":["*"]},"NotAction":["s3:Get*"],"Resource":["arn:aws:s3:::b/[x*"],"Condition":{"ForAnyValue:StringLikeIfExists":{"s3:prefix":["a*",1,true]},"IpAddress":{"aws:SourceIp":"10.0.0.0/8"},"Null":{"k":"true"}}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, k := range []Kind{Identity, Resource} {
			p, err := ParsePolicy(raw, k)
			if err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("error %v is not ErrMalformed", err)
				}
				continue
			}
			if len(p.Statements) == 0 {
				t.Fatal("accepted a policy without statements")
			}
			ctx := map[string][]string{"s3:prefix": {"a"}, "aws:sourceip": {"127.0.0.1"}, "k": {strings.Repeat("x", 3)}}
			for _, who := range []string{"", "alice"} {
				_ = p.Eval(&Request{Principal: who, Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", Values: values(ctx)})
			}
			_, _ = p.Public(), p.Within("b")
		}
	})
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		resources string
		bucket    string
		want      bool
	}{
		{`"arn:aws:s3:::b"`, "b", true},
		{`["arn:aws:s3:::b","arn:aws:s3:::b/*"]`, "b", true},
		{`"arn:aws:s3:::b/pre/fix"`, "b", true},
		{`"*"`, "b", true},
		{`["arn:aws:s3:::*","arn:aws:s3:::*/*"]`, "b", true},
		{`"arn:aws:s3:::b*"`, "b", true},
		{`"arn:aws:s3:::?"`, "b", true},
		{`"arn:aws:s3:::?/k"`, "b", true},
		{`"arn:aws:s3:::*x/k"`, "b", true}, // an object named x/k
		{`"arn:aws:s3:::c"`, "b", false},
		{`"arn:aws:s3:::bb"`, "b", false},
		{`"arn:aws:s3:::bb/*"`, "b", false},
		{`"arn:aws:s3:::??"`, "b", false}, // b/ and no key
		{`"arn:aws:s3:::???"`, "b", true}, // b/x
		{`"arn:aws:s3:::c*"`, "b", false},
		{`["arn:aws:s3:::b/*","arn:aws:s3:::c/*"]`, "b", false},
	} {
		p := mustPolicy(t, `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":`+tc.resources+`}]}`, Resource)
		if got := p.Within(tc.bucket); got != tc.want {
			t.Errorf("%s within %s: %v, want %v", tc.resources, tc.bucket, got, tc.want)
		}
	}
}

// extendsOracle is extends by brute force: some string made of the
// prefix and one to three characters of an alphabet matches.
func extendsOracle(pattern, prefix string) bool {
	var try func(s string, n int) bool
	try = func(s string, n int) bool {
		if len(s) > len(prefix) && wildcard(pattern, s) {
			return true
		}
		if n == 0 {
			return false
		}
		for _, c := range "ab/" {
			if try(s+string(c), n-1) {
				return true
			}
		}
		return false
	}
	return try(prefix, 3)
}

func FuzzExtends(f *testing.F) {
	for _, s := range [][2]string{{"a*b", "ab"}, {"*", ""}, {"??", "a"}, {"a?b", "ab/"}, {"*a*", "b"}, {"", "a"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, prefix string) {
		if len(pattern) > 8 || len(prefix) > 6 {
			return
		}
		// The oracle's suffixes are at most three characters of "ab/": it
		// decides exactly when what the pattern needs past the prefix is
		// made of those and short enough; otherwise it can only say yes.
		got := extends(pattern, prefix)
		want := extendsOracle(pattern, prefix)
		if want && !got {
			t.Fatalf("extends(%q, %q) = false, but a completion matches", pattern, prefix)
		}
		if got && !want && strings.Trim(pattern, "ab/*?") == "" && len(pattern) <= 3 {
			t.Fatalf("extends(%q, %q) = true, but no completion matches", pattern, prefix)
		}
	})
}

// FuzzWildcard checks wildcard against a regular expression of the same
// pattern ('*' any run, '?' one character, the rest literal).
func FuzzWildcard(f *testing.F) {
	f.Add("arn:aws:s3:::b/*", "arn:aws:s3:::b/*x")
	f.Add("*a?b*", "xa*b")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 16 || len(s) > 32 || !utf8.ValidString(pattern) || !utf8.ValidString(s) {
			return
		}
		var re strings.Builder
		re.WriteString(`(?s)^`)
		for _, c := range pattern {
			switch c {
			case '*':
				re.WriteString(`.*`)
			case '?':
				re.WriteString(`.`)
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString(`$`)
		// '?' is one byte to wildcard: compare on ASCII names only.
		if strings.ContainsRune(pattern, '?') && !isASCII(s) {
			return
		}
		if want := regexp.MustCompile(re.String()).MatchString(s); wildcard(pattern, s) != want {
			t.Fatalf("wildcard(%q, %q) = %v, want %v", pattern, s, !want, want)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
