package s3

import (
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/frontends/s3/sse"
)

func ssecHeaders(prefix string, key []byte) http.Header {
	h := http.Header{}
	sum := md5.Sum(key)
	h.Set(prefix+"server-side-encryption-customer-algorithm", "AES256")
	h.Set(prefix+"server-side-encryption-customer-key", base64.StdEncoding.EncodeToString(key))
	h.Set(prefix+"server-side-encryption-customer-key-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	return h
}

func TestParseSSEHeaders(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	good := ssecHeaders("x-amz-", key)
	with := func(h http.Header, kv ...string) http.Header {
		out := h.Clone()
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				out.Del(kv[i])
			} else {
				out.Set(kv[i], kv[i+1])
			}
		}
		return out
	}
	ctx := base64.StdEncoding.EncodeToString([]byte(`{"a":"b"}`))
	tests := []struct {
		name     string
		h        http.Header
		wantKind sse.Kind
		wantCode string
	}{
		{"none", http.Header{}, "", ""},
		{"sse-c", good, sse.KindC, ""},
		{"sse-c without algorithm", with(good, hdrSSECAlgo, ""), "", "InvalidArgument"},
		{"sse-c other algorithm", with(good, hdrSSECAlgo, "AES128"), "", "InvalidEncryptionAlgorithmError"},
		{"sse-c without key", with(good, hdrSSECKey, ""), "", "InvalidArgument"},
		{"sse-c short key", with(good, hdrSSECKey, "c2hvcnQ="), "", "InvalidArgument"},
		{"sse-c key not base64", with(good, hdrSSECKey, "!!"), "", "InvalidArgument"},
		{"sse-c without md5", with(good, hdrSSECKeyMD5, ""), "", "InvalidArgument"},
		{"sse-c wrong md5", with(good, hdrSSECKeyMD5, "AAAAAAAAAAAAAAAAAAAAAA=="), "", "InvalidArgument"},
		{"sse-c and sse-s3", with(good, hdrSSE, "AES256"), "", "InvalidArgument"},
		{"sse-s3", with(http.Header{}, hdrSSE, "AES256"), sse.KindS3, ""},
		{"sse-s3 with a kms key", with(http.Header{}, hdrSSE, "AES256", hdrSSEKMSKey, "a"), "", "InvalidArgument"},
		{"kms key without kms", with(http.Header{}, hdrSSEKMSKey, "a"), "", "InvalidArgument"},
		{"unknown method", with(http.Header{}, hdrSSE, "AES512"), "", "InvalidArgument"},
		{"kms", with(http.Header{}, hdrSSE, "aws:kms", hdrSSEKMSKey, "arn:aws:kms:us-east-1:1:key/alpha", hdrSSEContext, ctx), sse.KindKMS, ""},
		{"kms bad context", with(http.Header{}, hdrSSE, "aws:kms", hdrSSEContext, "bm90IGpzb24="), "", "InvalidArgument"},
		{"kms bad key name", with(http.Header{}, hdrSSE, "aws:kms", hdrSSEKMSKey, "a b"), "", "KMS.NotFoundException"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseSSEHeaders(tc.h)
			if tc.wantCode != "" {
				if err == nil || toAPIError(err).Code != tc.wantCode || toAPIError(err).Status != 400 {
					t.Fatalf("err %v, want %s 400", err, tc.wantCode)
				}
				return
			}
			if err != nil || r.kind != tc.wantKind {
				t.Fatalf("kind %q err %v, want %q", r.kind, err, tc.wantKind)
			}
		})
	}
	c, err := parseSSEC(ssecHeaders("x-amz-copy-source-", key), copySourcePfx)
	if err != nil || c.kind != sse.KindC || string(c.customerKey) != string(key) {
		t.Fatalf("copy-source SSE-C: %+v %v", c, err)
	}
	if c, _ := parseSSEC(good, copySourcePfx); c.kind != "" {
		t.Fatal("the destination's SSE-C headers were read as the source's")
	}
}

// A read (GET, HEAD, GetObjectAttributes) refuses the write-only
// encryption headers, 400 InvalidArgument as AWS, and takes SSE-C's.
func TestNoWriteSSEHeadersOnRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
		bad  bool
	}{
		{"none", http.Header{}, false},
		{"sse-c", ssecHeaders("x-amz-", []byte(strings.Repeat("k", 32))), false},
		{"copy source sse-c", ssecHeaders("x-amz-copy-source-", []byte(strings.Repeat("k", 32))), false},
		{"sse-s3", http.Header{"X-Amz-Server-Side-Encryption": {"AES256"}}, true},
		{"kms", http.Header{"X-Amz-Server-Side-Encryption": {"aws:kms"}}, true},
		{"empty method", http.Header{"X-Amz-Server-Side-Encryption": {""}}, true},
		{"kms key alone", http.Header{"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": {"alpha"}}, true},
		{"kms context alone", http.Header{"X-Amz-Server-Side-Encryption-Context": {"e30="}}, true},
		{"bucket key flag", http.Header{"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled": {"true"}}, false},
	} {
		err := noWriteSSEHeaders(tc.h)
		if tc.bad != (err != nil) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if ae, ok := err.(*APIError); err != nil && (!ok || ae.Code != "InvalidArgument" || ae.Status != 400) {
			t.Errorf("%s: %v, want 400 InvalidArgument", tc.name, err)
		}
	}
}

