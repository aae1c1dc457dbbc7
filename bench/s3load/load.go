package s3load

import (
	"bytes"
	"context"
	"crypto/rand"

	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// Options describe one load run.
type Options struct {
	Endpoint  string // http://host:port
	AccessKey string
	SecretKey string
	// Anonymous sends the requests unsigned; the bucket must exist and
	// let the anonymous caller put and get (no CreateBucket is tried).
	Anonymous bool
	Region    string // default us-east-1
	Bucket    string // created when missing
	Op        string // "put" or "get"
	Size      int64
	Clients   int
	Duration  time.Duration
	Keys      int // distinct keys written or read; default 64
	// Headers are sent with every object request (PUT and GET), such
	// as the server-side encryption headers; the write-only ones
	// (x-amz-server-side-encryption, its KMS key id and context) only
	// with PUTs, as S3 refuses them on a GET (400 InvalidArgument).
	Headers http.Header
}

// Result is what a run measured.
type Result struct {
	Op       string        `json:"op"`
	Size     int64         `json:"size"`
	Clients  int           `json:"clients"`
	Ops      int64         `json:"ops"`
	Errors   int64         `json:"errors"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	OpsPerS  float64       `json:"ops_per_s"`
	MiBPerS  float64       `json:"mib_per_s"`
	P50, P90 time.Duration `json:"-"`
	P99      time.Duration `json:"-"`
	P50ms    float64       `json:"p50_ms"`
	P90ms    float64       `json:"p90_ms"`
	P99ms    float64       `json:"p99_ms"`
	FirstErr string        `json:"first_error,omitempty"`
}

func (r Result) String() string {
	return fmt.Sprintf("%s %s x%d: %.0f ops/s, %.1f MiB/s, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, %d ops, %d errors",
		r.Op, sizeString(r.Size), r.Clients, r.OpsPerS, r.MiBPerS, r.P50ms, r.P90ms, r.P99ms, r.Ops, r.Errors)
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// createBucket creates the bucket unless it exists; anonymous callers
// may not create buckets, so for them it must.
func (c *client) createBucket(ctx context.Context) error {
	if c.o.Anonymous {
		return nil
	}
	_, err := c.do(ctx, http.MethodPut, "", nil)
	if err != nil && !strings.Contains(err.Error(), "BucketAlreadyOwnedByYou") && !strings.Contains(err.Error(), "BucketAlreadyExists") {
		return fmt.Errorf("s3load: create bucket: %w", err)
	}
	return nil
}

// Run performs the load and returns its measures. For "get" it first
// writes the keys it reads, but for those that already hold an object of
// the size and encryption asked for: runs one after another on a bucket
// then read what the first one wrote, and none of them measures the
// server still busy with a rewrite (its flush, the old versions' clean-up).
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.Keys <= 0 {
		o.Keys = 64
	}
	if o.Clients <= 0 || o.Size < 0 || o.Duration <= 0 {
		return Result{}, fmt.Errorf("s3load: clients, size and duration must be positive")
	}
	if o.Op != "put" && o.Op != "get" {
		return Result{}, fmt.Errorf("s3load: op %q: want put or get", o.Op)
	}
	if _, err := url.Parse(o.Endpoint); err != nil {
		return Result{}, fmt.Errorf("s3load: endpoint: %w", err)
	}
	c := &client{o: o, http: &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        o.Clients * 2,
		MaxIdleConnsPerHost: o.Clients * 2,
		IdleConnTimeout:     time.Minute,
	}}}
	body := make([]byte, o.Size)
	_, _ = rand.Read(body)
	if err := c.createBucket(ctx); err != nil {
		return Result{}, err
	}
	if o.Op == "get" {
		for i := 0; i < o.Keys; i++ {
			if c.holds(ctx, key(i)) {
				continue
			}
			if _, err := c.do(ctx, http.MethodPut, key(i), body); err != nil {
				return Result{}, fmt.Errorf("s3load: prepare: %w", err)
			}
		}
	}
	var ops, errs atomic.Int64
	var first atomic.Value
	lat := make([][]time.Duration, o.Clients)
	runCtx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < o.Clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; runCtx.Err() == nil; i += o.Clients {
				t0 := time.Now()
				var err error
				if o.Op == "put" {
					_, err = c.do(runCtx, http.MethodPut, key(i%o.Keys), body)
				} else {
					_, err = c.do(runCtx, http.MethodGet, key(i%o.Keys), nil)
				}
				if runCtx.Err() != nil {
					return // cut off by the end of the run: not counted
				}
				if err != nil {
					errs.Add(1)
					first.CompareAndSwap(nil, err.Error())
					continue
				}
				ops.Add(1)
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(p*float64(len(all))))]
	}
	r := Result{Op: o.Op, Size: o.Size, Clients: o.Clients, Ops: ops.Load(), Errors: errs.Load(), Elapsed: elapsed,
		P50: pct(0.50), P90: pct(0.90), P99: pct(0.99)}
	r.OpsPerS = float64(r.Ops) / elapsed.Seconds()
	r.MiBPerS = r.OpsPerS * float64(o.Size) / (1 << 20)
	r.P50ms, r.P90ms, r.P99ms = ms(r.P50), ms(r.P90), ms(r.P99)
	if v, ok := first.Load().(string); ok {
		r.FirstErr = v
	}
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func key(i int) string { return fmt.Sprintf("load/%06d", i) }

type client struct {
	o    Options
	http *http.Client
}

// do sends one request and drains the response.
// holds says whether key holds an object of the run's size, encrypted as
// the run asks (HEAD carries the SSE-C key, which a plain object refuses).
func (c *client) holds(ctx context.Context, key string) bool {
	h, err := c.do(ctx, http.MethodHead, key, nil)
	if err != nil || h.Get("Content-Length") != strconv.FormatInt(c.o.Size, 10) {
		return false
	}
	want := ""
	if v, ok := c.o.Headers[http.CanonicalHeaderKey("x-amz-server-side-encryption")]; ok && len(v) > 0 {
		want = v[0]
	}
	if _, ok := c.o.Headers[http.CanonicalHeaderKey("x-amz-server-side-encryption-customer-algorithm")]; ok {
		want = h.Get("x-amz-server-side-encryption") // SSE-C: the key's HEAD answered
	}
	return h.Get("x-amz-server-side-encryption") == want
}

// do sends one request and returns its response's headers.
func (c *client) do(ctx context.Context, method, key string, body []byte) (http.Header, error) {
	u := strings.TrimSuffix(c.o.Endpoint, "/") + "/" + c.o.Bucket
	if key != "" {
		u += "/" + key
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.ContentLength = int64(len(body))
	}
	if key != "" {
		for k, v := range c.o.Headers {
			if method != http.MethodPut && writeOnlyHeader(k) {
				continue
			}
			req.Header[k] = v
		}
	}
	if !c.o.Anonymous {
		if err := sigv4.Sign(req, c.o.AccessKey, c.o.SecretKey, c.o.Region, "s3", "", time.Now()); err != nil {
			return nil, err
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		code := ""
		if _, after, ok := strings.Cut(string(msg), "<Code>"); ok {
			code, _, _ = strings.Cut(after, "</Code>")
		}
		return nil, fmt.Errorf("%s %s: %s %s", method, u, resp.Status, code)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.Header, err
}

// writeOnlyHeader says whether a header is an encryption header of writes
// only (SSE-S3, SSE-KMS); the SSE-C ones go with reads too.
func writeOnlyHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "X-Amz-Server-Side-Encryption", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "X-Amz-Server-Side-Encryption-Context":
		return true
	}
	return false
}
