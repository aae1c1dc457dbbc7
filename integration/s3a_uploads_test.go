package integration

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3ACommitterAbandonedUploads: with fs.s3a.committer.abort.pending.uploads
// false, an upload abandoned by a crashed task outlives the job; the
// bucket's AbortIncompleteMultipartUpload rule is what removes it (its
// expiry is unit-tested in objstore: here, the rule is stored and the
// upload listed until then).
func TestS3ACommitterAbandonedUploads(t *testing.T) {
	ctx := s3aCtx(t, 60*time.Second)
	env := startS3AEnv(t)
	fs := env.bucket(t, ctx, "s3a-abandoned")

	cctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	rule := types.LifecycleRule{ID: aws.String("abort-incomplete-uploads"), Status: types.ExpirationStatusEnabled,
		Filter:                         &types.LifecycleRuleFilter{Prefix: aws.String("")},
		AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)}}
	if _, err := env.c.PutBucketLifecycleConfiguration(cctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(fs.bucket),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{rule}}}); err != nil {
		t.Fatalf("PutBucketLifecycleConfiguration: %v", err)
	}
	lc, err := env.c.GetBucketLifecycleConfiguration(cctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(fs.bucket)})
	if err != nil {
		t.Fatalf("GetBucketLifecycleConfiguration: %v", err)
	}
	if len(lc.Rules) != 1 || lc.Rules[0].AbortIncompleteMultipartUpload == nil ||
		aws.ToInt32(lc.Rules[0].AbortIncompleteMultipartUpload.DaysAfterInitiation) != 1 ||
		lc.Rules[0].Status != types.ExpirationStatusEnabled || aws.ToString(lc.Rules[0].ID) != "abort-incomplete-uploads" {
		t.Fatalf("lifecycle read back: %+v", lc.Rules)
	}

	start := time.Now().Add(-time.Minute)
	abandoned := map[string]bool{} // key of each upload expected to be left
	for _, kind := range []string{"magic", "foc-v1"} {
		uuid := fmt.Sprintf("5eed0000-0000-4000-8000-%012d", len(abandoned))
		dest := s3aDest
		j := &s3aJob{fs: fs, dest: dest, uuid: uuid, jt: s3aJT, jobNum: 7 + len(abandoned), abortPendingUploads: false, local: t.TempDir()}
		c := s3aNewCommitter(kind, s3aAppend, j)
		files := func(task int) []s3aFileSpec {
			return []s3aFileSpec{{rel: fmt.Sprintf("date=2026-11-29/part-%05d-%s-c000.csv", task, uuid), size: s3aPartSize + 10 + task}}
		}
		// The crashed attempt writes a whole block before dying: its
		// upload has a part and no Complete, and nobody aborts it (the
		// executor is gone; cleanup of uploads is off).
		a := j.newAttempt(1, 0)
		if err := c.setupJob(s3aWithPhase(ctx, "setupJob")); err != nil {
			t.Fatal(err)
		}
		if err := c.setupTask(ctx, a); err != nil {
			t.Fatal(err)
		}
		f := files(1)[0]
		if err := c.crashWhileWriting(ctx, a, f.rel, s3aContent(uuid, f.rel, 9, f.size)); err != nil {
			t.Fatal(err)
		}
		if kind == "magic" {
			abandoned[c.finalKey(f.rel)] = true
		} else {
			abandoned[s3aDest+"/_temporary/0/_temporary/"+a.id+"/"+f.rel] = true
		}
		// The job goes on with retried attempts and commits.
		var committed = map[string][]byte{}
		for task := range 2 {
			b := j.newAttempt(task, 1)
			if err := c.setupTask(ctx, b); err != nil {
				t.Fatal(err)
			}
			f := files(task)[0]
			data := s3aContent(uuid, f.rel, 1, f.size)
			if err := c.write(ctx, b, f.rel, data); err != nil {
				t.Fatal(err)
			}
			if err := c.commitTask(ctx, b); err != nil {
				t.Fatal(err)
			}
			committed[c.finalKey(f.rel)] = data
		}
		if err := c.commitJob(s3aWithPhase(ctx, "commitJob")); err != nil {
			t.Fatalf("%s commitJob: %v", kind, err)
		}
		for k, v := range committed {
			got, err := fs.open(ctx, k, "")
			if err != nil || !bytes.Equal(got, v) {
				t.Fatalf("%s: %s: %d bytes (%v), want the committed %d bytes", kind, k, len(got), err, len(v))
			}
		}
	}
	ups, err := fs.listUploads(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range ups {
		keys = append(keys, aws.ToString(u.Key))
		if in := aws.ToTime(u.Initiated); in.Before(start) || in.After(time.Now().Add(time.Minute)) {
			t.Errorf("upload %s: Initiated %v, want about now", aws.ToString(u.Key), in)
		}
	}
	if d := s3aDiff(keys, s3aSortedKeys(abandoned)); d != "" {
		t.Fatalf("abandoned uploads: %s", d)
	}
	// The abandoned uploads are not objects.
	for k := range abandoned {
		if strings.Contains(k, "_temporary") {
			if h, err := fs.head(ctx, k); err != nil || h != nil {
				t.Errorf("HEAD %s: found %v (%v), want 404", k, h != nil, err)
			}
		}
	}
	// What `hadoop s3guard uploads -abort` (or the lifecycle rule, a day
	// later) does.
	for _, u := range ups {
		if err := fs.abortUpload(ctx, aws.ToString(u.Key), aws.ToString(u.UploadId)); err != nil {
			t.Fatalf("abort %s: %v", aws.ToString(u.Key), err)
		}
	}
	s3aCheckNoUploads(t, ctx, fs, "after aborting the abandoned uploads")
}

