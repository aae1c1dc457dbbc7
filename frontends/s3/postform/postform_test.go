package postform

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime/multipart"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2015, 12, 29, 1, 0, 0, 0, time.UTC)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Known answers computed with Python's hmac and hashlib, an implementation
// independent of this one.
const (
	kaSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	kaPolicy = "eyJleHBpcmF0aW9uIjoiMjAxNS0xMi0zMFQxMjowMDowMC4wMDBaIiwiY29uZGl0aW9ucyI6W3siYnVja2V0Ijoic2lndjRleGFtcGxlYnVja2V0In1dfQ=="
	kaV4     = "d7c5af4545b158e68eefbcaa6dc0c66be7ebf1d610d744d25acf9b93cac269bb"
	kaV2     = "5T7L59RuZAsCeTe3MV89P3tGXkI="
)

func kaSecretOf(ak string) (string, bool) { return kaSecret, ak == "AKIAIOSFODNN7EXAMPLE" }

func TestSignKnownAnswers(t *testing.T) {
	c := Credential{AccessKey: "AKIAIOSFODNN7EXAMPLE", Date: "20151229", Region: "us-east-1", Service: "s3"}
	if got := SignV4(kaSecret, c, kaPolicy); got != kaV4 {
		t.Errorf("SignV4 = %s, want %s", got, kaV4)
	}
	if got := SignV2(kaSecret, kaPolicy); got != kaV2 {
		t.Errorf("SignV2 = %s, want %s", got, kaV2)
	}
}

func TestAuthenticate(t *testing.T) {
	v4 := func(edit func(map[string]string)) map[string]string {
		f := map[string]string{
			"policy": kaPolicy, "x-amz-algorithm": AlgorithmV4,
			"x-amz-credential": "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request",
			"x-amz-date":       "20151229T000000Z", "x-amz-signature": kaV4,
		}
		if edit != nil {
			edit(f)
		}
		return f
	}
	v2 := func(edit func(map[string]string)) map[string]string {
		f := map[string]string{"policy": kaPolicy, "awsaccesskeyid": "AKIAIOSFODNN7EXAMPLE", "signature": kaV2}
		if edit != nil {
			edit(f)
		}
		return f
	}
	for _, tc := range []struct {
		name    string
		fields  map[string]string
		want    error
		version int
	}{
		{"v4", v4(nil), nil, 4},
		{"v4 upper-case hex", v4(func(f map[string]string) { f["x-amz-signature"] = strings.ToUpper(kaV4) }), nil, 4},
		{"v2", v2(nil), nil, 2},
		{"anonymous", map[string]string{"key": "k"}, nil, 0},
		{"v4 wrong signature", v4(func(f map[string]string) { f["x-amz-signature"] = strings.Repeat("0", 64) }), ErrSignatureMismatch, 0},
		{"v4 other policy", v4(func(f map[string]string) { f["policy"] = b64("{}") }), ErrSignatureMismatch, 0},
		{"v4 unknown key", v4(func(f map[string]string) {
			f["x-amz-credential"] = "NOBODY/20151229/us-east-1/s3/aws4_request"
		}), ErrUnknownAccessKey, 0},
		{"v4 no policy", v4(func(f map[string]string) { delete(f, "policy") }), ErrInvalidArgument, 0},
		{"v4 other algorithm", v4(func(f map[string]string) { f["x-amz-algorithm"] = "AWS4-ECDSA-P256-SHA256" }), ErrInvalidArgument, 0},
		{"v4 no algorithm", v4(func(f map[string]string) { delete(f, "x-amz-algorithm") }), ErrInvalidArgument, 0},
		{"v4 bad credential", v4(func(f map[string]string) { f["x-amz-credential"] = "AKIAIOSFODNN7EXAMPLE/20151229" }), ErrInvalidArgument, 0},
		{"v4 other service", v4(func(f map[string]string) {
			f["x-amz-credential"] = "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/iam/aws4_request"
		}), ErrInvalidArgument, 0},
		{"v4 date of another day", v4(func(f map[string]string) { f["x-amz-date"] = "20151230T000000Z" }), ErrInvalidArgument, 0},
		{"v4 bad date", v4(func(f map[string]string) { f["x-amz-date"] = "2015-12-29" }), ErrInvalidArgument, 0},
		{"v4 short signature", v4(func(f map[string]string) { f["x-amz-signature"] = "abc" }), ErrInvalidArgument, 0},
		{"v2 wrong signature", v2(func(f map[string]string) { f["signature"] = kaV2[1:] + "A" }), ErrSignatureMismatch, 0},
		{"v2 unknown key", v2(func(f map[string]string) { f["awsaccesskeyid"] = "nobody" }), ErrUnknownAccessKey, 0},
		{"v2 no signature", v2(func(f map[string]string) { delete(f, "signature") }), ErrInvalidArgument, 0},
		{"v2 no key", v2(func(f map[string]string) { delete(f, "awsaccesskeyid") }), ErrInvalidArgument, 0},
		{"v2 no policy", v2(func(f map[string]string) { delete(f, "policy") }), ErrInvalidArgument, 0},
		{"policy without signer", map[string]string{"policy": kaPolicy}, ErrInvalidArgument, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Authenticate(tc.fields, kaSecretOf)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil || a.Version != tc.version || (a.Version != 0) != (a.AccessKey == "AKIAIOSFODNN7EXAMPLE") {
				t.Fatalf("Authenticate = %+v, %v", a, err)
			}
		})
	}
}