func TestKMSKeyName(t *testing.T) {
	for in, want := range map[string]string{
		"alpha": "alpha", "arn:aws:kms:us-east-1:123:key/alpha": "alpha", "alias/beta": "beta",
		"arn:aws:kms:us-east-1:123:alias/beta": "beta", "key/x/y": "x/y",
	} {
		if got := kmsKeyName(in); got != want {
			t.Errorf("kmsKeyName(%q) = %q, want %q", in, got, want)
		}
	}
}

func testServerWithRing(t testing.TB) *Server {
	k, err := sse.NewKeys(make([]byte, 32), []sse.NamedKey{{Name: "alpha", Key: make([]byte, 32)}})
	if err != nil {
		t.Fatal(err)
	}
	return &Server{opt: Options{SSE: k}}
}

func TestParseSSEConfig(t *testing.T) {
	s := testServerWithRing(t)
	rule := func(inner string) string {
		return `<ServerSideEncryptionConfiguration><Rule>` + inner + `</Rule></ServerSideEncryptionConfiguration>`
	}
	for _, tc := range []struct {
		doc, code string
	}{
		{rule(`<ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault>`), ""},
		{rule(`<ApplyServerSideEncryptionByDefault><SSEAlgorithm>aws:kms</SSEAlgorithm><KMSMasterKeyID>alpha</KMSMasterKeyID></ApplyServerSideEncryptionByDefault><BucketKeyEnabled>true</BucketKeyEnabled>`), ""},
		{rule(`<ApplyServerSideEncryptionByDefault><SSEAlgorithm>aws:kms</SSEAlgorithm><KMSMasterKeyID>gamma</KMSMasterKeyID></ApplyServerSideEncryptionByDefault>`), "KMS.NotFoundException"},
		{rule(`<ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm><KMSMasterKeyID>alpha</KMSMasterKeyID></ApplyServerSideEncryptionByDefault>`), "InvalidArgument"},
		{rule(`<ApplyServerSideEncryptionByDefault><SSEAlgorithm>DES</SSEAlgorithm></ApplyServerSideEncryptionByDefault>`), "MalformedXML"},
		{rule(``), "MalformedXML"},
		{`<ServerSideEncryptionConfiguration></ServerSideEncryptionConfiguration>`, "MalformedXML"},
		{`<ServerSideEncryptionConfiguration>`, "MalformedXML"},
	} {
		_, err := s.parseSSEConfig([]byte(tc.doc))
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%s: %v", tc.doc, err)
		case tc.code != "" && (err == nil || toAPIError(err).Code != tc.code):
			t.Errorf("%s: err %v, want %s", tc.doc, err, tc.code)
		}
	}
}

func FuzzParseSSEHeaders(f *testing.F) {
	key := []byte(strings.Repeat("k", 32))
	g := ssecHeaders("x-amz-", key)
	f.Add(g.Get(hdrSSECAlgo), g.Get(hdrSSECKey), g.Get(hdrSSECKeyMD5), "", "", "")
	f.Add("", "", "", "aws:kms", "arn:aws:kms:r:1:key/a", "eyJhIjoiYiJ9")
	f.Add("", "", "", "AES256", "", "")
	f.Fuzz(func(t *testing.T, algo, key, sum, method, kms, ctx string) {
		h := http.Header{}
		for k, v := range map[string]string{hdrSSECAlgo: algo, hdrSSECKey: key, hdrSSECKeyMD5: sum, hdrSSE: method, hdrSSEKMSKey: kms, hdrSSEContext: ctx} {
			if v != "" {
				h.Set(k, v)
			}
		}
		r, err := parseSSEHeaders(h)
		if err != nil {
			if a := toAPIError(err); a.Status != 400 {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		if r.kind == sse.KindC && len(r.customerKey) != sse.KeySize {
			t.Fatalf("accepted a %d-byte key", len(r.customerKey))
		}
	})
}

func FuzzParseSSEConfig(f *testing.F) {
	s := testServerWithRing(f)
	f.Add(`<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`)
	f.Add(`<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>aws:kms</SSEAlgorithm><KMSMasterKeyID>alpha</KMSMasterKeyID></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`)
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := s.parseSSEConfig([]byte(doc))
		if err != nil {
			return
		}
		if len(c.Rules) != 1 || c.Rules[0].Default == nil {
			t.Fatalf("accepted %q", doc)
		}
	})
}
