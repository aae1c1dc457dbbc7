package integration

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// clusterObjects is what a cluster test wrote and was acknowledged.
type clusterObjects struct {
	mu   sync.Mutex
	want map[string][]byte
}

func (o *clusterObjects) put(t *testing.T, c *s3.Client, key string, body []byte) error {
	_, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: aws.String("lake"), Key: aws.String(key), Body: bytes.NewReader(body)})
	if err == nil {
		o.mu.Lock()
		o.want[key] = body
		o.mu.Unlock()
	}
	return err
}

func (o *clusterObjects) keys() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, 0, len(o.want))
	for k := range o.want {
		out = append(out, k)
	}
	return out
}

// check reads every acknowledged object through c.
func (o *clusterObjects) check(t *testing.T, c *s3.Client, when string) {
	t.Helper()
	for _, k := range o.keys() {
		o.mu.Lock()
		want := o.want[k]
		o.mu.Unlock()
		got, err := clusterGet(t, c, k)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: GET %s: %d bytes, %v (want %d bytes)", when, k, len(got), err, len(want))
		}
	}
}

func clusterGet(t *testing.T, c *s3.Client, key string) ([]byte, error) {
	out, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: aws.String("lake"), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// clusterLoad runs writers and readers through clients until stop is
// closed, and returns how many requests each made and the first errors.
func clusterLoad(t *testing.T, objs *clusterObjects, prefix string, clients []*s3.Client, stop <-chan struct{}) (ops int, errs []error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for ci, c := range clients {
		wg.Go(func() { // a writer: small and 1 MiB objects
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n := 4096 + i
				if i%4 == 3 {
					n = 1<<20 + i
				}
				body := bytes.Repeat([]byte{byte(ci*31 + i)}, n)
				err := objs.put(t, c, fmt.Sprintf("%s/w%d-%04d", prefix, ci, i), body)
				mu.Lock()
				ops++
				if err != nil {
					errs = append(errs, fmt.Errorf("put through client %d: %w", ci, err))
				}
				mu.Unlock()
			}
		})
		wg.Go(func() { // a reader of what was acknowledged before
			keys := objs.keys()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := keys[i%len(keys)]
				objs.mu.Lock()
				want := objs.want[k]
				objs.mu.Unlock()
				got, err := clusterGet(t, c, k)
				if err == nil && !bytes.Equal(got, want) {
					err = fmt.Errorf("%s: %d bytes differ from the %d written", k, len(got), len(want))
				}
				mu.Lock()
				ops++
				if err != nil {
					errs = append(errs, fmt.Errorf("get through client %d: %w", ci, err))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ops, errs
}

// underLoad runs clusterLoad through clients while fault happens (half a
// second in), until fault returns, and fails the test unless every
// request succeeded; it returns how many there were.
func underLoad(t *testing.T, objs *clusterObjects, prefix string, clients []*s3.Client, fault func()) int {
	t.Helper()
	stop := make(chan struct{})
	var ops int
	var errs []error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ops, errs = clusterLoad(t, objs, prefix, clients, stop)
	}()
	time.Sleep(500 * time.Millisecond)
	fault()
	close(stop)
	<-done
	if len(errs) > 0 {
		t.Fatalf("%d of %d requests failed; first: %v", len(errs), ops, errs[0])
	}
	return ops
}

// TestCluster runs three Cairn nodes on 127.0.0.1-3 serving one store
// over a three-member etcd, node a with the mount: an S3 write on b shows
// on a's mount at once; a directory renamed on the mount is never half
// moved to a lister on c; c killed during mixed writes loses nothing
// acknowledged and is healed when it is back; b stopped for 30 s costs
// the others no request; an etcd member lost costs none; etcd gone
// refuses requests cleanly and service resumes when it is back; fsck of
// the whole store is clean at the end.
func TestCluster(t *testing.T) {
	requireFUSE(t)
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	c := newTestCluster(t, 3)
	mnt := t.TempDir()
	c.nodeExtra[0] = []string{"--mount", mnt}
	c.start()
	t.Cleanup(func() { stopMount(t, c.nodes[0], mnt) })
	waitMounted(t, c.nodes[0], mnt)
	clients := make([]*s3.Client, 3)
	for i, s := range c.nodes {
		clients[i] = noRetry(s)
	}
	a, b, cc := clients[0], clients[1], clients[2]
	if _, err := b.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String("lake")}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	objs := &clusterObjects{want: map[string][]byte{}}

	t.Run("a write on b shows on a's mount", func(t *testing.T) {
		dir := filepath.Join(mnt, "lake", "seen")
		var worst time.Duration
		for i := range 5 {
			_, _ = os.ReadDir(dir) // as a user looking: the listing is cached
			body := []byte(fmt.Sprintf("written on b, %d", i))
			if err := objs.put(t, b, fmt.Sprintf("seen/%d", i), body); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for {
				got, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(i)))
				if err == nil && bytes.Equal(got, body) {
					break
				}
				if time.Since(start) > time.Second {
					t.Fatalf("object %d written on b not on a's mount after a second: %q, %v", i, got, err)
				}
				time.Sleep(5 * time.Millisecond)
			}
			worst = max(worst, time.Since(start))
		}
		t.Logf("writes on b visible on a's mount within %v", worst.Round(time.Millisecond))
	})

	t.Run("a rename on a's mount is whole to a lister on c", func(t *testing.T) {
		const files = 12
		stage := filepath.Join(mnt, "lake", "stage")
		if err := os.MkdirAll(stage, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range files {
			if err := os.WriteFile(filepath.Join(stage, fmt.Sprintf("part-%02d", i)), []byte(fmt.Sprintf("part %d", i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		count := func() (old, moved int, err error) {
			out, err := cc.ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: aws.String("lake")})
			if err != nil {
				return 0, 0, err
			}
			for _, o := range out.Contents {
				switch {
				case strings.HasPrefix(*o.Key, "stage/part-"):
					old++
				case strings.HasPrefix(*o.Key, "final/part-"):
					moved++
				}
			}
			return old, moved, nil
		}
		fsEventually(t, "the staged files listed on c", func() error {
			if old, _, err := count(); err != nil || old != files {
				return fmt.Errorf("%d staged files listed, %v", old, err)
			}
			return nil
		})
		stop := make(chan struct{})
		done := make(chan error, 1)
		var before, after int
		go func() {
			for {
				old, moved, err := count()
				switch {
				case err != nil:
					done <- err
					return
				case old == files && moved == 0:
					before++
				case old == 0 && moved == files:
					after++
				default:
					done <- fmt.Errorf("a listing on c saw %d files staged and %d moved: the rename was not atomic", old, moved)
					return
				}
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
			}
		}()
		time.Sleep(200 * time.Millisecond)
		if err := os.Rename(stage, filepath.Join(mnt, "lake", "final")); err != nil {
			t.Fatalf("rename on the mount: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
		close(stop)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if before == 0 || after == 0 {
			t.Fatalf("the lister on c saw %d listings before the rename and %d after: it did not watch it", before, after)
		}
		t.Logf("lister on c: %d listings before the rename, %d after, none in between", before, after)
	})

	t.Run("c killed during mixed writes, then healed", func(t *testing.T) {
		for i := range 10 {
			if err := objs.put(t, a, fmt.Sprintf("base/%02d", i), bytes.Repeat([]byte{byte(i)}, 3000+i*300000)); err != nil {
				t.Fatal(err)
			}
		}
		ops := underLoad(t, objs, "kill", []*s3.Client{a, b}, func() {
			time.Sleep(500 * time.Millisecond)
			c.nodes[2].kill()
			time.Sleep(3 * time.Second)
		})
		t.Logf("%d requests to a and b around c's kill, none failed", ops)
		// a's links to c's drives show it out.
		metrics := allMetrics(t, c.nodes[0])
		for _, want := range []string{`cairn_peer_requests_total{drive="1",node="b"}`, `cairn_peer_unreachable_total{drive="2",node="c"}`} {
			if !strings.Contains(metrics, want) {
				t.Fatalf("node a's /metrics have no %s", want)
			}
		}
		if strings.Contains(metrics, `cairn_peer_unreachable_total{drive="2",node="c"} 0`) {
			t.Fatal("node a's link to c's drive 2 counts no unreachable request with c killed")
		}
		objs.check(t, a, "with c down, through a")
		objs.check(t, b, "with c down, through b")
		c.startNode(2).waitReady(readyTimeout + 30*time.Second)
		c.waitHealed()
		cc = noRetry(c.nodes[2])
		objs.check(t, cc, "c back and healed, through c")
	})

	t.Run("b stopped for 30 s", func(t *testing.T) {
		ops := underLoad(t, objs, "stopped", []*s3.Client{a, cc}, func() {
			c.nodes[1].signal(syscall.SIGSTOP)
			time.Sleep(30 * time.Second)
			c.nodes[1].signal(syscall.SIGCONT)
		})
		t.Logf("%d requests to a and c while b was stopped for 30 s, none failed", ops)
		c.nodes[1].waitReady(readyTimeout)
		c.waitHealed()
		objs.check(t, b, "b continued and healed, through b")
	})

	t.Run("an etcd member lost", func(t *testing.T) {
		ops := underLoad(t, objs, "member", []*s3.Client{a, b, cc}, func() {
			c.etcd.Members[1].Stop()
			time.Sleep(3 * time.Second)
		})
		t.Logf("%d requests while an etcd member was down, none failed", ops)
		c.etcd.Members[1].Restart(t)
	})

	t.Run("etcd gone, then back", func(t *testing.T) {
		for _, m := range c.etcd.Members {
			m.Stop()
		}
		for i, cl := range clients[:1] {
			err := objs.put(t, cl, "refused", []byte("never acknowledged"))
			wantAPIError(t, fmt.Sprintf("PUT through node %d without etcd", i), err, "SlowDown", 503)
		}
		_, err := clusterGet(t, b, "base/01")
		wantAPIError(t, "GET through b without etcd", err, "SlowDown", 503)
		for _, m := range c.etcd.Members {
			go m.Restart(t)
		}
		for i, cl := range []*s3.Client{a, b, cc} {
			deadline := time.Now().Add(60 * time.Second)
			for {
				if _, err := clusterGet(t, cl, "base/01"); err == nil {
					break
				} else if time.Now().After(deadline) {
					t.Fatalf("node %d did not resume after etcd came back: %v", i, err)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
		if err := objs.put(t, cc, "after-etcd", []byte("etcd is back")); err != nil {
			t.Fatalf("put after etcd came back: %v", err)
		}
	})

	objs.check(t, cc, "at the end, through c")
	c.waitHealed()
	status := runCairn(t, 30*time.Second, "admin", "cluster", "status", "--meta", c.meta)
	t.Logf("cluster status:\n%s", status.stdout)
	stopMount(t, c.nodes[0], mnt)
	c.stopAll()
	// One node's data directory alone is not the store: refused.
	res := runCairn(t, time.Minute, "admin", "fsck", "--meta", c.meta, "--data", c.dirs[0])
	if res.code == 0 || !strings.Contains(res.stderr, "this store is a cluster's") {
		t.Fatalf("fsck of one node's drives: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	c.fsck()
}

// waitHealed waits until no whole-store heal is due (cluster status).
func (c *testCluster) waitHealed() {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		res := runCairn(c.t, 30*time.Second, "admin", "cluster", "status", "--meta", c.meta)
		if res.code == 0 && strings.Contains(res.stdout, "heal: nothing due") {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the store is still not healed after 90 s:\n%s%s", res.stdout, res.stderr)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
