package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// ---------------------------------------------------------------------------
// Recording every request.

type s3aPhaseKey struct{}

type s3aScopeKey struct{}

// s3aWithScope prefixes the phases of the requests made with ctx (one
// scope per test case).
func s3aWithScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, s3aScopeKey{}, scope)
}

// s3aWithPhase labels the requests made with ctx (for the recorder) with
// "<scope>: <phase>".
func s3aWithPhase(ctx context.Context, phase string) context.Context {
	if s, ok := ctx.Value(s3aScopeKey{}).(string); ok {
		phase = s + ": " + phase
	}
	return context.WithValue(ctx, s3aPhaseKey{}, phase)
}

func s3aPhaseOf(ctx context.Context) string {
	p, _ := ctx.Value(s3aPhaseKey{}).(string)
	return p
}

// s3aCall is one request as the recorder saw it.
type s3aCall struct {
	Phase  string
	Op     string // the S3 API name
	Key    string // object key; the prefix for listings
	Status int    // 0 when the request got no answer
}

// s3aRecorder is an http.RoundTripper logging every S3 request.
type s3aRecorder struct {
	base  http.RoundTripper
	mu    sync.Mutex
	calls []s3aCall
}

func newS3ARecorder() *s3aRecorder {
	return &s3aRecorder{base: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}}
}

func (r *s3aRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	op, key := s3aClassify(req)
	resp, err := r.base.RoundTrip(req)
	c := s3aCall{Phase: s3aPhaseOf(req.Context()), Op: op, Key: key}
	if err == nil {
		c.Status = resp.StatusCode
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	return resp, err
}

// phase returns the calls made in one phase, in order.
func (r *s3aRecorder) phase(p string) []s3aCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []s3aCall
	for _, c := range r.calls {
		if c.Phase == p {
			out = append(out, c)
		}
	}
	return out
}

// s3aClassify names the S3 operation of a path-style request.
func s3aClassify(req *http.Request) (op, key string) {
	q := req.URL.Query()
	has := func(k string) bool { _, ok := q[k]; return ok }
	p := strings.TrimPrefix(req.URL.Path, "/")
	_, key, _ = strings.Cut(p, "/")
	if key == "" {
		switch req.Method {
		case http.MethodGet:
			switch {
			case has("uploads"):
				return "ListMultipartUploads", q.Get("prefix")
			case has("lifecycle"):
				return "GetBucketLifecycleConfiguration", ""
			case q.Get("list-type") == "2":
				return "ListObjectsV2", q.Get("prefix")
			}
			return "ListObjects", q.Get("prefix")
		case http.MethodPut:
			if has("lifecycle") {
				return "PutBucketLifecycleConfiguration", ""
			}
			return "CreateBucket", ""
		case http.MethodPost:
			if has("delete") {
				return "DeleteObjects", ""
			}
		case http.MethodHead:
			return "HeadBucket", ""
		}
		return req.Method + " bucket", ""
	}
	switch req.Method {
	case http.MethodPut:
		switch {
		case has("uploadId"):
			return "UploadPart", key
		case req.Header.Get("x-amz-copy-source") != "":
			return "CopyObject", key
		}
		return "PutObject", key
	case http.MethodGet:
		return "GetObject", key
	case http.MethodHead:
		return "HeadObject", key
	case http.MethodDelete:
		if has("uploadId") {
			return "AbortMultipartUpload", key
		}
		return "DeleteObject", key
	case http.MethodPost:
		if has("uploads") {
			return "CreateMultipartUpload", key
		}
		return "CompleteMultipartUpload", key
	}
	return req.Method, key
}

// s3aRender renders calls as "Op key" lines with the given substitutions
// applied to keys (longest first), for golden comparisons.
func s3aRender(calls []s3aCall, subst map[string]string) []string {
	olds := make([]string, 0, len(subst))
	for k := range subst {
		olds = append(olds, k)
	}
	sort.Slice(olds, func(i, j int) bool { return len(olds[i]) > len(olds[j]) })
	var pairs []string
	for _, o := range olds {
		pairs = append(pairs, o, subst[o])
	}
	rep := strings.NewReplacer(pairs...)
	out := make([]string, 0, len(calls))
	for _, c := range calls {
		s := c.Op
		if c.Key != "" || strings.HasPrefix(c.Op, "List") {
			s += " " + rep.Replace(c.Key)
		}
		out = append(out, fmt.Sprintf("%s %d", s, c.Status))
	}
	return out
}

// ---------------------------------------------------------------------------
// The S3 client.

// newS3AClient is an aws-sdk-go-v2 client configured like S3A's defaults
// (path style, checksums only where required, no retries so that server
// errors are not hidden) whose requests go through rec.
func newS3AClient(endpoint, accessKey, secretKey string, rec *s3aRecorder) *s3.Client {
	return s3.New(s3.Options{
		Region:                     "us-east-1",
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		Retryer:                    aws.NopRetryer{},
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey, Source: "s3a-replay"}, nil
		})),
		HTTPClient: &http.Client{Transport: rec, Timeout: s3aCallTimeout},
	})
}

// s3aStatusOf returns the HTTP status of an SDK error (0 if none).
func s3aStatusOf(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// s3aCodeOf returns the S3 error code of an SDK error ("" if none).
func s3aCodeOf(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}
