package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"hash"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsv4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	miniosigner "github.com/minio/minio-go/v7/pkg/signer"
)

// These tests check that requests signed by the real client libraries verify
// when they arrive through a net/http server.

func TestAWSSDKSigner(t *testing.T) {
	base, ch := startServer(t, &Verifier{Secret: testSecret, Services: []string{"s3", "s3tables"}})
	creds := aws.Credentials{AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey}
	body := []byte("signed by aws-sdk-go-v2")
	cases := []struct {
		name, method, path, service, payload string
		body                                 []byte
		header                               map[string]string
	}{
		{name: "get", method: "GET", path: "/bucket/key", service: "s3", payload: emptySHA256},
		{name: "get odd key", method: "GET", path: "/bucket/a%20b/%2B%21%27%28%29%2A/%E2%82%AC?versionId=x%2By&list-type=2", service: "s3", payload: emptySHA256},
		{name: "put sha256", method: "PUT", path: "/bucket/key", service: "s3", payload: sha256Of(body), body: body,
			header: map[string]string{"Content-Type": "application/octet-stream", "X-Amz-Meta-Tag": "a  b"}},
		{name: "put unsigned with checksum", method: "PUT", path: "/bucket/key", service: "s3", payload: PayloadUnsigned, body: body,
			header: map[string]string{"X-Amz-Checksum-Crc32": checksumOf(t, "crc32", body)}},
		{name: "s3tables", method: "GET", path: "/v1/namespaces/a%1Fb/tables", service: "s3tables", payload: emptySHA256},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRequest(t, tc.method, base+tc.path, bytes.NewReader(tc.body))
			if tc.body == nil {
				r = mustRequest(t, tc.method, base+tc.path, nil)
			}
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			r.Header.Set("X-Amz-Content-Sha256", tc.payload) // the S3 client's middleware sets it
			s := awsv4.NewSigner(func(o *awsv4.SignerOptions) { o.DisableURIPathEscaping = tc.service == "s3" })
			if err := s.SignHTTP(context.Background(), creds, r, tc.payload, tc.service, "us-west-2", time.Now()); err != nil {
				t.Fatal(err)
			}
			res := do(t, r, ch)
			wantErr(t, res.verifyErr, nil)
			wantErr(t, res.readErr, nil)
			if !bytes.Equal(res.data, tc.body) || res.auth.Region != "us-west-2" || res.auth.Service != tc.service {
				t.Fatalf("auth %+v data %q", res.auth, res.data)
			}
		})
	}

	t.Run("presign", func(t *testing.T) {
		// The S3 client's presign middleware sets X-Amz-Expires before signing.
		r := mustRequest(t, "GET", base+"/bucket/a%20key?response-content-type=text%2Fplain&X-Amz-Expires=900", nil)
		s := awsv4.NewSigner(func(o *awsv4.SignerOptions) { o.DisableURIPathEscaping = true })
		u, hdr, err := s.PresignHTTP(context.Background(), creds, r, PayloadUnsigned, "s3", "us-east-1", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		pr := mustRequest(t, "GET", u, nil)
		for k, vs := range hdr {
			if k != "Host" {
				pr.Header[k] = vs
			}
		}
		res := do(t, pr, ch)
		wantErr(t, res.verifyErr, nil)
		if !res.auth.Presigned {
			t.Fatalf("auth %+v", res.auth)
		}
	})
}

// sha256Hasher adapts crypto/sha256 to minio-go's md5simd.Hasher.
type sha256Hasher struct{ hash.Hash }

func (sha256Hasher) Close() {}