// TestS3ACommitterUploadSemantics checks the multipart behaviour the
// committers rely on beyond the happy path: concurrent uploads to one key
// (speculative attempts), a single empty part, aborting a completed or
// aborted upload (404 NoSuchUpload: staging job abort then deletes the
// object), and a retried Complete (S3A retries it as idempotent).
func TestS3ACommitterUploadSemantics(t *testing.T) {
	ctx := s3aCtx(t, 60*time.Second)
	env := startS3AEnv(t)
	fs := env.bucket(t, ctx, "s3a-uploads")
	key := s3aDest + "/date=2026-11-27/part-00000-x-c000.csv"

	// Two attempts upload the same key.
	u1, err := fs.initiate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := fs.initiate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if u1.id == u2.id {
		t.Fatalf("two uploads to %s share the id %s", key, u1.id)
	}
	if err := u1.part(ctx, []byte("attempt 0\n")); err != nil {
		t.Fatal(err)
	}
	if err := u2.part(ctx, nil); err != nil { // a single 0-byte part
		t.Fatal(err)
	}
	etag2, err := fs.complete(ctx, key, u2.id, u2.etags)
	if err != nil {
		t.Fatalf("complete a single empty part: %v", err)
	}
	if got, err := fs.open(ctx, key, etag2); err != nil || len(got) != 0 {
		t.Fatalf("GET %s after the empty upload: %q %v", key, got, err)
	}
	// The loser is still there, and abortable.
	ups, err := fs.listUploads(ctx, s3aDest)
	if err != nil || len(ups) != 1 || aws.ToString(ups[0].UploadId) != u1.id {
		t.Fatalf("uploads after one of two completed: %v %v", ups, err)
	}
	if err := fs.abortUpload(ctx, key, u1.id); err != nil {
		t.Fatalf("abort the losing attempt: %v", err)
	}
	for _, tc := range []struct{ what, id string }{{"aborted", u1.id}, {"completed", u2.id}, {"unknown", "no-such-upload-id"}} {
		err := fs.abortUpload(ctx, key, tc.id)
		if s3aStatusOf(err) != http.StatusNotFound || s3aCodeOf(err) != "NoSuchUpload" {
			t.Errorf("abort an %s upload: %v, want 404 NoSuchUpload", tc.what, err)
		}
	}
	if err := u1.part(ctx, []byte("late")); s3aStatusOf(err) != http.StatusNotFound || s3aCodeOf(err) != "NoSuchUpload" {
		t.Errorf("UploadPart on an aborted upload: %v, want 404 NoSuchUpload", err)
	}

	// Change detection: the GET of an open and the copy of a rename carry
	// the ETag S3A saw; a changed object must answer 412.
	if _, err := fs.open(ctx, key, `"0123456789abcdef0123456789abcdef"`); s3aStatusOf(err) != http.StatusPreconditionFailed {
		t.Errorf("GET If-Match a stale ETag: %v, want 412", err)
	}
	if err := fs.copyObject(ctx, key, key+".copy", `"0123456789abcdef0123456789abcdef"`); s3aStatusOf(err) != http.StatusPreconditionFailed {
		t.Errorf("CopyObject x-amz-copy-source-if-match a stale ETag: %v, want 412", err)
	}
	if err := fs.copyObject(ctx, key, key+".copy", etag2); err != nil {
		t.Errorf("CopyObject x-amz-copy-source-if-match the current ETag: %v", err)
	}

	t.Run("CompleteRetry", func(t *testing.T) {
		u, err := fs.initiate(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.part(ctx, []byte("retried\n")); err != nil {
			t.Fatal(err)
		}
		e1, err := fs.complete(ctx, key, u.id, u.etags)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := fs.complete(ctx, key, u.id, u.etags)
		if err != nil || e2 != e1 {
			t.Fatalf("a retried CompleteMultipartUpload (POST /%s/%s?uploadId=%s, same parts) of a just-completed upload answers %v / ETag %q; S3 answers 200 with the same ETag %q (S3A retries Complete as idempotent)",
				fs.bucket, key, u.id, err, e2, e1)
		}
	})
}
