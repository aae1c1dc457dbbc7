package integration

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsv4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"
)

// Root credentials of the servers the S3 tests start.
const (
	s3User   = "s3-test-root"
	s3Secret = "s3-test-root-secret-key"
	s3Region = "us-east-1"
)

const (
	// s3CallTimeout bounds every single client call.
	s3CallTimeout = 30 * time.Second
	mib           = 1 << 20
)

// startS3Server starts cairn serve with the S3 root credentials set and
// waits until it is ready. The credentials are passed through the
// environment the child inherits (so the test must not be parallel).
func startS3Server(t *testing.T) *server {
	t.Helper()
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	if n := clusterNodes(t); n > 0 {
		return startTestCluster(t, n).clusterProxy()
	}
	s := startServer(t, t.TempDir())
	s.waitReady(readyTimeout)
	return s
}

// callCtx returns a context bounded by s3CallTimeout, cancelled at the end
// of the test at the latest.
func callCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), s3CallTimeout)
	t.Cleanup(cancel)
	return ctx
}

// sdkClient returns an aws-sdk-go-v2 S3 client for the server with default
// checksum behaviour, path-style addressing and the given credentials.
func sdkClient(s *server, accessKey, secretKey string) *s3.Client {
	return s3.New(s3.Options{
		Region:       s3Region,
		BaseEndpoint: aws.String(s.url("")),
		UsePathStyle: true,
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey, Source: "test"}, nil
		})),
		HTTPClient: sdkHTTPClient(),
	})
}

// anonSDKClient returns an S3 client that signs nothing.
func anonSDKClient(s *server) *s3.Client {
	return s3.New(s3.Options{
		Region:       s3Region,
		BaseEndpoint: aws.String(s.url("")),
		UsePathStyle: true,
		Credentials:  aws.AnonymousCredentials{},
		HTTPClient:   sdkHTTPClient(),
	})
}

// sdkHTTPClient is the SDK clients' HTTP client, bounded by s3CallTimeout.
// Its ExpectContinueTimeout is as long as a call may take, for requests
// that would wait for "100 Continue"; the SDK's own do not (it sets
// "Expect: 100-continue" on bodies over 2 MiB but builds requests without
// a protocol version, which net/http's transport needs before it waits),
// so a refused part's body is sent whole: the server drains it
// (frontends/s3 drainRefused) and the client gets the S3 error, not a
// reset connection.
func sdkHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = s3CallTimeout
	return &http.Client{Transport: tr, Timeout: s3CallTimeout}
}

// minioClient returns a minio-go client for the server (path-style).
func minioClient(t testing.TB, s *server, accessKey, secretKey string) *minio.Client {
	t.Helper()
	c, err := minio.New(s.addr, &minio.Options{
		Creds:        miniocreds.NewStaticV4(accessKey, secretKey, ""),
		Secure:       false,
		Region:       s3Region,
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   1,
	})
	if err != nil {
		t.Fatalf("minio.New: %v", err)
	}
	return c
}

// apiCode returns the S3 error code of an SDK error ("" when there is none).
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// httpStatus returns the HTTP status of an SDK error (0 when there is none).
func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// wantAPIError fails unless err is an S3 error with code and status.
func wantAPIError(t testing.TB, what string, err error, code string, status int) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s (%d)", what, code, status)
	}
	if got, st := apiCode(err), httpStatus(err); got != code || st != status {
		t.Fatalf("%s: error code %q status %d, want %q %d (%v)", what, got, st, code, status, err)
	}
}

// wantMinioError fails unless err is a minio-go error response with code
// and status.
func wantMinioError(t testing.TB, what string, err error, code string, status int) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s (%d)", what, code, status)
	}
	er := minio.ToErrorResponse(err)
	if er.Code != code || er.StatusCode != status {
		t.Fatalf("%s: error code %q status %d, want %q %d (%v)", what, er.Code, er.StatusCode, code, status, err)
	}
}

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func md5hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}

func sha256hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// s3Error is the S3 error XML body, for raw requests.
type s3Error struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// rawResponse is what a raw HTTP request got back.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
	code   string // the S3 error code, when the body is error XML
}

