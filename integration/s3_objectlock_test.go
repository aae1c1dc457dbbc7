package integration

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsv4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Object lock against the real binary: statuses and codes as AWS
// documents them and the ceph s3-tests assert (test_object_lock_*).

func TestS3ObjectLock(t *testing.T) {
	s := startS3Server(t)
	c := sdkClient(s, s3User, s3Secret)
	ctx := callCtx(t)
	mk := func(name string, lock bool) {
		t.Helper()
		in := &s3.CreateBucketInput{Bucket: aws.String(name)}
		if lock {
			in.ObjectLockEnabledForBucket = aws.Bool(true)
		}
		if _, err := c.CreateBucket(ctx, in); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	put := func(b, key string, mod func(*s3.PutObjectInput)) string {
		t.Helper()
		in := &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(key), Body: bytes.NewReader([]byte("abc"))}
		if mod != nil {
			mod(in)
		}
		out, err := c.PutObject(ctx, in)
		if err != nil {
			t.Fatalf("put %s/%s: %v", b, key, err)
		}
		return aws.ToString(out.VersionId)
	}
	del := func(b, key, version string, bypass bool) error {
		in := &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String(key), VersionId: aws.String(version)}
		if bypass {
			in.BypassGovernanceRetention = aws.Bool(true)
		}
		_, err := c.DeleteObject(ctx, in)
		return err
	}
	retain := func(b, key, version string, mode types.ObjectLockRetentionMode, until time.Time, bypass bool) error {
		in := &s3.PutObjectRetentionInput{Bucket: aws.String(b), Key: aws.String(key),
			Retention: &types.ObjectLockRetention{Mode: mode, RetainUntilDate: aws.Time(until)}}
		if version != "" {
			in.VersionId = aws.String(version)
		}
		if bypass {
			in.BypassGovernanceRetention = aws.Bool(true)
		}
		_, err := c.PutObjectRetention(ctx, in)
		return err
	}
	hold := func(b, key, version string, on bool) {
		t.Helper()
		st := types.ObjectLockLegalHoldStatusOff
		if on {
			st = types.ObjectLockLegalHoldStatusOn
		}
		if _, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: aws.String(b), Key: aws.String(key),
			VersionId: aws.String(version), LegalHold: &types.ObjectLockLegalHold{Status: st}}); err != nil {
			t.Fatalf("legal hold %v: %v", on, err)
		}
	}
	future := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	lockConf := func(mode types.ObjectLockRetentionMode, days, years int32) *types.ObjectLockConfiguration {
		r := &types.DefaultRetention{Mode: mode}
		if days != 0 {
			r.Days = aws.Int32(days)
		}
		if years != 0 {
			r.Years = aws.Int32(years)
		}
		return &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled, Rule: &types.ObjectLockRule{DefaultRetention: r}}
	}

	// The bucket's configuration.
	mk("locked", true)
	mk("plain", false)
	ver, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("locked")})
	if err != nil || ver.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("a lock bucket's versioning: %v %v", ver.Status, err)
	}
	conf, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String("locked")})
	if err != nil || conf.ObjectLockConfiguration.ObjectLockEnabled != types.ObjectLockEnabledEnabled || conf.ObjectLockConfiguration.Rule != nil {
		t.Fatalf("lock configuration of a new lock bucket: %+v %v", conf, err)
	}
	_, err = c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String("plain")})
	wantAPIError(t, "GetObjectLockConfiguration without lock", err, "ObjectLockConfigurationNotFoundError", 404)
	_, err = c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("plain"), ObjectLockConfiguration: lockConf("GOVERNANCE", 1, 0)})
	wantAPIError(t, "PutObjectLockConfiguration on an unversioned bucket", err, "InvalidBucketState", 409)
	_, err = c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("locked"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}})
	wantAPIError(t, "suspending versioning on a lock bucket", err, "InvalidBucketState", 409)
	for _, tc := range []struct {
		name string
		conf *types.ObjectLockConfiguration
		code string
	}{
		{"days and years", lockConf("GOVERNANCE", 1, 1), "MalformedXML"},
		{"negative days", lockConf("GOVERNANCE", -1, 0), "InvalidRetentionPeriod"},
		{"negative years", lockConf("GOVERNANCE", 0, -1), "InvalidRetentionPeriod"},
		{"unknown mode", lockConf("governance", 0, 1), "MalformedXML"},
		{"disabled", &types.ObjectLockConfiguration{ObjectLockEnabled: "Disabled"}, "MalformedXML"},
	} {
		_, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("locked"), ObjectLockConfiguration: tc.conf})
		wantAPIError(t, "PutObjectLockConfiguration, "+tc.name, err, tc.code, 400)
	}

	// Headers on a bucket without lock, and without a checksum.
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("plain"), Key: aws.String("k"), Body: bytes.NewReader(nil),
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
	wantAPIError(t, "lock headers on a bucket without lock", err, "InvalidRequest", 400)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("locked"), Key: aws.String("k"), Body: bytes.NewReader(nil),
		ObjectLockMode: types.ObjectLockModeGovernance})
	wantAPIError(t, "mode without a date", err, "InvalidArgument", 400)
	// An unsigned payload with no Content-MD5 nor checksum is refused; a
	// signed payload hash counts as one (objectlock.go, hasChecksum).
	raw := newRaw(t, "PUT", objectURL(s, "locked", "nosum"), []byte("abc"))
	raw.Header.Set("x-amz-object-lock-legal-hold", "ON")
	raw.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	signer := awsv4.NewSigner(func(o *awsv4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := signer.SignHTTP(ctx, aws.Credentials{AccessKeyID: s3User, SecretAccessKey: s3Secret}, raw, "UNSIGNED-PAYLOAD", "s3", s3Region, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := doRaw(t, raw); r.status != 400 || r.code != "InvalidRequest" {
		t.Fatalf("PUT with lock headers and no checksum: %d %s", r.status, r.code)
	}

	// Default retention, and what it refuses.
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("locked"),
		ObjectLockConfiguration: lockConf("GOVERNANCE", 1, 0)}); err != nil {
		t.Fatal(err)
	}
	conf, err = c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String("locked")})
	if err != nil || conf.ObjectLockConfiguration.Rule == nil || aws.ToInt32(conf.ObjectLockConfiguration.Rule.DefaultRetention.Days) != 1 ||
		conf.ObjectLockConfiguration.Rule.DefaultRetention.Mode != "GOVERNANCE" {
		t.Fatalf("lock configuration: %+v %v", conf, err)
	}
	// A PUT given the default retention needs a checksum too.
	raw = newRaw(t, "PUT", objectURL(s, "locked", "nosum"), []byte("abc"))
	raw.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := signer.SignHTTP(ctx, aws.Credentials{AccessKeyID: s3User, SecretAccessKey: s3Secret}, raw, "UNSIGNED-PAYLOAD", "s3", s3Region, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := doRaw(t, raw); r.status != 400 || r.code != "InvalidRequest" {
		t.Fatalf("PUT under a default retention with no checksum: %d %s", r.status, r.code)
	}
	before := time.Now()
	v1 := put("locked", "doc", nil)
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("locked"), Key: aws.String("doc")})
	if err != nil || h.ObjectLockMode != types.ObjectLockModeGovernance || h.ObjectLockRetainUntilDate == nil ||
		h.ObjectLockRetainUntilDate.Before(before.Add(23*time.Hour)) || h.ObjectLockRetainUntilDate.After(before.Add(25*time.Hour)) {
		t.Fatalf("default retention of a new version: %+v %v", h, err)
	}
	wantAPIError(t, "DELETE of a GOVERNANCE version", del("locked", "doc", v1, false), "AccessDenied", 403)
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("locked"), Key: aws.String("doc")}); err != nil {
		t.Fatalf("DELETE without version id (a delete marker): %v", err)
	}
	wantAPIError(t, "shortening GOVERNANCE", retain("locked", "doc", v1, "GOVERNANCE", before.Add(time.Hour), false), "AccessDenied", 403)
	if err := retain("locked", "doc", v1, "GOVERNANCE", future, false); err != nil {
		t.Fatalf("lengthening GOVERNANCE: %v", err)
	}
	if err := del("locked", "doc", v1, true); err != nil {
		t.Fatalf("DELETE with the governance bypass: %v", err)
	}

	// COMPLIANCE from the write's headers: nothing shortens or removes it.
	v2 := put("locked", "comp", func(in *s3.PutObjectInput) {
		in.ObjectLockMode, in.ObjectLockRetainUntilDate = types.ObjectLockModeCompliance, aws.Time(future)
	})
	r, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String("locked"), Key: aws.String("comp"), VersionId: aws.String(v2)})
	if err != nil || r.Retention.Mode != types.ObjectLockRetentionModeCompliance || !aws.ToTime(r.Retention.RetainUntilDate).Equal(future) {
		t.Fatalf("GetObjectRetention: %+v %v", r, err)
	}
	wantAPIError(t, "shortening COMPLIANCE with bypass", retain("locked", "comp", v2, "COMPLIANCE", future.Add(-time.Hour), true), "AccessDenied", 403)
	wantAPIError(t, "COMPLIANCE to GOVERNANCE", retain("locked", "comp", v2, "GOVERNANCE", future, true), "AccessDenied", 403)
	wantAPIError(t, "DELETE of a COMPLIANCE version with bypass", del("locked", "comp", v2, true), "AccessDenied", 403)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("locked"), Key: aws.String("past"), Body: bytes.NewReader(nil),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: aws.Time(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))})
	wantAPIError(t, "retain-until date in the past", err, "InvalidArgument", 400)

	// Legal hold, and DeleteObjects' per-key errors.
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("locked"),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}}); err != nil {
		t.Fatal(err)
	}
	held, free := put("locked", "held", nil), put("locked", "free", nil)
	_, err = c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String("locked"), Key: aws.String("held")})
	wantAPIError(t, "GetObjectRetention without retention", err, "NoSuchObjectLockConfiguration", 404)
	hold("locked", "held", held, true)
	lh, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: aws.String("locked"), Key: aws.String("held")})
	if err != nil || lh.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
		t.Fatalf("GetObjectLegalHold: %+v %v", lh, err)
	}
	wantAPIError(t, "DELETE of a held version with bypass", del("locked", "held", held, true), "AccessDenied", 403)
	dr, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("locked"), BypassGovernanceRetention: aws.Bool(true),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("held"), VersionId: aws.String(held)}, {Key: aws.String("free"), VersionId: aws.String(free)}}}})
	if err != nil || len(dr.Deleted) != 1 || aws.ToString(dr.Deleted[0].Key) != "free" || len(dr.Errors) != 1 ||
		aws.ToString(dr.Errors[0].Key) != "held" || aws.ToString(dr.Errors[0].Code) != "AccessDenied" {
		t.Fatalf("DeleteObjects of a held and a free version: %+v %v", dr, err)
	}
	hold("locked", "held", held, false)
	if err := del("locked", "held", held, false); err != nil {
		t.Fatalf("DELETE after the hold is lifted: %v", err)
	}

	// Retention and legal hold need a bucket with lock.
	put("plain", "k", nil)
	wantAPIError(t, "PutObjectRetention without lock", retain("plain", "k", "", "GOVERNANCE", future, false), "InvalidRequest", 400)
	_, err = c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: aws.String("plain"), Key: aws.String("k")})
	wantAPIError(t, "GetObjectLegalHold without lock", err, "InvalidRequest", 400)

	// Lock enabled on an existing bucket once its versioning is.
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("plain"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("plain"),
		ObjectLockConfiguration: lockConf("COMPLIANCE", 0, 1)}); err != nil {
		t.Fatalf("lock on a versioned bucket: %v", err)
	}
	v3 := put("plain", "k", nil)
	wantAPIError(t, "DELETE under a default COMPLIANCE year", del("plain", "k", v3, true), "AccessDenied", 403)
}

