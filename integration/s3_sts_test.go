package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

// TestSTSAssumeRole: aws-sdk-go-v2's STS client gets temporary
// credentials from AssumeRole with a session policy narrower than the
// user's; with them the S3 client may do what both allow (the
// intersection) and is refused the rest with 403, refused without the
// session token, or with a token changed; the credentials cannot assume
// again nor manage users; a malformed policy and an out-of-range
// duration are refused with STS's codes.
func TestSTSAssumeRole(t *testing.T) {
	s := startS3Server(t)
	root := sdkClient(s, s3User, s3Secret)
	for _, b := range []string{"tables", "other"} {
		if _, err := root.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	// alice may read and write both buckets.
	policy := filepath.Join(t.TempDir(), "alice.json")
	if err := os.WriteFile(policy, []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*",
		"Resource":["arn:aws:s3:::tables","arn:aws:s3:::tables/*","arn:aws:s3:::other","arn:aws:s3:::other/*"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	browserAddUser(t, s, "alice", "alice-secret-key", "@"+policy)

	stsClient := func(ak, sk, token string) *sts.Client {
		return sts.New(sts.Options{
			Region:       s3Region,
			BaseEndpoint: aws.String(s.url("")),
			Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk, SessionToken: token, Source: "test"}, nil
			})),
			HTTPClient: sdkHTTPClient(),
		})
	}
	// The session may only read and write tables/t1/.
	session := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::tables/t1/*"},` +
		`{"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::tables","Condition":{"StringLike":{"s3:prefix":"t1/*"}}}]}`
	out, err := stsClient("alice", "alice-secret-key", "").AssumeRole(callCtx(t), &sts.AssumeRoleInput{
		RoleArn: aws.String("arn:aws:iam::000000000000:role/tables"), RoleSessionName: aws.String("engine"),
		Policy: aws.String(session), DurationSeconds: aws.Int32(900),
	})
	if err != nil {
		t.Fatalf("AssumeRole: %v", err)
	}
	c := out.Credentials
	if c == nil || !strings.HasPrefix(aws.ToString(c.AccessKeyId), "ASIA") || aws.ToString(c.SessionToken) == "" || c.Expiration == nil {
		t.Fatalf("credentials %+v", c)
	}
	ak, sk, token := aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken)
	temp := s3.New(s3.Options{Region: s3Region, BaseEndpoint: aws.String(s.url("")), UsePathStyle: true, HTTPClient: sdkHTTPClient(),
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk, SessionToken: token, Source: "test"}, nil
		}))})

	put := func(cl *s3.Client, bucket, key string) error {
		_, err := cl.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte("data of " + key))})
		return err
	}
	if err := put(temp, "tables", "t1/data/a.parquet"); err != nil {
		t.Fatalf("a put inside the session's policy: %v", err)
	}
	got, err := temp.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: aws.String("tables"), Key: aws.String("t1/data/a.parquet")})
	if err != nil {
		t.Fatalf("a get inside the session's policy: %v", err)
	}
	body, _ := io.ReadAll(got.Body)
	_ = got.Body.Close()
	if string(body) != "data of t1/data/a.parquet" {
		t.Fatalf("read back %q", body)
	}
	if _, err := temp.ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: aws.String("tables"), Prefix: aws.String("t1/")}); err != nil {
		t.Fatalf("a list inside the session's policy: %v", err)
	}
	if err := put(root, "other", "x"); err != nil {
		t.Fatal(err)
	}
	wantCode := func(what string, err error, status int, code string) {
		t.Helper()
		var re interface{ HTTPStatusCode() int }
		var ae smithy.APIError
		if err == nil || !errors.As(err, &re) || re.HTTPStatusCode() != status || !errors.As(err, &ae) || ae.ErrorCode() != code {
			t.Fatalf("%s: %v, want %d %s", what, err, status, code)
		}
	}
	// Outside the session's policy, though alice may: refused.
	wantCode("a put outside the table's location", put(temp, "tables", "t2/data/b.parquet"), http.StatusForbidden, "AccessDenied")
	_, err = temp.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: aws.String("other"), Key: aws.String("x")})
	wantCode("a get in another bucket alice may read", err, http.StatusForbidden, "AccessDenied")
	_, err = temp.ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: aws.String("tables"), Prefix: aws.String("t2/")})
	wantCode("a list of another prefix", err, http.StatusForbidden, "AccessDenied")
	_, err = temp.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: aws.String("tables"), Key: aws.String("t1/data/a.parquet")})
	wantCode("a delete the session's policy does not grant", err, http.StatusForbidden, "AccessDenied")

	// Without the token, or with another, the key is refused.
	noToken := sdkClient(s, ak, sk)
	wantCode("the temporary key without its token", put(noToken, "tables", "t1/x"), http.StatusForbidden, "InvalidAccessKeyId")
	badToken := s3.New(s3.Options{Region: s3Region, BaseEndpoint: aws.String(s.url("")), UsePathStyle: true, HTTPClient: sdkHTTPClient(),
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk, SessionToken: token[:len(token)-2] + "AA", Source: "test"}, nil
		}))})
	wantCode("the temporary key with a changed token", put(badToken, "tables", "t1/x"), http.StatusBadRequest, "InvalidToken")

	// Temporary credentials assume no role.
	_, err = stsClient(ak, sk, token).AssumeRole(callCtx(t), &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/x"), RoleSessionName: aws.String("again")})
	wantCode("AssumeRole with temporary credentials", err, http.StatusForbidden, "AccessDenied")
	// STS's refusals.
	alice := stsClient("alice", "alice-secret-key", "")
	_, err = alice.AssumeRole(callCtx(t), &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/x"), RoleSessionName: aws.String("s1"), Policy: aws.String("{not json")})
	wantCode("a malformed session policy", err, http.StatusBadRequest, "MalformedPolicyDocument")
	_, err = alice.AssumeRole(callCtx(t), &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/x"), RoleSessionName: aws.String("s2"), DurationSeconds: aws.Int32(60)})
	wantCode("a 60 s session", err, http.StatusBadRequest, "ValidationError")
	// The root's session is limited by its policy too.
	out, err = stsClient(s3User, s3Secret, "").AssumeRole(callCtx(t), &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/x"), RoleSessionName: aws.String("root-reader"),
		Policy: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	rc := out.Credentials
	rootTemp := s3.New(s3.Options{Region: s3Region, BaseEndpoint: aws.String(s.url("")), UsePathStyle: true, HTTPClient: sdkHTTPClient(),
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: aws.ToString(rc.AccessKeyId), SecretAccessKey: aws.ToString(rc.SecretAccessKey), SessionToken: aws.ToString(rc.SessionToken), Source: "test"}, nil
		}))})
	if _, err := rootTemp.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: aws.String("other"), Key: aws.String("x")}); err != nil {
		t.Fatalf("the root's session reading what its policy allows: %v", err)
	}
	wantCode("the root's session writing", put(rootTemp, "other", "y"), http.StatusForbidden, "AccessDenied")
}
