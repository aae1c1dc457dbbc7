package integration

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3BucketPolicy: Put/Get/DeleteBucketPolicy, the policy language's
// rules decided for another user and anonymous, and GetBucketPolicyStatus.
func TestS3BucketPolicy(t *testing.T) {
	s := startS3Server(t)
	alice := addAccessUser(t, s, "alice", "", "readwrite")
	bob := addAccessUser(t, s, "bob", "", "readwrite")
	ctx := callCtx(t)
	const bkt = "pol-alice"
	if _, err := alice.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bkt)}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"home/a", "other/b", "secret/c", "pub/d"} {
		if _, err := alice.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := alice.c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(bkt)})
	wantAPIError(t, "policy before any", err, "NoSuchBucketPolicy", 404)
	status := func() bool {
		t.Helper()
		out, err := alice.c.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String(bkt)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToBool(out.PolicyStatus.IsPublic)
	}
	if status() {
		t.Error("a bucket without policy is public")
	}
	for _, tc := range []struct{ doc, why string }{
		{`{`, "bad JSON"},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol-alice/*","Colour":"red"}]}`, "unknown field"},
		{`{"Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol-alice/*"}]}`, "no principal"},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}]}`, "another bucket"},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol-alice/*","Condition":{"Sometimes":{"s3:prefix":"a"}}}]}`, "unknown operator"},
	} {
		_, err := alice.c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bkt), Policy: aws.String(tc.doc)})
		wantAPIError(t, "policy with "+tc.why, err, "MalformedPolicy", 400)
	}
	setPolicy := func(doc string) {
		t.Helper()
		if _, err := alice.c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bkt), Policy: aws.String(doc)}); err != nil {
			t.Fatalf("PutBucketPolicy %s: %v", doc, err)
		}
	}
	bobGet := func(key string) error {
		_, err := bob.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String(key)})
		return err
	}
	bobList := func(prefix string) error {
		in := &s3.ListObjectsV2Input{Bucket: aws.String(bkt)}
		if prefix != "" {
			in.Prefix = aws.String(prefix)
		}
		_, err := bob.c.ListObjectsV2(ctx, in)
		return err
	}
	wantOK := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	wantDenied := func(what string, err error) { t.Helper(); wantAPIError(t, what, err, "AccessDenied", 403) }

	wantDenied("bob reads without a policy", bobGet("home/a"))
	doc := `{"Version":"2012-10-17","Statement":[
	  {"Sid":"bob-reads","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::pol-alice/*"},
	  {"Sid":"no-secrets","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::pol-alice/secret/*"},
	  {"Sid":"bob-lists-home","Effect":"Allow","Principal":{"AWS":["arn:aws:iam::000000000000:user/bob"]},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::pol-alice","Condition":{"StringLike":{"s3:prefix":"home/*"}}}]}`
	setPolicy(doc)
	got, err := alice.c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(bkt)})
	if err != nil || aws.ToString(got.Policy) != doc {
		t.Fatalf("GetBucketPolicy: %v %q", err, aws.ToString(got.Policy))
	}
	if status() {
		t.Error("a policy granting only bob is public")
	}
	wantOK("bob reads (user ARN)", bobGet("home/a"))
	wantDenied("bob reads a secret (Deny wins)", bobGet("secret/c"))
	_, err = alice.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("secret/c")})
	wantDenied("alice, the owner, reads a secret (Deny wins)", err)
	wantOK("bob lists home/ (StringLike s3:prefix)", bobList("home/"))
	wantDenied("bob lists other/", bobList("other/"))
	wantDenied("bob lists everything", bobList(""))
	_, err = bob.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("home/x"), Body: strings.NewReader("x")})
	wantDenied("bob writes (not granted)", err)
	// The Deny also beats an ACL.
	if _, err := alice.c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String(bkt), Key: aws.String("secret/c"), GrantRead: aws.String("id=bob")}); err == nil {
		t.Error("alice changed a secret's ACL despite the Deny on s3:*")
	}

	// Principal "*" with IP conditions, aws:SecureTransport.
	for _, tc := range []struct {
		cond   string
		bobGet bool
	}{
		{`{"IpAddress":{"aws:SourceIp":"127.0.0.1/32"}}`, true},
		{`{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, false},
		{`{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, true},
		{`{"Bool":{"aws:SecureTransport":"false"}}`, true},
		{`{"Bool":{"aws:SecureTransport":"true"}}`, false},
	} {
		setPolicy(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol-alice/pub/*","Condition":` + tc.cond + `}]}`)
		if err := bobGet("pub/d"); tc.bobGet {
			wantOK("bob reads with "+tc.cond, err)
		} else {
			wantDenied("bob reads with "+tc.cond, err)
		}
	}
	setPolicy(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol-alice/pub/*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`)
	if status() {
		t.Error("a policy for Principal * from 10.0.0.0/8 only is public")
	}
	setPolicy(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol-alice/pub/*"}]}`)
	if !status() {
		t.Error("a policy for Principal * is not public")
	}
	setPolicy(`{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::pol-alice/*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`)
	_, err = alice.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("plain"), Body: strings.NewReader("x")})
	wantDenied("alice writes over plain HTTP (Deny unless SecureTransport)", err)

	t.Run("anonymous", func(t *testing.T) {
		skipUnlessAnonymous(t, s)
		setPolicy(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::pol-alice","arn:aws:s3:::pol-alice/pub/*"]}]}`)
		if res := anonDo(t, "GET", objectURL(s, bkt, "pub/d"), nil); res.status != 200 {
			t.Errorf("anonymous reads pub/d: %d %s", res.status, res.body)
		}
		if res := anonDo(t, "GET", objectURL(s, bkt, "home/a"), nil); res.status != 403 || res.code != "AccessDenied" {
			t.Errorf("anonymous reads home/a: %d %s", res.status, res.code)
		}
		if res := anonDo(t, "GET", s.url("/"+bkt+"?list-type=2"), nil); res.status != 200 {
			t.Errorf("anonymous lists: %d %s", res.status, res.body)
		}
		setPolicy(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol-alice/*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`)
		if res := anonDo(t, "GET", objectURL(s, bkt, "pub/d"), nil); res.status != 403 {
			t.Errorf("anonymous from 127.0.0.1 with a 10/8 policy: %d", res.status)
		}
	})

	if _, err := alice.c.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String(bkt)}); err != nil {
		t.Fatal(err)
	}
	_, err = alice.c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(bkt)})
	wantAPIError(t, "policy after delete", err, "NoSuchBucketPolicy", 404)
	_, err = bob.c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bkt), Policy: aws.String(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::pol-alice/*"}]}`)})
	wantDenied("bob sets alice's policy", err)
}

// TestS3PublicAccessBlock: each of the four switches.
func TestS3PublicAccessBlock(t *testing.T) {
	s := startS3Server(t)
	alice := addAccessUser(t, s, "alice", "", "readwrite")
	bob := addAccessUser(t, s, "bob", "", "readwrite")
	ctx := callCtx(t)
	const bkt = "pab-alice"
	if _, err := alice.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bkt)}); err != nil {
		t.Fatal(err)
	}
	_, err := alice.c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bkt)})
	wantAPIError(t, "PAB before any", err, "NoSuchPublicAccessBlockConfiguration", 404)
	if _, err := alice.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("pub"), Body: strings.NewReader("x"), ACL: types.ObjectCannedACLAuthenticatedRead}); err != nil {
		t.Fatal(err)
	}
	setPAB := func(c types.PublicAccessBlockConfiguration) {
		t.Helper()
		if _, err := alice.c.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String(bkt), PublicAccessBlockConfiguration: &c}); err != nil {
			t.Fatal(err)
		}
		got, err := alice.c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bkt)})
		if err != nil {
			t.Fatal(err)
		}
		g := got.PublicAccessBlockConfiguration
		if aws.ToBool(g.BlockPublicAcls) != aws.ToBool(c.BlockPublicAcls) || aws.ToBool(g.IgnorePublicAcls) != aws.ToBool(c.IgnorePublicAcls) ||
			aws.ToBool(g.BlockPublicPolicy) != aws.ToBool(c.BlockPublicPolicy) || aws.ToBool(g.RestrictPublicBuckets) != aws.ToBool(c.RestrictPublicBuckets) {
			t.Fatalf("GetPublicAccessBlock %+v, want %+v", g, c)
		}
	}
	bobGet := func() error {
		_, err := bob.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("pub")})
		return err
	}
	if err := bobGet(); err != nil {
		t.Fatalf("bob reads the authenticated-read object: %v", err)
	}

	setPAB(types.PublicAccessBlockConfiguration{BlockPublicAcls: aws.Bool(true)})
	_, err = alice.c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(bkt), ACL: types.BucketCannedACLPublicRead})
	wantAPIError(t, "BlockPublicAcls: public-read bucket ACL", err, "AccessDenied", 403)
	_, err = alice.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("p2"), Body: strings.NewReader("x"), ACL: types.ObjectCannedACLPublicRead})
	wantAPIError(t, "BlockPublicAcls: public-read object", err, "AccessDenied", 403)
	_, err = alice.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("p2"), Body: strings.NewReader("x"), GrantRead: aws.String(`uri="http://acs.amazonaws.com/groups/global/AllUsers"`)})
	wantAPIError(t, "BlockPublicAcls: AllUsers grant", err, "AccessDenied", 403)
	if _, err := alice.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("p2"), Body: strings.NewReader("x"), ACL: types.ObjectCannedACLPrivate}); err != nil {
		t.Errorf("BlockPublicAcls: private object: %v", err)
	}
	if err := bobGet(); err != nil {
		t.Errorf("BlockPublicAcls does not hide existing grants: %v", err)
	}

	setPAB(types.PublicAccessBlockConfiguration{IgnorePublicAcls: aws.Bool(true)})
	wantAPIError(t, "IgnorePublicAcls: bob reads", bobGet(), "AccessDenied", 403)

	pub := `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pab-alice/*"}]}`
	setPAB(types.PublicAccessBlockConfiguration{BlockPublicPolicy: aws.Bool(true)})
	_, err = alice.c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bkt), Policy: aws.String(pub)})
	wantAPIError(t, "BlockPublicPolicy: public policy", err, "AccessDenied", 403)
	if _, err := alice.c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bkt), Policy: aws.String(
		`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::pab-alice/*"}]}`)}); err != nil {
		t.Errorf("BlockPublicPolicy: a policy for bob: %v", err)
	}

	setPAB(types.PublicAccessBlockConfiguration{RestrictPublicBuckets: aws.Bool(true)})
	if _, err := alice.c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bkt), Policy: aws.String(pub)}); err != nil {
		t.Fatal(err)
	}
	if err := bobGet(); err != nil {
		t.Errorf("RestrictPublicBuckets: bob, of the account, reads through the public policy: %v", err)
	}
	t.Run("anonymous", func(t *testing.T) {
		skipUnlessAnonymous(t, s)
		if res := anonDo(t, "GET", objectURL(s, bkt, "pub"), nil); res.status != 403 || res.code != "AccessDenied" {
			t.Errorf("RestrictPublicBuckets: anonymous reads: %d %s", res.status, res.code)
		}
		if _, err := alice.c.DeletePublicAccessBlock(ctx, &s3.DeletePublicAccessBlockInput{Bucket: aws.String(bkt)}); err != nil {
			t.Fatal(err)
		}
		if res := anonDo(t, "GET", objectURL(s, bkt, "pub"), nil); res.status != 200 {
			t.Errorf("no block: anonymous reads: %d %s", res.status, res.body)
		}
	})
	if _, err := alice.c.DeletePublicAccessBlock(ctx, &s3.DeletePublicAccessBlockInput{Bucket: aws.String(bkt)}); err != nil {
		t.Fatal(err)
	}
	_, err = alice.c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bkt)})
	wantAPIError(t, "PAB after delete", err, "NoSuchPublicAccessBlockConfiguration", 404)
	res := signedRaw(t, http.MethodPut, s.url("/"+bkt+"?publicAccessBlock"), []byte("<PublicAccessBlockConfiguration>"), nil, alice.name, alice.secret)
	if res.status != 400 || res.code != "MalformedXML" {
		t.Errorf("malformed PAB: %d %s", res.status, res.code)
	}
}

// TestS3OwnershipControls: BucketOwnerEnforced disables ACLs,
// BucketOwnerPreferred gives the bucket owner what is written with
// bucket-owner-full-control.
func TestS3OwnershipControls(t *testing.T) {
	s := startS3Server(t)
	alice := addAccessUser(t, s, "alice", "", "readwrite")
	bob := addAccessUser(t, s, "bob", "", "readwrite")
	ctx := callCtx(t)
	const bkt = "oc-alice"
	if _, err := alice.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bkt)}); err != nil {
		t.Fatal(err)
	}
	_, err := alice.c.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String(bkt)})
	wantAPIError(t, "ownership before any", err, "OwnershipControlsNotFoundError", 404)
	if _, err := alice.c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bkt), Policy: aws.String(
		`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/bob"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::oc-alice/*"}]}`)}); err != nil {
		t.Fatal(err)
	}
	setOwnership := func(o types.ObjectOwnership) {
		t.Helper()
		if _, err := alice.c.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: aws.String(bkt),
			OwnershipControls: &types.OwnershipControls{Rules: []types.OwnershipControlsRule{{ObjectOwnership: o}}}}); err != nil {
			t.Fatal(err)
		}
		got, err := alice.c.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String(bkt)})
		if err != nil || len(got.OwnershipControls.Rules) != 1 || got.OwnershipControls.Rules[0].ObjectOwnership != o {
			t.Fatalf("GetBucketOwnershipControls: %v %+v", err, got)
		}
	}
	ownerOf := func(key string) string {
		t.Helper()
		out, err := alice.c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(bkt), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GetObjectAcl %s: %v", key, err)
		}
		return aws.ToString(out.Owner.ID) + " " + grantsOf(out.Grants)
	}
	bobPut := func(key string, canned types.ObjectCannedACL) error {
		_, err := bob.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String(key), Body: strings.NewReader("x"), ACL: canned})
		return err
	}

	setOwnership(types.ObjectOwnershipBucketOwnerPreferred)
	if err := bobPut("preferred-bofc", types.ObjectCannedACLBucketOwnerFullControl); err != nil {
		t.Fatal(err)
	}
	if got := ownerOf("preferred-bofc"); got != "alice CanonicalUser/alice:FULL_CONTROL" {
		t.Errorf("BucketOwnerPreferred with bucket-owner-full-control: %s", got)
	}
	if err := bobPut("preferred-private", ""); err != nil {
		t.Fatal(err)
	}
	_, err = alice.c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(bkt), Key: aws.String("preferred-private")})
	wantAPIError(t, "alice reads the ACL of bob's object", err, "AccessDenied", 403)

	setOwnership(types.ObjectOwnershipObjectWriter)
	if err := bobPut("writer-bofc", types.ObjectCannedACLBucketOwnerFullControl); err != nil {
		t.Fatal(err)
	}
	if got := ownerOf("writer-bofc"); got != "bob CanonicalUser/alice:FULL_CONTROL CanonicalUser/bob:FULL_CONTROL" {
		t.Errorf("ObjectWriter with bucket-owner-full-control: %s", got)
	}

	setOwnership(types.ObjectOwnershipBucketOwnerEnforced)
	wantAPIError(t, "enforced: bob writes public-read", bobPut("enforced-pub", types.ObjectCannedACLPublicRead), "AccessControlListNotSupported", 400)
	if err := bobPut("enforced-bofc", types.ObjectCannedACLBucketOwnerFullControl); err != nil {
		t.Errorf("enforced: bob writes bucket-owner-full-control: %v", err)
	}
	if err := bobPut("enforced-plain", ""); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"enforced-plain", "enforced-bofc", "writer-bofc"} {
		if got := ownerOf(k); got != "alice CanonicalUser/alice:FULL_CONTROL" {
			t.Errorf("enforced: %s's ACL %s, want the bucket owner's full control", k, got)
		}
	}
	_, err = alice.c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(bkt), ACL: types.BucketCannedACLPublicRead})
	wantAPIError(t, "enforced: public-read bucket ACL", err, "AccessControlListNotSupported", 400)
	if _, err := alice.c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(bkt), ACL: types.BucketCannedACLPrivate}); err != nil {
		t.Errorf("enforced: private bucket ACL: %v", err)
	}
	_, err = alice.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("oc-enforced"), ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced, ACL: types.BucketCannedACLPublicRead})
	wantAPIError(t, "CreateBucket enforced with public-read", err, "InvalidBucketAclWithObjectOwnership", 400)
	if _, err := alice.c.DeleteBucketOwnershipControls(ctx, &s3.DeleteBucketOwnershipControlsInput{Bucket: aws.String(bkt)}); err != nil {
		t.Fatal(err)
	}
	_, err = alice.c.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String(bkt)})
	wantAPIError(t, "ownership after delete", err, "OwnershipControlsNotFoundError", 404)
}

// policyBoto3Script drives, with boto3 as ceph's s3-tests do, the policy
// conditions that read the object's tags (s3:ExistingObjectTag) or the
// write's (s3:RequestObjectTag), wildcard resources naming every bucket,
// the answer to a read of a key that is not there (NoSuchKey to whom may
// list the bucket, else AccessDenied), and the IAM user-policy API. main
// and alt are users; ROOT the root. Exit 0 passes; 4 means the server
// refused unsigned requests before authorization.
const policyBoto3Script = `
def policy(b, action, cond=None, resource=None):
    st = {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": action, "Resource": resource or "arn:aws:s3:::%s/*" % b}
    if cond:
        st["Condition"] = cond
    return json.dumps({"Version": "2012-10-17", "Statement": [st]})

def step_tags():
    b = "boto3-tags"
    main.create_bucket(Bucket=b)
    for k, tags in (("publictag", [("security", "public"), ("foo", "bar")]), ("privatetag", [("security", "private")]), ("invalidtag", [("security1", "public")])):
        main.put_object(Bucket=b, Key=k, Body=k)
        main.put_object_tagging(Bucket=b, Key=k, Tagging={"TagSet": [{"Key": t, "Value": v} for t, v in tags]})
    main.put_bucket_policy(Bucket=b, Policy=policy(b, ["s3:GetObject", "s3:GetObjectTagging", "s3:GetObjectAcl", "s3:PutObjectTagging"],
        {"StringEquals": {"s3:ExistingObjectTag/security": "public"}}))
    check(alt.get_object(Bucket=b, Key="publictag")["Body"].read() == b"publictag", "ExistingObjectTag allows GetObject")
    check(alt.get_object_tagging(Bucket=b, Key="publictag")["TagSet"] != [], "ExistingObjectTag allows GetObjectTagging")
    check(alt.get_object_acl(Bucket=b, Key="publictag")["Grants"] != [], "ExistingObjectTag allows GetObjectAcl")
    for k in ("privatetag", "invalidtag"):
        for fn in (alt.get_object, alt.get_object_tagging, alt.get_object_acl):
            check(error(fn, Bucket=b, Key=k) == (403, "AccessDenied"), "%s of %s denied" % (fn.__name__, k))
    check(error(alt.put_object_tagging, Bucket=b, Key="privatetag", Tagging={"TagSet": [{"Key": "security", "Value": "public"}]}) == (403, "AccessDenied"), "PutObjectTagging decided on the tags there")
    alt.put_object_tagging(Bucket=b, Key="publictag", Tagging={"TagSet": [{"Key": "security", "Value": "private"}]})
    check(error(alt.get_object, Bucket=b, Key="publictag") == (403, "AccessDenied"), "retagged private")

    b2 = "boto3-reqtags"
    main.create_bucket(Bucket=b2)
    main.put_bucket_policy(Bucket=b2, Policy=policy(b2, "s3:PutObject", {"StringEquals": {"s3:RequestObjectTag/security": "public"}}))
    check(error(alt.put_object, Bucket=b2, Key="k", Body=b"k") == (403, "AccessDenied"), "RequestObjectTag: no tags")
    check(error(alt.put_object, Bucket=b2, Key="k", Body=b"k", Tagging="security=private") == (403, "AccessDenied"), "RequestObjectTag: other value")
    alt.put_object(Bucket=b2, Key="k", Body=b"k", Tagging="security=public")
    check(main.get_object_tagging(Bucket=b2, Key="k")["TagSet"] == [{"Key": "security", "Value": "public"}], "RequestObjectTag: written")

def step_resources():
    b1, b2 = "boto3-res1", "boto3-res2"
    for b in (b1, b2):
        main.create_bucket(Bucket=b)
        main.put_object(Bucket=b, Key="k", Body=b"k")
    pol = policy(b1, "s3:ListBucket", resource=["arn:aws:s3:::*", "arn:aws:s3:::*/*"])
    main.put_bucket_policy(Bucket=b1, Policy=pol)
    main.put_bucket_policy(Bucket=b2, Policy=main.get_bucket_policy(Bucket=b1)["Policy"])
    for b in (b1, b2):
        check(len(alt.list_objects(Bucket=b)["Contents"]) == 1, "alt lists %s through arn:aws:s3:::*" % b)
    check(error(main.put_bucket_policy, Bucket=b1, Policy=policy(b1, "s3:ListBucket", resource="arn:aws:s3:::%s" % b2)) == (400, "MalformedPolicy"), "another bucket's ARN")
    check(error(main.put_bucket_policy, Bucket=b1, Policy=policy(b1, "s3:ListBucket", resource="arn:aws:s3::*:%s" % b1)) == (400, "MalformedPolicy"), "tenant ARN")

def step_missing():
    b = "boto3-missing"
    main.create_bucket(Bucket=b, ACL="public-read")
    main.put_object(Bucket=b, Key="foo", Body=b"foo", ACL="public-read")
    main.delete_object(Bucket=b, Key="foo")
    try:
        anon.get_object(Bucket=b, Key="foo")
    except ClientError as e:
        if "Anonymous access is not allowed" in e.response["Error"].get("Message", ""):
            print("UNSIGNED-REFUSED")
            sys.exit(4)
        check((e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]) == (404, "NoSuchKey"), "anonymous GET of a deleted key in a public-read bucket: %r" % e.response["Error"])
    check(error(anon.head_object, Bucket=b, Key="foo")[0] == 404, "anonymous HEAD: 404")
    main.put_bucket_acl(Bucket=b, ACL="private")
    main.put_bucket_policy(Bucket=b, Policy=policy(b, "s3:GetObject"))
    check(error(alt.get_object, Bucket=b, Key="foo") == (403, "AccessDenied"), "GetObject without ListBucket: 403")
    check(error(anon.get_object, Bucket=b, Key="foo") == (403, "AccessDenied"), "anonymous without ListBucket: 403")
    check(error(alt.head_object, Bucket=b, Key="foo")[0] == 403, "HEAD without ListBucket: 403")
    check(error(main.get_object, Bucket=b, Key="foo") == (404, "NoSuchKey"), "the owner: 404")