// TestS3ObjectLockBypassPermission: x-amz-bypass-governance-retention
// needs s3:BypassGovernanceRetention; without it the header is ignored.
func TestS3ObjectLockBypassPermission(t *testing.T) {
	s := startS3Server(t)
	policy := filepath.Join(t.TempDir(), "nobypass.json")
	if err := os.WriteFile(policy, []byte(`{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Action":"s3:*","Resource":"*"},
	  {"Effect":"Deny","Action":"s3:BypassGovernanceRetention","Resource":"*"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCairn(t, 30*time.Second, "admin", "user", "add", "clerk", "--secret", "clerk-secret-key", "--policy", "@"+policy, "--endpoint="+s.url("")); r.code != 0 {
		t.Fatalf("user add: %d %s %s", r.code, r.stdout, r.stderr)
	}
	root, clerk := sdkClient(s, s3User, s3Secret), sdkClient(s, "clerk", "clerk-secret-key")
	ctx := callCtx(t)
	if _, err := root.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("gov"), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	out, err := root.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("gov"), Key: aws.String("k"), Body: bytes.NewReader([]byte("x")),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: aws.Time(time.Now().Add(24 * time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	in := &s3.DeleteObjectInput{Bucket: aws.String("gov"), Key: aws.String("k"), VersionId: out.VersionId, BypassGovernanceRetention: aws.Bool(true)}
	_, err = clerk.DeleteObject(ctx, in)
	wantAPIError(t, "bypass without s3:BypassGovernanceRetention", err, "AccessDenied", 403)
	if _, err := root.DeleteObject(ctx, in); err != nil {
		t.Fatalf("bypass by root: %v", err)
	}
}

// TestS3ObjectLockLifecycle: an Expiration rule only hides a locked
// version behind a delete marker; the version stays and stays locked.
func TestS3ObjectLockLifecycle(t *testing.T) {
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	s := startServer(t, t.TempDir(), "--lifecycle-day", "1s", "--lifecycle-interval", "200ms")
	s.waitReady(readyTimeout)
	c := sdkClient(s, s3User, s3Secret)
	ctx := callCtx(t)
	const b = "lock-lifecycle"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("tmp/kept"), Body: bytes.NewReader([]byte("kept")),
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: aws.Time(time.Now().Add(24 * time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(b),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{
			{ID: aws.String("expire"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("tmp/")},
				Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}}}}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("tmp/kept")})
		var nf *types.NotFound
		if errors.As(err, &nf) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 15 s of 1 s lifecycle days the key is still current: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("tmp/kept"), VersionId: out.VersionId})
	if err != nil {
		t.Fatalf("the locked version after expiration: %v", err)
	}
	_ = got.Body.Close()
	if got.ObjectLockMode != types.ObjectLockModeCompliance {
		t.Fatalf("lock mode after expiration: %q", got.ObjectLockMode)
	}
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("tmp/kept"), VersionId: out.VersionId})
	wantAPIError(t, "DELETE of the locked version after expiration", err, "AccessDenied", 403)
}

// TestS3ObjectLockBoto3 replays the ceph s3-tests' object lock cases.
func TestS3ObjectLockBoto3(t *testing.T) {
	tagLockBoto3(t, "objectlock", boto3LockSteps, []string{"config", "retention", "delete", "legal_hold", "upload", "mode_changes"})
}

const boto3LockSteps = `
Y2030 = datetime.datetime(2030, 1, 1, tzinfo=UTC)

def gov(days=1):
    return {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": days}}}

def step_config():
    b = new_bucket(lock=True)
    r = s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=gov())
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "put_object_lock_configuration")
    comp = {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Years": 1}}}
    s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=comp)
    check(s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"] == comp, "get returns what was put")
    check(s3.get_bucket_versioning(Bucket=b)["Status"] == "Enabled", "versioning enabled")
    plain = new_bucket()
    expect_error("lock on a plain bucket", 409, "InvalidBucketState", s3.put_object_lock_configuration, Bucket=plain, ObjectLockConfiguration=gov())
    expect_error("get lock of a plain bucket", 404, "ObjectLockConfigurationNotFoundError", s3.get_object_lock_configuration, Bucket=plain)
    both = {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1, "Years": 1}}}
    expect_error("days and years", 400, "MalformedXML", s3.put_object_lock_configuration, Bucket=b, ObjectLockConfiguration=both)
    expect_error("zero days", 400, "InvalidRetentionPeriod", s3.put_object_lock_configuration, Bucket=b, ObjectLockConfiguration=gov(0))
    neg = {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Years": -1}}}
    expect_error("negative years", 400, "InvalidRetentionPeriod", s3.put_object_lock_configuration, Bucket=b, ObjectLockConfiguration=neg)
    for mode in ("abc", "governance"):
        bad = {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": mode, "Years": 1}}}
        expect_error("mode " + mode, 400, "MalformedXML", s3.put_object_lock_configuration, Bucket=b, ObjectLockConfiguration=bad)
    dis = {"ObjectLockEnabled": "Disabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Years": 1}}}
    expect_error("status Disabled", 400, "MalformedXML", s3.put_object_lock_configuration, Bucket=b, ObjectLockConfiguration=dis)
    expect_error("suspend versioning", 409, "InvalidBucketState", s3.put_bucket_versioning, Bucket=b, VersioningConfiguration={"Status": "Suspended"})

def step_retention():
    b = new_bucket(lock=True)
    v = s3.put_object(Bucket=b, Body=b"abc", Key="file1")["VersionId"]
    ret = {"Mode": "GOVERNANCE", "RetainUntilDate": Y2030}
    r = s3.put_object_retention(Bucket=b, Key="file1", Retention=ret)
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "put_object_retention")
    check(s3.get_object_retention(Bucket=b, Key="file1")["Retention"] == ret, "get_object_retention")
    longer = {"Mode": "GOVERNANCE", "RetainUntilDate": datetime.datetime(2030, 1, 3, tzinfo=UTC)}
    s3.put_object_retention(Bucket=b, Key="file1", Retention=longer)
    check(s3.get_object_retention(Bucket=b, Key="file1")["Retention"] == longer, "increase period")
    expect_error("shorten period", 403, "AccessDenied", s3.put_object_retention, Bucket=b, Key="file1", Retention=ret)
    s3.put_object_retention(Bucket=b, Key="file1", Retention=ret, BypassGovernanceRetention=True)
    check(s3.get_object_retention(Bucket=b, Key="file1")["Retention"] == ret, "shorten period with bypass")
    h = s3.head_object(Bucket=b, Key="file1", VersionId=v)
    check(h["ResponseMetadata"]["HTTPHeaders"]["x-amz-object-lock-retain-until-date"].startswith("2030-01-01T00:00:00"), "retain-until header is ISO 8601")
    v2 = s3.put_object(Bucket=b, Body=b"abc", Key="file1")["VersionId"]
    s3.put_object_retention(Bucket=b, Key="file1", VersionId=v2, Retention=ret)
    check(s3.get_object_retention(Bucket=b, Key="file1", VersionId=v2)["Retention"] == ret, "retention by version id")
    for mode in ("governance", "abc"):
        expect_error("mode " + mode, 400, "MalformedXML", s3.put_object_retention, Bucket=b, Key="file1",
                     Retention={"Mode": mode, "RetainUntilDate": Y2030})
    plain = new_bucket()
    s3.put_object(Bucket=plain, Body=b"abc", Key="file1")
    expect_error("put retention on a plain bucket", 400, "InvalidRequest", s3.put_object_retention, Bucket=plain, Key="file1", Retention=ret)
    expect_error("get retention on a plain bucket", 400, "InvalidRequest", s3.get_object_retention, Bucket=plain, Key="file1")
    d = s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=gov())
    v3 = s3.put_object(Bucket=b, Body=b"abc", Key="file2")["VersionId"]
    s3.put_object_retention(Bucket=b, Key="file2", Retention=ret)
    check(s3.get_object_retention(Bucket=b, Key="file2")["Retention"] == ret, "override default retention")
    for key, ver in (("file1", v), ("file1", v2), ("file2", v3)):
        s3.delete_object(Bucket=b, Key=key, VersionId=ver, BypassGovernanceRetention=True)

