package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3LifecycleWorker: the background lifecycle worker applies the
// rules a client puts, with days shortened by --lifecycle-day: an
// abandoned multipart upload is aborted, an old object under an
// Expiration rule is deleted, and what no rule covers stays.
func TestS3LifecycleWorker(t *testing.T) {
	c := lifecycleServer(t, "lifecycle-worker")
	ctx := callCtx(t)
	const bucket = "lifecycle-worker"
	for _, key := range []string{"tmp/old", "keep/old"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte(key))}); err != nil {
			t.Fatal(err)
		}
	}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("abandoned")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("abandoned"),
		UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(bytes.Repeat([]byte("p"), 1024))}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(bucket),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{
			{ID: aws.String("abort"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")},
				AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)}},
			{ID: aws.String("expire-tmp"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("tmp/")},
				Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		ups, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
		if err != nil {
			t.Fatal(err)
		}
		_, herr := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("tmp/old")})
		var nf *types.NotFound
		done := len(ups.Uploads) == 0 && errors.As(herr, &nf)
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 15 s of 1 s lifecycle days: %d uploads left, tmp/old: %v", len(ups.Uploads), herr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("keep/old")}); err != nil {
		t.Errorf("keep/old, under no Expiration rule: %v", err)
	}
	_, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String("abandoned"), UploadId: up.UploadId})
	wantAPIError(t, fmt.Sprintf("ListParts of the aborted upload %s", aws.ToString(up.UploadId)), err, "NoSuchUpload", 404)
}

func lcEnabled(id string, filter *types.LifecycleRuleFilter) types.LifecycleRule {
	r := types.LifecycleRule{Status: types.ExpirationStatusEnabled, Filter: filter}
	if id != "" {
		r.ID = aws.String(id)
	}
	return r
}

func putLifecycle(ctx context.Context, c *s3.Client, bucket string, rules ...types.LifecycleRule) error {
	_, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(bucket), LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: rules}})
	return err
}