const okExpiry = `"expiration": "2015-12-30T12:00:00.000Z"`

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want error
	}{
		{"all forms", `{` + okExpiry + `, "conditions": [{"bucket": "b"}, ["eq", "$acl", "private"], ["StArTs-WiTh", "$KeY", ""], ["content-length-range", 0, 1024], ["content-length-range", "1", "2"]]}`, nil},
		{"no fraction", `{"expiration": "2015-12-30T12:00:00Z", "conditions": []}`, nil},
		{"not base64", "%%%", ErrInvalidPolicy},
		{"not json", `expiration`, ErrInvalidPolicy},
		{"json list", `[]`, ErrInvalidPolicy},
		{"no expiration", `{"conditions": []}`, ErrInvalidPolicy},
		{"EXPIRATION", `{"EXPIRATION": "2015-12-30T12:00:00.000Z", "conditions": []}`, ErrInvalidPolicy},
		{"python str date", `{"expiration": "2015-12-30 12:00:00.123456+00:00", "conditions": []}`, ErrInvalidPolicy},
		{"number expiration", `{"expiration": 1451476800, "conditions": []}`, ErrInvalidPolicy},
		{"no conditions", `{` + okExpiry + `}`, ErrInvalidPolicy},
		{"CONDITIONS", `{` + okExpiry + `, "CONDITIONS": []}`, ErrInvalidPolicy},
		{"conditions not a list", `{` + okExpiry + `, "conditions": {"bucket": "b"}}`, ErrInvalidPolicy},
		{"empty object", `{` + okExpiry + `, "conditions": [{}]}`, ErrInvalidPolicy},
		{"two fields in one object", `{` + okExpiry + `, "conditions": [{"a": "1", "b": "2"}]}`, ErrInvalidPolicy},
		{"object value not a string", `{` + okExpiry + `, "conditions": [{"a": 1}]}`, ErrInvalidPolicy},
		{"two elements", `{` + okExpiry + `, "conditions": [["eq", "$a"]]}`, ErrInvalidPolicy},
		{"field without $", `{` + okExpiry + `, "conditions": [["eq", "a", "1"]]}`, ErrInvalidPolicy},
		{"lone $", `{` + okExpiry + `, "conditions": [["eq", "$", "1"]]}`, ErrInvalidPolicy},
		{"unknown op", `{` + okExpiry + `, "conditions": [["ends-with", "$a", "1"]]}`, ErrInvalidPolicy},
		{"range with one bound", `{` + okExpiry + `, "conditions": [["content-length-range", 0]]}`, ErrInvalidPolicy},
		{"negative range", `{` + okExpiry + `, "conditions": [["content-length-range", -1, 0]]}`, ErrInvalidPolicy},
		{"reversed range", `{` + okExpiry + `, "conditions": [["content-length-range", 10, 1]]}`, ErrInvalidPolicy},
		{"fractional range", `{` + okExpiry + `, "conditions": [["content-length-range", 0.5, 1]]}`, ErrInvalidPolicy},
		{"condition is a string", `{` + okExpiry + `, "conditions": ["bucket"]}`, ErrInvalidPolicy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := b64(tc.doc)
			if tc.name == "not base64" {
				in = tc.doc
			}
			_, err := ParsePolicy(in)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("ParsePolicy = %v, want %v", err, tc.want)
			}
		})
	}
}