def step_delete():
    b = new_bucket(lock=True)
    v = s3.put_object(Bucket=b, Body=b"abc", Key="file1")["VersionId"]
    s3.put_object_retention(Bucket=b, Key="file1", Retention={"Mode": "GOVERNANCE", "RetainUntilDate": Y2030})
    expect_error("delete retained version", 403, "AccessDenied", s3.delete_object, Bucket=b, Key="file1", VersionId=v)
    r = s3.delete_object(Bucket=b, Key="file1", VersionId=v, BypassGovernanceRetention=True)
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, "delete with bypass")
    v1 = s3.put_object(Bucket=b, Body=b"abc", Key="k1")["VersionId"]
    v2 = s3.put_object(Bucket=b, Body=b"abc", Key="k2")["VersionId"]
    s3.put_object_retention(Bucket=b, Key="k1", Retention={"Mode": "GOVERNANCE", "RetainUntilDate": Y2030})
    r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "k1", "VersionId": v1}, {"Key": "k2", "VersionId": v2}]})
    check(len(r["Deleted"]) == 1 and r["Deleted"][0]["Key"] == "k2" and r["Deleted"][0]["VersionId"] == v2, "multi-delete deletes the free one")
    check(len(r["Errors"]) == 1 and r["Errors"][0]["Code"] == "AccessDenied" and r["Errors"][0]["Key"] == "k1"
          and r["Errors"][0]["VersionId"] == v1, "multi-delete refuses the retained one")
    r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "k1", "VersionId": v1}]}, BypassGovernanceRetention=True)
    check(not r.get("Errors") and len(r["Deleted"]) == 1, "multi-delete with bypass")