// TestS3LifecycleConfiguration: every rule shape comes back from GET as it
// was put (the legacy Prefix as Prefix, a Filter as that Filter, a rule
// without an ID with one), each invalid configuration is refused with
// S3's status and code, and DELETE removes the configuration.
func TestS3LifecycleConfiguration(t *testing.T) {
	s := startS3Server(t)
	c := sdkClient(s, s3User, s3Secret)
	ctx := callCtx(t)
	const bucket = "lifecycle-config"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	_, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	wantAPIError(t, "GET before any PUT", err, "NoSuchLifecycleConfiguration", 404)

	days := func(n int32) *types.LifecycleExpiration { return &types.LifecycleExpiration{Days: aws.Int32(n)} }
	//nolint:staticcheck // the deprecated, filterless Prefix is the shape under test
	legacy := types.LifecycleRule{ID: aws.String("legacy"), Prefix: aws.String("test1/"), Status: types.ExpirationStatusEnabled, Expiration: days(31)}
	prefix := lcEnabled("prefix", &types.LifecycleRuleFilter{Prefix: aws.String("logs/")})
	prefix.Expiration = days(2)
	prefix.Status = types.ExpirationStatusDisabled
	tag := lcEnabled("tag", &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("key1"), Value: aws.String("tag1")}})
	tag.Expiration = days(1)
	and := lcEnabled("and", &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{Prefix: aws.String("p/"),
		Tags:                  []types.Tag{{Key: aws.String("b"), Value: aws.String("2")}, {Key: aws.String("a"), Value: aws.String("1")}},
		ObjectSizeGreaterThan: aws.Int64(10), ObjectSizeLessThan: aws.Int64(1 << 20)}})
	and.Expiration = days(7)
	size := lcEnabled("size", &types.LifecycleRuleFilter{ObjectSizeGreaterThan: aws.Int64(1 << 30)})
	size.NoncurrentVersionExpiration = &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(3), NewerNoncurrentVersions: aws.Int32(2)}
	date := lcEnabled("date", &types.LifecycleRuleFilter{})
	date.Expiration = &types.LifecycleExpiration{Date: aws.Time(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))}
	marker := lcEnabled("marker", &types.LifecycleRuleFilter{Prefix: aws.String("dm/")})
	marker.Expiration = &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)}
	marker.NoncurrentVersionExpiration = &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1)}
	noID := lcEnabled("", &types.LifecycleRuleFilter{Prefix: aws.String("tmp/")})
	noID.AbortIncompleteMultipartUpload = &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(2)}
	put := []types.LifecycleRule{legacy, prefix, tag, and, size, date, marker, noID}
	if err := putLifecycle(ctx, c, bucket, put...); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != len(put) {
		t.Fatalf("GET: %d rules, want %d", len(got.Rules), len(put))
	}
	if id := aws.ToString(got.Rules[len(put)-1].ID); id == "" || len(id) > 255 {
		t.Errorf("rule put without ID: ID %q", id)
	}
	put[len(put)-1].ID = got.Rules[len(put)-1].ID
	for i := range put {
		if !reflect.DeepEqual(got.Rules[i], put[i]) {
			t.Errorf("rule %d:\n got %s\nwant %s", i, ruleJSON(got.Rules[i]), ruleJSON(put[i]))
		}
	}

	long := lcEnabled(strings.Repeat("a", 256), &types.LifecycleRuleFilter{Prefix: aws.String("")})
	long.Expiration = days(1)
	dup := lcEnabled("prefix", &types.LifecycleRuleFilter{Prefix: aws.String("other/")})
	dup.Expiration = days(1)
	zero := lcEnabled("zero", &types.LifecycleRuleFilter{})
	zero.Expiration = days(0)
	notMidnight := lcEnabled("d", &types.LifecycleRuleFilter{})
	notMidnight.Expiration = &types.LifecycleExpiration{Date: aws.Time(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))}
	twoFilters := lcEnabled("two", &types.LifecycleRuleFilter{Prefix: aws.String("a"), ObjectSizeLessThan: aws.Int64(5)})
	twoFilters.Expiration = days(1)
	both := lcEnabled("both", &types.LifecycleRuleFilter{})
	both.Expiration = &types.LifecycleExpiration{Days: aws.Int32(1), ExpiredObjectDeleteMarker: aws.Bool(true)}
	markerTags := lcEnabled("mt", &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("k"), Value: aws.String("v")}})
	markerTags.Expiration = &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)}
	noAction := lcEnabled("none", &types.LifecycleRuleFilter{})
	transition := lcEnabled("glacier", &types.LifecycleRuleFilter{})
	transition.Transitions = []types.Transition{{Days: aws.Int32(30), StorageClass: types.TransitionStorageClassGlacier}}
	crossed := lcEnabled("crossed", &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{
		ObjectSizeGreaterThan: aws.Int64(10), ObjectSizeLessThan: aws.Int64(5)}})
	crossed.Expiration = days(1)
	badStatus := types.LifecycleRule{ID: aws.String("s"), Status: "enabled", Filter: &types.LifecycleRuleFilter{}, Expiration: days(1)}
	for _, tc := range []struct {
		name   string
		rules  []types.LifecycleRule
		code   string
		status int
	}{
		{"ID of 256 characters", []types.LifecycleRule{long}, "InvalidArgument", 400},
		{"the same ID twice", []types.LifecycleRule{prefix, dup}, "InvalidArgument", 400},
		{"Days 0", []types.LifecycleRule{zero}, "InvalidArgument", 400},
		{"Date not at midnight", []types.LifecycleRule{notMidnight}, "InvalidArgument", 400},
		{"two filter conditions without And", []types.LifecycleRule{twoFilters}, "MalformedXML", 400},
		{"Days and ExpiredObjectDeleteMarker", []types.LifecycleRule{both}, "MalformedXML", 400},
		{"ExpiredObjectDeleteMarker with a tag filter", []types.LifecycleRule{markerTags}, "InvalidRequest", 400},
		{"no action", []types.LifecycleRule{noAction}, "InvalidRequest", 400},
		{"transition", []types.LifecycleRule{transition}, "InvalidStorageClass", 400},
		{"size bounds crossed", []types.LifecycleRule{crossed}, "InvalidArgument", 400},
		{"status not Enabled or Disabled", []types.LifecycleRule{badStatus}, "MalformedXML", 400},
	} {
		wantAPIError(t, tc.name, putLifecycle(ctx, c, bucket, tc.rules...), tc.code, tc.status)
	}
	// A refused configuration leaves the one in force.
	if got, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)}); err != nil || len(got.Rules) != len(put) {
		t.Fatalf("after the refusals: %v", err)
	}
	if _, err := c.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	wantAPIError(t, "GET after DELETE", err, "NoSuchLifecycleConfiguration", 404)
}

func ruleJSON(r types.LifecycleRule) string {
	b, _ := json.Marshal(r)
	return string(b)
}

var expirationRE = regexp.MustCompile(`^expiry-date="([^"]+)", rule-id="([^"]+)"$`)

