package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsv4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

func base64SHA256Of(b []byte) string {
	s := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

// TestBase64ContentSHA256 signs catalog requests the way Apache Iceberg's
// REST SigV4 signer (the AWS SDK for Java v2's Aws4Signer with checksum
// parameters naming x-amz-content-sha256) does, as Trino sends them: the
// header carries the body's SHA-256 in base64 and is signed as sent, while
// the canonical request ends in the hex digest. aws-sdk-go-v2's signer
// reproduces that: it signs the header on the request and takes the
// payload hash as an argument.
func TestBase64ContentSHA256(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey}
	body := []byte(`{"namespace":["analytics"],"properties":{}}`)
	cases := []struct {
		name     string
		accept   bool
		header   string // x-amz-content-sha256 as sent
		signed   string // the payload line of the canonical request
		send     []byte
		err      error // from Verify
		readErr  error // from reading the body to its end
		wantHash string
	}{
		{name: "accepted", accept: true, header: base64SHA256Of(body), signed: sha256Of(body), send: body, wantHash: sha256Of(body)},
		{name: "empty body", accept: true, header: base64SHA256Of(nil), signed: emptySHA256, send: []byte{}, wantHash: emptySHA256},
		{name: "off: malformed", header: base64SHA256Of(body), signed: sha256Of(body), send: body, err: ErrMalformedAuth},
		{name: "body differs", accept: true, header: base64SHA256Of([]byte("another body")), signed: sha256Of([]byte("another body")), send: body, readErr: ErrContentSHA256Mismatch},
		{name: "signed over the base64 form", accept: true, header: base64SHA256Of(body), signed: base64SHA256Of(body), send: body, err: ErrSignatureMismatch},
		{name: "not a SHA-256", accept: true, header: base64.StdEncoding.EncodeToString(make([]byte, 33)), signed: sha256Of(body), send: body, err: ErrMalformedAuth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := &Verifier{Secret: testSecret, Services: []string{"s3"}, Base64ContentSHA256: tc.accept}
			base, ch := startServer(t, v)
			r := mustRequest(t, "POST", base+"/iceberg/v1/lakehouse/namespaces", bytes.NewReader(tc.send))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("X-Amz-Content-Sha256", tc.header)
			if err := awsv4.NewSigner().SignHTTP(context.Background(), creds, r, tc.signed, "s3", "us-east-1", time.Now()); err != nil {
				t.Fatal(err)
			}
			res := do(t, r, ch)
			wantErr(t, res.verifyErr, tc.err)
			if tc.err != nil {
				return
			}
			wantErr(t, res.readErr, tc.readErr)
			if tc.readErr != nil {
				return
			}
			if !bytes.Equal(res.data, tc.send) || res.auth.Payload != tc.wantHash {
				t.Fatalf("data %q, payload %q; want %q, %q", res.data, res.auth.Payload, tc.send, tc.wantHash)
			}
		})
	}
}