def step_legal_hold():
    b = new_bucket(lock=True)
    v = s3.put_object(Bucket=b, Body=b"abc", Key="file1")["VersionId"]
    r = s3.put_object_legal_hold(Bucket=b, Key="file1", LegalHold={"Status": "ON"})
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "put legal hold")
    check(s3.get_object_legal_hold(Bucket=b, Key="file1")["LegalHold"] == {"Status": "ON"}, "get legal hold ON")
    expect_error("delete held version", 403, "AccessDenied", s3.delete_object, Bucket=b, Key="file1", VersionId=v)
    s3.put_object_legal_hold(Bucket=b, Key="file1", LegalHold={"Status": "OFF"})
    check(s3.get_object_legal_hold(Bucket=b, Key="file1")["LegalHold"] == {"Status": "OFF"}, "get legal hold OFF")
    r = s3.delete_object(Bucket=b, Key="file1", VersionId=v)
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, "delete after the hold is lifted")
    s3.put_object(Bucket=b, Body=b"abc", Key="file2")
    expect_error("status abc", 400, "MalformedXML", s3.put_object_legal_hold, Bucket=b, Key="file2", LegalHold={"Status": "abc"})
    plain = new_bucket()
    s3.put_object(Bucket=plain, Body=b"abc", Key="file1")
    expect_error("put hold on a plain bucket", 400, "InvalidRequest", s3.put_object_legal_hold, Bucket=plain, Key="file1", LegalHold={"Status": "ON"})
    expect_error("get hold on a plain bucket", 400, "InvalidRequest", s3.get_object_legal_hold, Bucket=plain, Key="file1")