// wantExpiration checks an x-amz-expiration value: the rule's ID and the
// day the object expires, days after mod rounded up to midnight UTC.
func wantExpiration(t *testing.T, what, header string, mod time.Time, days int, ruleID string) {
	t.Helper()
	m := expirationRE.FindStringSubmatch(header)
	if m == nil {
		t.Fatalf("%s: x-amz-expiration %q", what, header)
	}
	at, err := time.Parse(http.TimeFormat, m[1])
	if err != nil {
		t.Fatalf("%s: expiry-date %q: %v", what, m[1], err)
	}
	want := mod.UTC().Add(time.Duration(days) * 24 * time.Hour).Truncate(24 * time.Hour).Add(24 * time.Hour)
	if !at.Equal(want) || m[2] != ruleID {
		t.Fatalf("%s: expires %v by rule %q, want %v by %q", what, at, m[2], want, ruleID)
	}
}

// TestS3LifecycleExpirationHeader: PUT, GET, HEAD, CopyObject and
// CompleteMultipartUpload of an object that an Expiration rule covers say
// when it expires and by which rule; tag filters are honoured, and an
// object no rule covers has no header.
func TestS3LifecycleExpirationHeader(t *testing.T) {
	s := startS3Server(t)
	c := sdkClient(s, s3User, s3Secret)
	ctx := callCtx(t)
	const bucket = "lifecycle-header"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	byDays := lcEnabled("days 1", &types.LifecycleRuleFilter{Prefix: aws.String("days1/")})
	byDays.Expiration = &types.LifecycleExpiration{Days: aws.Int32(1)}
	byTag := lcEnabled("tag1", &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("key1"), Value: aws.String("tag1")}})
	byTag.Expiration = &types.LifecycleExpiration{Days: aws.Int32(3)}
	if err := putLifecycle(ctx, c, bucket, byDays, byTag); err != nil {
		t.Fatal(err)
	}
	put := func(key, tagging string) *s3.PutObjectOutput {
		in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte("body"))}
		if tagging != "" {
			in.Tagging = aws.String(tagging)
		}
		out, err := c.PutObject(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := put("days1/foo", "")
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("days1/foo")})
	if err != nil {
		t.Fatal(err)
	}
	mod := aws.ToTime(h.LastModified)
	wantExpiration(t, "PUT", aws.ToString(out.Expiration), mod, 1, "days%201")
	wantExpiration(t, "HEAD", aws.ToString(h.Expiration), mod, 1, "days%201")
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("days1/foo")})
	if err != nil {
		t.Fatal(err)
	}
	_ = g.Body.Close()
	wantExpiration(t, "GET", aws.ToString(g.Expiration), mod, 1, "days%201")
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("days1/copy"),
		CopySource: aws.String(bucket + "/days1/foo")})
	if err != nil {
		t.Fatal(err)
	}
	wantExpiration(t, "CopyObject", aws.ToString(cp.Expiration), aws.ToTime(cp.CopyObjectResult.LastModified), 1, "days%201")
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("days1/mp")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("days1/mp"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part"))})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("days1/mp"),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("days1/mp")})
	if err != nil {
		t.Fatal(err)
	}
	wantExpiration(t, "CompleteMultipartUpload", aws.ToString(done.Expiration), aws.ToTime(h.LastModified), 1, "days%201")

	// Tags set by PUT or by PutObjectTagging, and the rule's tag absent.
	put("tagged", "key1=tag1&key5=tag5")
	put("later", "")
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("later"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("key1"), Value: aws.String("tag1")}}}}); err != nil {
		t.Fatal(err)
	}
	put("other", "key1=tag2")
	for key, want := range map[string]bool{"tagged": true, "later": true, "other": false} {
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if !want {
			if h.Expiration != nil {
				t.Errorf("HEAD %s: x-amz-expiration %q, want none", key, *h.Expiration)
			}
			continue
		}
		wantExpiration(t, "HEAD "+key, aws.ToString(h.Expiration), aws.ToTime(h.LastModified), 3, "tag1")
	}
	// Without a rule for it, no header.
	if err := putLifecycle(ctx, c, bucket, byDays); err != nil {
		t.Fatal(err)
	}
	if h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("tagged")}); err != nil || h.Expiration != nil {
		t.Errorf("HEAD tagged once its rule is gone: %v %v", h.Expiration, err)
	}
}

// listVersionsOf returns bucket's versions as "key:v" or "key:dm" (delete
// markers), sorted.
func listVersionsOf(t *testing.T, ctx context.Context, c *s3.Client, bucket string) []string {
	t.Helper()
	out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range out.Versions {
		got = append(got, aws.ToString(v.Key)+":v")
	}
	for _, m := range out.DeleteMarkers {
		got = append(got, aws.ToString(m.Key)+":dm")
	}
	slices.Sort(got)
	return got
}