func TestMinioGoSigner(t *testing.T) {
	base, ch := startServer(t, &Verifier{Secret: testSecret})
	data := bytes.Repeat([]byte("minio-go streaming "), 10000) // 190000 bytes: several 64 KiB chunks
	crc := checksumOf(t, "crc32c", data)

	newPut := func(t *testing.T) *http.Request {
		r := mustRequest(t, "PUT", base+"/bucket/dir/a%20b.txt", bytes.NewReader(data))
		r.Header.Set("Content-Type", "text/plain")
		return r
	}
	cases := []struct {
		name     string
		build    func(t *testing.T) *http.Request
		wantData []byte
		payload  string
		algo     string
	}{
		{name: "SignV4 get", payload: PayloadUnsigned, build: func(t *testing.T) *http.Request {
			r := mustRequest(t, "GET", base+"/bucket/key?prefix=a%2Fb&delimiter=%2F", nil)
			r.Header.Set("X-Amz-Content-Sha256", PayloadUnsigned) // as minio-go's API layer does
			return miniosigner.SignV4(*r, testAccessKey, testSecretKey, "", "us-east-1")
		}},
		{name: "SignV4 put sha256", payload: sha256Of(data), wantData: data, build: func(t *testing.T) *http.Request {
			r := newPut(t)
			r.Header.Set("X-Amz-Content-Sha256", sha256Of(data))
			return miniosigner.SignV4(*r, testAccessKey, testSecretKey, "", "us-east-1")
		}},
		{name: "PreSignV4", payload: PayloadUnsigned, build: func(t *testing.T) *http.Request {
			r := mustRequest(t, "GET", base+"/bucket/a%20b", nil)
			return miniosigner.PreSignV4(*r, testAccessKey, testSecretKey, "", "us-east-1", 3600)
		}},
		{name: "StreamingSignV4", payload: PayloadStreamingSigned, wantData: data, build: func(t *testing.T) *http.Request {
			return miniosigner.StreamingSignV4(newPut(t), testAccessKey, testSecretKey, "", "us-east-1",
				int64(len(data)), time.Now().UTC(), sha256Hasher{sha256.New()})
		}},
		{name: "StreamingSignV4 signed trailer", payload: PayloadStreamingSignedTrail, wantData: data, algo: "crc32c", build: func(t *testing.T) *http.Request {
			r := newPut(t)
			r.Trailer = http.Header{"x-amz-checksum-crc32c": {crc}}
			return miniosigner.StreamingSignV4(r, testAccessKey, testSecretKey, "", "us-east-1",
				int64(len(data)), time.Now().UTC(), sha256Hasher{sha256.New()})
		}},
		{name: "SignV4Trailer unsigned trailer", payload: PayloadStreamingUnsignedTrail, wantData: data, algo: "crc32c", build: func(t *testing.T) *http.Request {
			r := newPut(t)
			r.Header.Set("X-Amz-Content-Sha256", PayloadStreamingUnsignedTrail)
			return miniosigner.SignV4Trailer(*r, testAccessKey, testSecretKey, "", "us-east-1",
				http.Header{"x-amz-checksum-crc32c": {crc}})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := do(t, tc.build(t), ch)
			wantErr(t, res.verifyErr, nil)
			wantErr(t, res.readErr, nil)
			if !bytes.Equal(res.data, tc.wantData) || res.auth.Payload != tc.payload {
				t.Fatalf("auth %+v, %d bytes", res.auth, len(res.data))
			}
			if tc.wantData != nil && res.size != int64(len(tc.wantData)) {
				t.Fatalf("Size() = %d", res.size)
			}
			if res.algo != tc.algo || (tc.algo != "" && res.sum != crc) {
				t.Fatalf("checksum %q %q", res.algo, res.sum)
			}
		})
	}

	t.Run("StreamingSignV4 wrong secret", func(t *testing.T) {
		r := miniosigner.StreamingSignV4(newPut(t), testAccessKey, "wrong", "", "us-east-1",
			int64(len(data)), time.Now().UTC(), sha256Hasher{sha256.New()})
		res := do(t, r, ch)
		wantErr(t, res.verifyErr, ErrSignatureMismatch)
	})
	t.Run("signed trailer with wrong checksum", func(t *testing.T) {
		r := newPut(t)
		r.Trailer = http.Header{"x-amz-checksum-crc32c": {checksumOf(t, "crc32c", data[1:])}}
		r = miniosigner.StreamingSignV4(r, testAccessKey, testSecretKey, "", "us-east-1",
			int64(len(data)), time.Now().UTC(), sha256Hasher{sha256.New()})
		res := do(t, r, ch)
		wantErr(t, res.verifyErr, nil)
		wantErr(t, res.readErr, ErrChecksumMismatch)
	})
}
