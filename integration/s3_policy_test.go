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