def step_upload():
    b = new_bucket(lock=True)
    s3.put_object(Bucket=b, Body=b"abc", Key="file1", ObjectLockMode="GOVERNANCE",
                  ObjectLockRetainUntilDate=Y2030, ObjectLockLegalHoldStatus="ON")
    h = s3.head_object(Bucket=b, Key="file1")
    check(h["ObjectLockMode"] == "GOVERNANCE" and h["ObjectLockRetainUntilDate"] == Y2030
          and h["ObjectLockLegalHoldStatus"] == "ON", "lock headers on HEAD")
    s3.put_object_legal_hold(Bucket=b, Key="file1", LegalHold={"Status": "OFF"})
    s3.delete_object(Bucket=b, Key="file1", VersionId=h["VersionId"], BypassGovernanceRetention=True)

def step_mode_changes():
    b = new_bucket(lock=True)
    until = datetime.datetime.now(UTC) + datetime.timedelta(days=1)
    s3.put_object(Bucket=b, Body=b"abc", Key="g", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=until)
    expect_error("GOVERNANCE to COMPLIANCE without bypass", 403, "AccessDenied", s3.put_object_retention, Bucket=b, Key="g",
                 Retention={"Mode": "COMPLIANCE", "RetainUntilDate": until})
    s3.put_object_retention(Bucket=b, Key="g", Retention={"Mode": "COMPLIANCE", "RetainUntilDate": until}, BypassGovernanceRetention=True)
    check(s3.get_object_retention(Bucket=b, Key="g")["Retention"]["Mode"] == "COMPLIANCE", "GOVERNANCE to COMPLIANCE with bypass")
    s3.put_object(Bucket=b, Body=b"abc", Key="c", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until)
    expect_error("COMPLIANCE to GOVERNANCE", 403, "AccessDenied", s3.put_object_retention, Bucket=b, Key="c",
                 Retention={"Mode": "GOVERNANCE", "RetainUntilDate": until}, BypassGovernanceRetention=True)
`