def step_iam():
    root_iam = client(os.environ["ROOT_KEY"], os.environ["ROOT_SECRET"], service="iam")
    alt_iam = client(os.environ["ALT_KEY"], os.environ["ALT_SECRET"], service="iam")
    b = "boto3-iam"
    main.create_bucket(Bucket=b)
    main.put_object(Bucket=b, Key="k", Body=b"k")
    main.put_bucket_policy(Bucket=b, Policy=policy(b, "s3:GetObject"))
    check(alt.get_object(Bucket=b, Key="k")["Body"].read() == b"k", "alt reads before its inline policy")
    deny = {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::%s/*" % b}]}
    root_iam.put_user_policy(UserName=ALT, PolicyName="NoGet", PolicyDocument=json.dumps(deny))
    check(error(alt.get_object, Bucket=b, Key="k") == (403, "AccessDenied"), "the inline Deny denies")
    check(root_iam.list_user_policies(UserName=ALT)["PolicyNames"] == ["NoGet"], "listed")
    got = root_iam.get_user_policy(UserName=ALT, PolicyName="NoGet")
    check(got["PolicyDocument"] == deny and got["UserName"] == ALT and got["PolicyName"] == "NoGet", "read back: %r" % got)
    def iam_error(fn, **kw):
        try:
            fn(**kw)
        except ClientError as e:
            return e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]
        return 200, ""
    check(iam_error(alt_iam.put_user_policy, UserName=ALT, PolicyName="All", PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "*", "Resource": "*"}})) == (403, "AccessDenied"), "a user may not grant itself")
    check(iam_error(root_iam.get_user_policy, UserName=ALT, PolicyName="Nope") == (404, "NoSuchEntity"), "no such policy")
    check(iam_error(root_iam.put_user_policy, UserName="nobody-here", PolicyName="P", PolicyDocument=json.dumps(deny)) == (404, "NoSuchEntity"), "no such user")
    check(iam_error(root_iam.put_user_policy, UserName=ALT, PolicyName="P", PolicyDocument="{}") == (400, "MalformedPolicyDocument"), "malformed")
    root_iam.delete_user_policy(UserName=ALT, PolicyName="NoGet")
    check(root_iam.list_user_policies(UserName=ALT)["PolicyNames"] == [], "deleted")
    check(alt.get_object(Bucket=b, Key="k")["Body"].read() == b"k", "alt reads again")
`

// TestS3PolicyBoto3 runs policyBoto3Script's steps.
func TestS3PolicyBoto3(t *testing.T) {
	s := startS3Server(t)
	main := addAccessUser(t, s, "boto3-main", "", "readwrite")
	alt := addAccessUser(t, s, "boto3-alt", "", "readwrite")
	runAccountsBoto3(t, s, policyBoto3Script, main.name, main.secret, alt, []string{"tags", "resources", "missing", "iam"})
}
