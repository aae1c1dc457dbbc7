package integration

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
)

// etcdURL is the --meta URL of a cluster's members under prefix.
func etcdURL(c *etcdtest.Cluster, prefix string, query string) string {
	u := "etcd://" + strings.Join(c.Endpoints(), ",") + "/" + prefix
	if query != "" {
		u += "?" + query
	}
	return u
}

// noRetry is sdkClient's client of s as root, making one attempt per
// call, so that a refusal shows as it is.
func noRetry(s *server) *s3.Client {
	return s3.New(sdkClient(s, s3User, s3Secret).Options(), func(o *s3.Options) { o.RetryMaxAttempts = 1 })
}

// TestServeOnEtcd runs `cairn serve --meta etcd://...` on a three-member
// etcd cluster (embedded in the test process, on loopback ports) and
// drives it with aws-sdk-go-v2: objects written and read back (small,
// multipart, copied, listed, deleted); one member killed while a writer
// and a reader go on (no request fails); every member stopped (requests
// fail within seconds with 503 SlowDown, nothing half-written); the
// members back (service resumes by itself, everything acknowledged is
// there); and `cairn admin fsck --meta` clean at the end.
func TestServeOnEtcd(t *testing.T) {
	cluster := etcdtest.StartCluster(t, 3, etcdtest.Options{})
	meta := etcdURL(cluster, "cairn-it/", "request-timeout=2s&dial-timeout=2s")
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	data := t.TempDir()
	srv := startServer(t, data, "--meta", meta, "--node", "n1")
	srv.waitReady(readyTimeout)
	// The node is registered, and leads the background jobs.
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := runCairn(t, 30*time.Second, "admin", "cluster", "status", "--meta", meta)
		if res.code != 0 {
			t.Fatalf("cluster status: exit %d\n%s", res.code, res.stderr)
		}
		if strings.Contains(res.stdout, "n1 ") && strings.Contains(res.stdout, "job cleaner: led by n1") &&
			strings.Contains(res.stdout, "job lifecycle: led by n1") {
			t.Logf("cluster status:\n%s", res.stdout)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster status does not show n1 leading the jobs:\n%s", res.stdout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	c := sdkClient(srv, s3User, s3Secret)
	ctx := callCtx(t)
	// A second process on the same data directory is refused: with the
	// index in etcd, no bbolt lock keeps it off.
	if res := runCairn(t, 30*time.Second, "serve", "--data", data, "--meta", meta, "--address", freeAddr(t)); res.code == 0 || !strings.Contains(res.stderr, "another cairn is using") {
		t.Fatalf("a second serve on the data directory: exit %d\n%s", res.code, res.stderr)
	}

	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("lake")}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	want := map[string][]byte{} // every acknowledged object
	var mu sync.Mutex
	put := func(c *s3.Client, key string, body []byte) error {
		_, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: aws.String("lake"), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err == nil {
			mu.Lock()
			want[key] = body
			mu.Unlock()
		}
		return err
	}
	get := func(c *s3.Client, key string) ([]byte, error) {
		out, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: aws.String("lake"), Key: aws.String(key)})
		if err != nil {
			return nil, err
		}
		defer out.Body.Close()
		return io.ReadAll(out.Body)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	body := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for i := range 20 {
		if err := put(c, fmt.Sprintf("small/%02d", i), body(4096+i)); err != nil {
			t.Fatalf("put: %v", err)
		}
	}
	big := body(12 << 20)
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("lake"), Key: aws.String("big")})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for i, off := 0, 0; off < len(big); i, off = i+1, off+5<<20 {
		end := min(off+5<<20, len(big))
		p, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("lake"), Key: aws.String("big"), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(big[off:end])})
		if err != nil {
			t.Fatalf("UploadPart %d: %v", i+1, err)
		}
		parts = append(parts, types.CompletedPart{ETag: p.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("lake"), Key: aws.String("big"),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatalf("CompleteMultipartUpload: %v", err)
	}
	want["big"] = big
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("lake"), Key: aws.String("big-copy"), CopySource: aws.String("lake/big")}); err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	want["big-copy"] = big
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("lake"), Key: aws.String("small/00")}); err != nil {
		t.Fatal(err)
	}
	delete(want, "small/00")
	checkAll := func(when string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		for k, b := range want {
			got, err := get(c, k)
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("%s: GET %s: %d bytes, %v (want %d bytes)", when, k, len(got), err, len(b))
			}
		}
		var listed []string
		p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("lake"), MaxKeys: aws.Int32(7)})
		for p.HasMorePages() {
			out, err := p.NextPage(callCtx(t))
			if err != nil {
				t.Fatalf("%s: list: %v", when, err)
			}
			for _, o := range out.Contents {
				listed = append(listed, *o.Key)
			}
		}
		if len(listed) != len(want) {
			t.Fatalf("%s: listed %d keys, want %d", when, len(listed), len(want))
		}
	}
	checkAll("written")

	// One member of three killed: a writer and a reader go on, and no
	// request fails (the client's own retries are off).
	one := noRetry(srv)
	stop := make(chan struct{})
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			if err := put(one, fmt.Sprintf("during/%04d", i), []byte(fmt.Sprintf("object %d", i))); err != nil {
				errs <- fmt.Errorf("put during the member's loss: %w", err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			if _, err := get(one, "small/01"); err != nil {
				errs <- fmt.Errorf("get during the member's loss: %w", err)
				return
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	cluster.Members[0].Stop()
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	during := 0
	for k := range want {
		if strings.HasPrefix(k, "during/") {
			during++
		}
	}
	mu.Unlock()
	if during < 10 {
		t.Fatalf("only %d puts acknowledged in the 3.5 s around a member's loss", during)
	}
	t.Logf("%d puts acknowledged in the 3.5 s around a member's loss, none refused", during)
	cluster.Members[0].Restart(t)
	checkAll("after a member's loss")

	// The whole cluster gone: requests fail fast with 503 SlowDown.
	for _, m := range cluster.Members {
		m.Stop()
	}
	start := time.Now()
	err = put(one, "refused", []byte("never acknowledged"))
	wantAPIError(t, "PUT without etcd", err, "SlowDown", 503)
	_, err = get(one, "small/01")
	wantAPIError(t, "GET without etcd", err, "SlowDown", 503)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("two requests without etcd took %v: they should fail within the request timeout", d)
	} else {
		t.Logf("a PUT and a GET without etcd refused with 503 SlowDown in %v", d.Round(time.Millisecond))
	}

	// Back: service resumes without a restart of cairn.
	for _, m := range cluster.Members {
		go m.Restart(t)
	}
	deadline = time.Now().Add(60 * time.Second)
	for {
		if _, err := get(one, "small/01"); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("service did not resume after etcd came back: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := put(c, "after", []byte("etcd is back")); err != nil {
		t.Fatalf("put after etcd came back: %v", err)
	}
	checkAll("after the cluster came back")
	if _, err := get(c, "refused"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("the refused PUT: %v, want NoSuchKey", err)
	}

	srv.signal(syscall.SIGTERM)
	if code := srv.wait(30 * time.Second); code != 0 {
		t.Fatalf("cairn serve exited %d\n%s", code, srv.stderr.String())
	}
	res := runCairn(t, 2*time.Minute, "admin", "fsck", "--data", data, "--meta", meta)
	if res.code != 0 {
		t.Fatalf("fsck on etcd: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	// Stopped, the node is no longer registered (its lease was revoked).
	res = runCairn(t, 30*time.Second, "admin", "cluster", "status", "--meta", meta, "--json")
	if res.code != 0 || !strings.Contains(res.stdout, `"nodes": []`) {
		t.Fatalf("cluster status after the node stopped: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}
