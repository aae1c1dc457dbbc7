package sigv4

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestAWSS3Client sends PutObject and GetObject with the real aws-sdk-go-v2
// S3 client, whose defaults (flexible checksums in an aws-chunked body with
// an unsigned trailer over TLS, checksum headers or signed payloads over
// plain HTTP) are what current SDKs put on the wire.
func TestAWSS3Client(t *testing.T) {
	data := bytes.Repeat([]byte("aws-sdk-go-v2 s3 client "), 5000)
	v := &Verifier{Secret: testSecret}
	for _, useTLS := range []bool{true, false} {
		ch := make(chan result, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var res result
			var b *Body
			res.auth, b, res.verifyErr = v.Verify(r)
			if res.verifyErr == nil {
				res.data, res.readErr = io.ReadAll(b)
				res.algo, res.sum, _ = b.Checksum()
			}
			ch <- res
			if res.verifyErr != nil || res.readErr != nil {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			w.Header().Set("ETag", `"x"`)
		})
		srv := httptest.NewUnstartedServer(h)
		if useTLS {
			srv.StartTLS()
		} else {
			srv.Start()
		}
		t.Cleanup(srv.Close)
		client := s3.New(s3.Options{
			Region:       "us-east-1",
			BaseEndpoint: aws.String(srv.URL),
			UsePathStyle: true,
			HTTPClient:   srv.Client(),
			Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey}, nil
			}),
			RetryMaxAttempts: 1,
			// What config.LoadDefaultConfig resolves by default.
			RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		})
		name := map[bool]string{true: "https", false: "http"}[useTLS]
		cases := []struct {
			name string
			algo types.ChecksumAlgorithm
			want string
			body io.Reader
		}{
			{"default", "", "crc32", bytes.NewReader(data)},
			{"crc32c", types.ChecksumAlgorithmCrc32c, "crc32c", bytes.NewReader(data)},
			{"crc64nvme", types.ChecksumAlgorithmCrc64nvme, "crc64nvme", bytes.NewReader(data)},
			{"sha1", types.ChecksumAlgorithmSha1, "sha1", bytes.NewReader(data)},
			{"sha256", types.ChecksumAlgorithmSha256, "sha256", bytes.NewReader(data)},
		}
		if useTLS { // over plain HTTP the SDK needs a seekable body to hash
			cases = append(cases, struct {
				name string
				algo types.ChecksumAlgorithm
				want string
				body io.Reader
			}{"non-seekable", "", "crc32", io.MultiReader(bytes.NewReader(data))})
		}
		recv := func(t *testing.T, err error) result {
			t.Helper()
			select {
			case res := <-ch:
				return res
			case <-time.After(10 * time.Second):
				t.Fatalf("request never reached the server (client error: %v)", err)
			}
			return result{}
		}
		for _, tc := range cases {
			t.Run(name+"/put/"+tc.name, func(t *testing.T) {
				in := &s3.PutObjectInput{Bucket: aws.String("bucket"), Key: aws.String("dir/a key+€.txt"),
					Body: tc.body, ChecksumAlgorithm: tc.algo, ContentLength: aws.Int64(int64(len(data)))}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_, err := client.PutObject(ctx, in)
				res := recv(t, err)
				wantErr(t, res.verifyErr, nil)
				wantErr(t, res.readErr, nil)
				if err != nil {
					t.Fatalf("PutObject: %v", err)
				}
				if !bytes.Equal(res.data, data) {
					t.Fatalf("server got %d bytes", len(res.data))
				}
				t.Logf("payload %s, checksum %s", res.auth.Payload, res.algo)
				if res.algo != tc.want {
					t.Fatalf("checksum algo %q, want %q", res.algo, tc.want)
				}
				if res.algo != "" && res.sum != checksumOf(t, res.algo, data) {
					t.Fatalf("checksum %s", res.sum)
				}
			})
		}
		t.Run(name+"/head", func(t *testing.T) {
			_, err := client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("bucket"), Key: aws.String("k~!*'()")})
			res := recv(t, err)
			wantErr(t, res.verifyErr, nil)
			if err != nil {
				t.Fatalf("HeadObject: %v", err)
			}
		})
		t.Run(name+"/presign get", func(t *testing.T) {
			p := s3.NewPresignClient(client)
			req, err := p.PresignGetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("bucket"), Key: aws.String("a b/c")},
				s3.WithPresignExpires(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Get(req.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			res := recv(t, nil)
			wantErr(t, res.verifyErr, nil)
			if !res.auth.Presigned {
				t.Fatalf("auth %+v", res.auth)
			}
		})
	}
}
