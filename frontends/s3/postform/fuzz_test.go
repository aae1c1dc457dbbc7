package postform

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// sentinel says whether err wraps one of the package's errors.
func sentinel(err error) bool {
	for _, s := range []error{ErrNotMultipart, ErrMalformed, ErrFieldsTooLarge, ErrInvalidArgument,
		ErrInvalidPolicy, ErrPolicyDenied, ErrUnknownAccessKey, ErrSignatureMismatch} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func FuzzRead(f *testing.F) {
	ct, body := form(f, "a.txt", "data", "key", "${filename}", "policy", kaPolicy, "x-amz-meta-a", "b")
	f.Add(ct, body)
	f.Add(ct, body[:len(body)/2])
	f.Add("multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc\r\n--x--\r\n"))
	f.Add("multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data\r\n\r\nabc\r\n--x--\r\n"))
	f.Add("text/plain", []byte("key=a"))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		const max = 256
		fm, err := Read(bytes.NewReader(body), ct, max)
		if err != nil {
			if !sentinel(err) {
				t.Fatalf("Read error %v wraps no sentinel", err)
			}
			return
		}
		n := 0
		for k, v := range fm.Fields {
			n += len(k) + len(v)
			if k == "file" || k == "" {
				t.Fatalf("field %q kept", k)
			}
		}
		if n > max {
			t.Fatalf("kept %d bytes of fields, bound %d", n, max)
		}
		_, _ = io.Copy(io.Discard, fm.File)
		if k, err := fm.Key(); err == nil && k == "" {
			t.Fatal("empty key accepted")
		}
	})
}

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{
		`{"expiration": "2015-12-30T12:00:00.000Z", "conditions": [{"bucket": "b"}, ["starts-with", "$key", ""], ["content-length-range", 0, 10], ["eq", "$acl", "private"]]}`,
		`{"expiration": "2015-12-30T12:00:00Z", "conditions": [{}]}`,
		`{"expiration": "x", "conditions": [["content-length-range", "1", "-2"]]}`,
		`{"conditions": []}`, `[]`, ``,
	} {
		f.Add(b64(s), "b", "foo.txt")
	}
	f.Add("%%%", "", "")
	f.Fuzz(func(t *testing.T, policy, bucket, key string) {
		p, err := ParsePolicy(policy)
		if err != nil {
			if !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("ParsePolicy error %v is not ErrInvalidPolicy", err)
			}
			return
		}
		for _, c := range p.Conditions {
			switch c.Op {
			case OpEq, OpStartsWith:
				if c.Field == "" {
					t.Fatalf("condition without a field: %+v", c)
				}
			case OpLengthRange:
				if c.Min < 0 || c.Max < c.Min {
					t.Fatalf("bad range %+v", c)
				}
			default:
				t.Fatalf("unknown op %+v", c)
			}
		}
		err = p.Check(map[string]string{"bucket": bucket, "key": key}, testNow)
		if err != nil && !errors.Is(err, ErrPolicyDenied) {
			t.Fatalf("Check error %v is not ErrPolicyDenied", err)
		}
	})
}

func FuzzAuthenticate(f *testing.F) {
	f.Add(kaPolicy, AlgorithmV4, "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request", "20151229T000000Z", kaV4, "", "")
	f.Add(kaPolicy, "", "", "", "", "AKIAIOSFODNN7EXAMPLE", kaV2)
	f.Add("", "", "/a//b/aws4_request", "", "", "", "")
	f.Fuzz(func(t *testing.T, policy, algo, cred, date, sig4, ak, sig2 string) {
		fields := map[string]string{}
		for k, v := range map[string]string{"policy": policy, "x-amz-algorithm": algo, "x-amz-credential": cred,
			"x-amz-date": date, "x-amz-signature": sig4, "awsaccesskeyid": ak, "signature": sig2} {
			if v != "" {
				fields[k] = v
			}
		}
		a, err := Authenticate(fields, kaSecretOf)
		if err != nil {
			if !sentinel(err) {
				t.Fatalf("Authenticate error %v wraps no sentinel", err)
			}
			return
		}
		if a.Version != 0 && a.AccessKey != "AKIAIOSFODNN7EXAMPLE" {
			t.Fatalf("authenticated as %+v", a)
		}
		if a.Version == 0 && len(fields) != 0 {
			t.Fatalf("fields %v taken as anonymous", fields)
		}
	})
}

func FuzzTaggingQuery(f *testing.F) {
	f.Add("<Tagging><TagSet><Tag><Key>0</Key><Value>0</Value></Tag></TagSet></Tagging>")
	f.Add("<Tagging><TagSet><Tag><Value>0</Value></Tag></TagSet></Tagging>")
	f.Add("")
	f.Fuzz(func(t *testing.T, doc string) {
		if _, err := TaggingQuery(doc); err != nil && !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("TaggingQuery error %v", err)
		}
	})
}