// TestS3LifecycleExpiry: with 1 s lifecycle days the worker carries out
// each action on a versioned bucket: an Expiration Date past hides the
// object behind a marker, a tag filter picks the tagged object,
// NoncurrentVersionExpiration keeps the newest noncurrent version asked
// for, and ExpiredObjectDeleteMarker removes a marker left alone.
func TestS3LifecycleExpiry(t *testing.T) {
	c := lifecycleServer(t, "lifecycle-expiry")
	ctx := callCtx(t)
	const bucket = "lifecycle-expiry"
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	put := func(key, tagging string) {
		in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte(key))}
		if tagging != "" {
			in.Tagging = aws.String(tagging)
		}
		if _, err := c.PutObject(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	put("date/a", "")
	put("tag/yes", "expire=yes")
	put("tag/no", "expire=no")
	for range 3 {
		put("nc/k", "")
	}
	put("dm/alone", "")
	put("dm/hides", "")
	for _, key := range []string{"dm/alone", "dm/hides"} {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
			t.Fatal(err)
		}
	}
	// dm/alone: remove its one object version, leaving the marker alone.
	vs, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String("dm/alone")})
	if err != nil || len(vs.Versions) != 1 {
		t.Fatalf("versions of dm/alone: %v", err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("dm/alone"), VersionId: vs.Versions[0].VersionId}); err != nil {
		t.Fatal(err)
	}

	date := lcEnabled("date", &types.LifecycleRuleFilter{Prefix: aws.String("date/")})
	date.Expiration = &types.LifecycleExpiration{Date: aws.Time(time.Now().UTC().Truncate(24 * time.Hour))}
	tagged := lcEnabled("tagged", &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{Prefix: aws.String("tag/"),
		Tags: []types.Tag{{Key: aws.String("expire"), Value: aws.String("yes")}}}})
	tagged.Expiration = &types.LifecycleExpiration{Days: aws.Int32(1)}
	nc := lcEnabled("nc", &types.LifecycleRuleFilter{Prefix: aws.String("nc/")})
	nc.NoncurrentVersionExpiration = &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1), NewerNoncurrentVersions: aws.Int32(1)}
	dm := lcEnabled("dm", &types.LifecycleRuleFilter{Prefix: aws.String("dm/")})
	dm.Expiration = &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)}
	if err := putLifecycle(ctx, c, bucket, date, tagged, nc, dm); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"date/a:dm", "date/a:v", // expired: hidden behind a marker
		"dm/hides:dm", "dm/hides:v", // a marker with a version behind it stays
		"nc/k:v", "nc/k:v", // the current version and the newest noncurrent one
		"tag/no:v",
		"tag/yes:dm", "tag/yes:v",
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := listVersionsOf(t, ctx, c, bucket)
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s of 1 s lifecycle days:\n got %q\nwant %q", got, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lifecycleServer starts a server whose lifecycle days last 1 s, checked
// every 200 ms, and makes bucket there; it returns the root's client.
func lifecycleServer(t *testing.T, bucket string) *s3.Client {
	t.Helper()
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	s := startServer(t, t.TempDir(), "--lifecycle-day", "1s", "--lifecycle-interval", "200ms")
	s.waitReady(readyTimeout)
	c := sdkClient(s, s3User, s3Secret)
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestS3LifecycleEncryptedSize: a rule's size filter compares the size S3
// shows, an encrypted object's plaintext size, not its longer stored
// stream: 1000 bytes encrypted pass ObjectSizeLessThan 1001 (x-amz-
// expiration says so, and the worker expires them), 1001 plain bytes
// do not.
func TestS3LifecycleEncryptedSize(t *testing.T) {
	s := startSSEServer(t, t.TempDir(), sseMasterA, "--lifecycle-day", "1s", "--lifecycle-interval", "200ms")
	c := sdkClient(s, s3User, s3Secret)
	ctx := callCtx(t)
	b := aws.String("lifecycle-sse")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: b,
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{
			{ID: aws.String("small"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{ObjectSizeLessThan: aws.Int64(1001)},
				Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}},
		}}}); err != nil {
		t.Fatal(err)
	}
	enc, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("enc"), Body: bytes.NewReader(make([]byte, 1000)),
		ServerSideEncryption: types.ServerSideEncryptionAes256})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(aws.ToString(enc.Expiration), `rule-id="small"`) {
		t.Errorf("PUT of 1000 encrypted bytes: x-amz-expiration %q, want rule small", aws.ToString(enc.Expiration))
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("big"), Body: bytes.NewReader(make([]byte, 1001))}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("enc")})
		var nf *types.NotFound
		if errors.As(err, &nf) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 15 s of 1 s lifecycle days the 1000 encrypted bytes are still there: %v", err)
		}
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("big")}); err != nil {
		t.Errorf("big, 1001 bytes, outside the filter: %v", err)
	}
}