// The condition matching, with the cases of ceph s3-tests'
// test_post_object_* and AWS's "Creating a POST policy".
func TestCheck(t *testing.T) {
	policy := func(conds string) Policy {
		t.Helper()
		p, err := ParsePolicy(b64(`{` + okExpiry + `, "conditions": [` + conds + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := `{"bucket": "b"}, ["starts-with", "$key", "foo"], {"acl": "private"}, ["starts-with", "$Content-Type", "text/plain"], ["content-length-range", 0, 1024]`
	fields := func(kv ...string) map[string]string {
		f := map[string]string{"bucket": "b", "key": "foo.txt", "acl": "private", "content-type": "text/plain",
			"policy": "p", "awsaccesskeyid": "a", "signature": "s"}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "<absent>" {
				delete(f, kv[i])
			} else {
				f[kv[i]] = kv[i+1]
			}
		}
		return f
	}
	for _, tc := range []struct {
		name   string
		conds  string
		fields map[string]string
		now    time.Time
		ok     bool
	}{
		{"all hold", base, fields(), testNow, true},
		{"expired", base, fields(), time.Date(2015, 12, 30, 12, 0, 0, 0, time.UTC), false},
		{"case-insensitive names", `{"bUcKeT": "b"}, ["StArTs-WiTh", "$KeY", "foo"], {"AcL": "private"}, ["starts-with", "$CoNtEnT-TyPe", "text/plain"]`, fields(), testNow, true},
		{"values are case-sensitive", `{"bucket": "b"}, ["starts-with", "$key", "FOO"], {"acl": "private"}, ["starts-with", "$content-type", ""]`, fields(), testNow, false},
		{"wrong bucket", base, fields("bucket", "other"), testNow, false},
		{"no bucket condition", `["starts-with", "$key", "foo"], {"acl": "private"}, ["starts-with", "$Content-Type", "text/plain"]`, fields(), testNow, false},
		{"key prefix fails", base, fields("key", "bar.txt"), testNow, false},
		{"eq fails", base, fields("acl", "public-read"), testNow, false},
		{"eq on a list", base + `, ["eq", "$x-amz-meta-foo", ""]`, fields("x-amz-meta-foo", "barclamp"), testNow, false},
		{"field without condition", base, fields("x-amz-meta-foo", "barclamp"), testNow, false},
		{"condition on absent field", base + `, ["starts-with", "$x-amz-meta-foo", "bar"]`, fields(), testNow, false},
		{"empty prefix on absent field", base + `, ["starts-with", "$x-amz-meta-foo", ""]`, fields(), testNow, true},
		{"empty prefix takes anything", base + `, ["starts-with", "$x-amz-meta-foo", ""]`, fields("x-amz-meta-foo", "anything"), testNow, true},
		{"x-ignore- needs no condition", base, fields("x-ignore-foo", "bar"), testNow, true},
		{"x-amz-signature needs none", base, fields("x-amz-signature", "s"), testNow, true},
		{"x-amz-credential needs one", base, fields("x-amz-credential", "c"), testNow, false},
		{"escaped dollar is literal", `{"bucket": "b"}, ["starts-with", "$key", "\\$foo"], {"acl": "private"}, ["starts-with", "$Content-Type", "text/plain"]`, fields("key", `\$foo.txt`), testNow, true},
		{"no content type, no condition", `{"bucket": "b"}, ["starts-with", "$key", "foo"], {"acl": "private"}`, fields("content-type", "<absent>"), testNow, true},
		{"success_action_status needs one", base, fields("success_action_status", "201"), testNow, false},
		{"success_action_status covered", base + `, {"success_action_status": "201"}`, fields("success_action_status", "201"), testNow, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := policy(tc.conds).Check(tc.fields, tc.now)
			if tc.ok && err != nil {
				t.Fatalf("Check: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrPolicyDenied) {
				t.Fatalf("Check = %v, want ErrPolicyDenied", err)
			}
		})
	}
}

func TestLengthRange(t *testing.T) {
	p, err := ParsePolicy(b64(`{` + okExpiry + `, "conditions": [["content-length-range", 512, 1000]]}`))
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi, ok := p.LengthRange(); !ok || lo != 512 || hi != 1000 {
		t.Fatalf("LengthRange = %d %d %v", lo, hi, ok)
	}
	p, _ = ParsePolicy(b64(`{` + okExpiry + `, "conditions": []}`))
	if _, _, ok := p.LengthRange(); ok {
		t.Fatal("range without a condition")
	}
}

// form builds a multipart body: name/value pairs, then the file.
func form(t testing.TB, fileName, file string, kv ...string) (string, []byte) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i := 0; i+1 < len(kv); i += 2 {
		if err := w.WriteField(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if file != "<none>" {
		fw, err := w.CreateFormFile("file", fileName)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write([]byte(file))
	}
	_ = w.WriteField("after", "ignored")
	_ = w.Close()
	return w.FormDataContentType(), b.Bytes()
}

func TestRead(t *testing.T) {
	ct, body := form(t, "photo.jpg", "the file", "Key", "user/${filename}", "X-Amz-Meta-Colour", "blue", "aCl", "private")
	f, err := Read(bytes.NewReader(body), ct, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if f.Fields["key"] != "user/${filename}" || f.Fields["x-amz-meta-colour"] != "blue" || f.Fields["acl"] != "private" || len(f.Fields) != 3 {
		t.Fatalf("fields %v", f.Fields)
	}
	if k, err := f.Key(); err != nil || k != "user/photo.jpg" {
		t.Fatalf("Key = %q, %v", k, err)
	}
	if b, err := io.ReadAll(f.File); err != nil || string(b) != "the file" {
		t.Fatalf("file %q, %v", b, err)
	}

	for _, tc := range []struct {
		name string
		ct   string
		body []byte
		max  int64
		want error
	}{
		{"not multipart", "application/x-www-form-urlencoded", []byte("key=a"), 1024, ErrNotMultipart},
		{"no content type", "", nil, 1024, ErrNotMultipart},
		{"no boundary", "multipart/form-data", body, 1024, ErrMalformed},
		{"garbage", ct, []byte("not a form at all"), 1024, ErrMalformed},
		{"fields too large", ct, body, 20, ErrFieldsTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Read(bytes.NewReader(tc.body), tc.ct, tc.max); !errors.Is(err, tc.want) {
				t.Fatalf("Read = %v, want %v", err, tc.want)
			}
		})
	}
	ct, body = form(t, "", "<none>", "key", "k")
	if _, err := Read(bytes.NewReader(body), ct, 1024); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("no file: %v", err)
	}
	ct, body = form(t, "", "x", "key", "k", "KEY", "j")
	if _, err := Read(bytes.NewReader(body), ct, 1024); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("duplicate field: %v", err)
	}
	ct, body = form(t, "", "x", "acl", "private")
	f, err = Read(bytes.NewReader(body), ct, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Key(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("no key: %v", err)
	}
}

func TestTaggingQuery(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"<Tagging><TagSet><Tag><Key>0</Key><Value>0</Value></Tag><Tag><Key>1</Key><Value>1</Value></Tag></TagSet></Tagging>", "0=0&1=1"},
		{"<Tagging><TagSet><Tag><Key>a b</Key><Value>c&amp;d=e</Value></Tag></TagSet></Tagging>", "a+b=c%26d%3De"},
		{"<Tagging><TagSet><Tag><Key>k</Key></Tag></TagSet></Tagging>", "k="},
		{"<Tagging><TagSet></TagSet></Tagging>", ""},
	} {
		if got, err := TaggingQuery(tc.in); err != nil || got != tc.want {
			t.Errorf("TaggingQuery(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"k=v", "<Tagging><TagSet><Tag><Value>v</Value></Tag></TagSet></Tagging>", "<Other/>", strings.Repeat("x", maxTagging+1)} {
		if _, err := TaggingQuery(in); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("TaggingQuery(%.40q) = %v", in, err)
		}
	}
}