// doRaw sends req (bounded by s3CallTimeout) and reads the whole answer.
func doRaw(t testing.TB, req *http.Request) rawResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), s3CallTimeout)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL, err)
	}
	res := rawResponse{status: resp.StatusCode, header: resp.Header, body: body}
	var e s3Error
	if resp.StatusCode >= 300 && xml.Unmarshal(body, &e) == nil {
		res.code = e.Code
	}
	return res
}

// newRaw builds a request for a raw call.
func newRaw(t testing.TB, method, u string, body []byte) *http.Request {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		t.Fatalf("new request %s %s: %v", method, u, err)
	}
	return req
}

// signRaw signs req with the SDK's SigV4 signer (header auth, payload hash
// of body) at the given time.
func signRaw(t testing.TB, req *http.Request, body []byte, accessKey, secretKey string, at time.Time) {
	t.Helper()
	payload := sha256hex(body)
	req.Header.Set("X-Amz-Content-Sha256", payload)
	creds := aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}
	signer := awsv4.NewSigner(func(o *awsv4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := signer.SignHTTP(context.Background(), creds, req, payload, "s3", s3Region, at); err != nil {
		t.Fatalf("sign: %v", err)
	}
}

// presignRaw presigns req with the SDK's SigV4 signer as if at time at,
// valid for expires.
func presignRaw(t testing.TB, req *http.Request, accessKey, secretKey string, at time.Time, expires time.Duration) string {
	t.Helper()
	q := req.URL.Query()
	q.Set("X-Amz-Expires", fmt.Sprint(int(expires.Seconds())))
	req.URL.RawQuery = q.Encode()
	creds := aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}
	signer := awsv4.NewSigner(func(o *awsv4.SignerOptions) { o.DisableURIPathEscaping = true })
	u, _, err := signer.PresignHTTP(context.Background(), creds, req, "UNSIGNED-PAYLOAD", "s3", s3Region, at)
	if err != nil {
		t.Fatalf("presign: %v", err)
	}
	return u
}

// objectURL is the path-style URL of bucket/key, key escaped per segment.
func objectURL(s *server, bucket, key string) string {
	segs := strings.Split(key, "/")
	for i, sg := range segs {
		segs[i] = url.PathEscape(sg)
	}
	return s.url("/" + bucket + "/" + strings.Join(segs, "/"))
}

// listingKeys are the 2 500 keys of the listing tests: 2 000 flat keys
// obj0000..obj1999, and 50 "directories" named like one of those keys plus
// "/" (obj0007/, obj0047/, …), holding 10 keys each. A key and the
// directory of the same name sit side by side in the sort order.
func listingKeys() []string {
	var keys []string
	for i := range 2000 {
		keys = append(keys, fmt.Sprintf("obj%04d", i))
	}
	for _, d := range listingDirs() {
		for j := range 10 {
			keys = append(keys, fmt.Sprintf("%sf%02d", d, j))
		}
	}
	sort.Strings(keys)
	return keys
}

// listingDirs are the common prefixes of listingKeys under delimiter "/".
func listingDirs() []string {
	var dirs []string
	for j := range 50 {
		dirs = append(dirs, fmt.Sprintf("obj%04d/", j*40+7))
	}
	return dirs
}

// listingRoot is what a root listing with delimiter "/" must return:
// the flat keys and the directories.
func listingRoot() (keys, prefixes []string) {
	for i := range 2000 {
		keys = append(keys, fmt.Sprintf("obj%04d", i))
	}
	return keys, listingDirs()
}

// parallelDo runs f(i) for i in [0,n) on workers goroutines and returns the
// first error.
func parallelDo(n, workers int, f func(i int) error) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return firstErr
}

// diffStrings reports the first difference between two sorted lists.
func diffStrings(got, want []string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("got %d entries, want %d (first got %q, first want %q)", len(got), len(want), head(got), head(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("entry %d is %q, want %q", i, got[i], want[i])
		}
	}
	return ""
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}
