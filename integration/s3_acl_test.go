package integration

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// grantsOf renders grants as "ID-or-URI:PERMISSION", sorted.
func grantsOf(gs []types.Grant) string {
	var out []string
	for _, g := range gs {
		who := aws.ToString(g.Grantee.ID)
		if g.Grantee.URI != nil {
			who = strings.TrimPrefix(aws.ToString(g.Grantee.URI), "http://acs.amazonaws.com/groups/global/")
		}
		out = append(out, fmt.Sprintf("%s/%s:%s", g.Grantee.Type, who, g.Permission))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestS3Ownership: CreateBucket records its creator; re-creating is 409
// BucketAlreadyExists for everyone but the owner (200 for the owner in
// us-east-1, see TestS3RecreateOwnBucket); ListBuckets lists the caller's
// buckets; x-amz-expected-bucket-owner is checked.
func TestS3Ownership(t *testing.T) {
	s := startS3Server(t)
	root := sdkClient(s, s3User, s3Secret)
	alice := addAccessUser(t, s, "alice", "alice@example.com", "readwrite")
	bob := addAccessUser(t, s, "bob", "", "readwrite")
	ctx := callCtx(t)
	for _, b := range []string{"own-root-a", "own-root-b"} {
		if _, err := root.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := alice.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("own-alice")}); err != nil {
		t.Fatal(err)
	}
	_, err := bob.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("own-alice")})
	wantAPIError(t, "bob re-creates alice's bucket", err, "BucketAlreadyExists", 409)
	if _, err = alice.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("own-alice")}); err != nil {
		t.Fatalf("alice re-creates her bucket (us-east-1): %v", err)
	}
	_, err = alice.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("own-root-a")})
	wantAPIError(t, "alice re-creates root's bucket", err, "BucketAlreadyExists", 409)
	if _, err = root.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("own-root-a")}); err != nil {
		t.Fatalf("root re-creates its bucket (us-east-1): %v", err)
	}

	names := func(c *s3.Client, in *s3.ListBucketsInput) ([]string, *s3.ListBucketsOutput) {
		t.Helper()
		out, err := c.ListBuckets(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, b := range out.Buckets {
			n = append(n, aws.ToString(b.Name))
		}
		return n, out
	}
	if got, out := names(alice.c, &s3.ListBucketsInput{}); strings.Join(got, ",") != "own-alice" || aws.ToString(out.Owner.ID) != "alice" {
		t.Errorf("alice lists %v owner %v; want her own bucket and herself", got, aws.ToString(out.Owner.ID))
	}
	if got, _ := names(bob.c, &s3.ListBucketsInput{}); len(got) != 0 {
		t.Errorf("bob lists %v; want none", got)
	}
	got, out := names(root, &s3.ListBucketsInput{MaxBuckets: aws.Int32(2)})
	if strings.Join(got, ",") != "own-alice,own-root-a" || out.ContinuationToken == nil {
		t.Fatalf("root's first page: %v token %v", got, out.ContinuationToken)
	}
	if got, out = names(root, &s3.ListBucketsInput{MaxBuckets: aws.Int32(2), ContinuationToken: out.ContinuationToken}); strings.Join(got, ",") != "own-root-b" || out.ContinuationToken != nil {
		t.Fatalf("root's second page: %v token %v", got, out.ContinuationToken)
	}
	if got, _ = names(root, &s3.ListBucketsInput{Prefix: aws.String("own-root")}); strings.Join(got, ",") != "own-root-a,own-root-b" {
		t.Fatalf("root's prefix listing: %v", got)
	}
	_, err = root.ListBuckets(ctx, &s3.ListBucketsInput{MaxBuckets: aws.Int32(0)})
	wantAPIError(t, "max-buckets 0", err, "InvalidArgument", 400)

	// x-amz-expected-bucket-owner.
	if _, err := alice.c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("own-alice"), ExpectedBucketOwner: aws.String("alice")}); err != nil {
		t.Errorf("expected owner alice: %v", err)
	}
	_, err = alice.c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("own-alice"), ExpectedBucketOwner: aws.String("bob")})
	wantAPIError(t, "expected owner bob", err, "AccessDenied", 403)
	_, err = root.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("own-root-a"), ExpectedBucketOwner: aws.String("alice")})
	if httpStatus(err) != 403 {
		t.Errorf("HEAD root's bucket expecting alice: %v, want 403", err)
	}
	// The bucket's owner, not bob, may delete it.
	_, err = bob.c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("own-alice")})
	wantAPIError(t, "bob deletes alice's bucket", err, "AccessDenied", 403)
	if _, err := alice.c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("own-alice")}); err != nil {
		t.Errorf("alice deletes her bucket: %v", err)
	}
}

// TestS3ACL: canned ACLs, grant headers and AccessControlPolicy bodies on
// buckets and objects, decided for the owner, another user and anonymous.
func TestS3ACL(t *testing.T) {
	s := startS3Server(t)
	alice := addAccessUser(t, s, "alice", "alice@example.com", "readwrite")
	bob := addAccessUser(t, s, "bob", "bob@example.com", "readwrite")
	ctx := callCtx(t)
	const bkt = "acl-alice"
	if _, err := alice.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bkt)}); err != nil {
		t.Fatal(err)
	}
	acl, err := alice.c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String(bkt)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(acl.Owner.ID) != "alice" || grantsOf(acl.Grants) != "CanonicalUser/alice:FULL_CONTROL" {
		t.Fatalf("default bucket ACL: owner %v grants %s", aws.ToString(acl.Owner.ID), grantsOf(acl.Grants))
	}
	put := func(c *s3.Client, key string, mod func(*s3.PutObjectInput)) error {
		in := &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String(key), Body: bytes.NewReader([]byte("data " + key))}
		if mod != nil {
			mod(in)
		}
		_, err := c.PutObject(ctx, in)
		return err
	}
	if err := put(alice.c, "private", nil); err != nil {
		t.Fatal(err)
	}

	// Bucket ACLs: what bob may list and write.
	for _, tc := range []struct {
		canned          types.BucketCannedACL
		bobList, bobPut bool
	}{
		{types.BucketCannedACLPrivate, false, false},
		{types.BucketCannedACLPublicRead, true, false},
		{types.BucketCannedACLPublicReadWrite, true, true},
		{types.BucketCannedACLAuthenticatedRead, true, false},
	} {
		if _, err := alice.c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(bkt), ACL: tc.canned}); err != nil {
			t.Fatalf("PutBucketAcl %s: %v", tc.canned, err)
		}
		_, err := bob.c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bkt)})
		if tc.bobList {
			if err != nil {
				t.Errorf("%s: bob lists: %v", tc.canned, err)
			}
		} else {
			wantAPIError(t, string(tc.canned)+": bob lists", err, "AccessDenied", 403)
		}
		err = put(bob.c, "by-bob", nil)
		if tc.bobPut {
			if err != nil {
				t.Errorf("%s: bob writes: %v", tc.canned, err)
			}
		} else {
			wantAPIError(t, string(tc.canned)+": bob writes", err, "AccessDenied", 403)
		}
		_, err = bob.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("private")})
		wantAPIError(t, string(tc.canned)+": bob reads a private object", err, "AccessDenied", 403)
	}
	if _, err := alice.c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(bkt), ACL: types.BucketCannedACLPrivate}); err != nil {
		t.Fatal(err)
	}
	_, err = bob.c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String(bkt)})
	wantAPIError(t, "bob reads the bucket ACL", err, "AccessDenied", 403)

	// Object canned ACLs: what bob may read.
	for _, tc := range []struct {
		canned  types.ObjectCannedACL
		bobRead bool
		grants  string
	}{
		{types.ObjectCannedACLPrivate, false, "CanonicalUser/alice:FULL_CONTROL"},
		{types.ObjectCannedACLPublicRead, true, "CanonicalUser/alice:FULL_CONTROL Group/AllUsers:READ"},
		{types.ObjectCannedACLPublicReadWrite, true, "CanonicalUser/alice:FULL_CONTROL Group/AllUsers:READ Group/AllUsers:WRITE"},
		{types.ObjectCannedACLAuthenticatedRead, true, "CanonicalUser/alice:FULL_CONTROL Group/AuthenticatedUsers:READ"},
		{types.ObjectCannedACLBucketOwnerRead, false, "CanonicalUser/alice:FULL_CONTROL"},
		{types.ObjectCannedACLBucketOwnerFullControl, false, "CanonicalUser/alice:FULL_CONTROL"},
		{types.ObjectCannedACLAwsExecRead, false, "CanonicalUser/alice:FULL_CONTROL"},
	} {
		key := "canned-" + string(tc.canned)
		if err := put(alice.c, key, func(in *s3.PutObjectInput) { in.ACL = tc.canned }); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		_, err := bob.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String(key)})
		if tc.bobRead {
			if err != nil {
				t.Errorf("%s: bob reads: %v", tc.canned, err)
			}
		} else {
			wantAPIError(t, string(tc.canned)+": bob reads", err, "AccessDenied", 403)
		}
		got, err := alice.c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(bkt), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if grantsOf(got.Grants) != tc.grants || aws.ToString(got.Owner.ID) != "alice" {
			t.Errorf("%s: ACL owner %s grants %s, want %s", tc.canned, aws.ToString(got.Owner.ID), grantsOf(got.Grants), tc.grants)
		}
	}

	// Grant headers: by ID and by email; errors.
	if err := put(alice.c, "grant-id", func(in *s3.PutObjectInput) { in.GrantRead = aws.String(`id="bob"`) }); err != nil {
		t.Fatal(err)
	}
	if err := put(alice.c, "grant-email", func(in *s3.PutObjectInput) {
		in.GrantReadACP = aws.String(`emailAddress="bob@example.com"`)
		in.GrantFullControl = aws.String(`id=alice, uri="http://acs.amazonaws.com/groups/global/AuthenticatedUsers"`)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("grant-id")}); err != nil {
		t.Errorf("bob reads grant-id: %v", err)
	}
	_, err = bob.c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(bkt), Key: aws.String("grant-id")})
	wantAPIError(t, "bob reads grant-id's ACL (READ only)", err, "AccessDenied", 403)
	got, err := bob.c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(bkt), Key: aws.String("grant-email")})
	if err != nil {
		t.Fatalf("bob reads grant-email's ACL: %v", err)
	}
	if want := "CanonicalUser/alice:FULL_CONTROL CanonicalUser/bob:READ_ACP Group/AuthenticatedUsers:FULL_CONTROL"; grantsOf(got.Grants) != want {
		t.Errorf("grant-email ACL %s, want %s", grantsOf(got.Grants), want)
	}
	err = put(alice.c, "x", func(in *s3.PutObjectInput) { in.GrantRead = aws.String(`emailAddress="nobody@example.com"`) })
	wantAPIError(t, "grant to an unknown email", err, "UnresolvableGrantByEmailAddress", 400)
	err = put(alice.c, "x", func(in *s3.PutObjectInput) { in.GrantRead = aws.String(`id="nobody"`) })
	wantAPIError(t, "grant to an unknown id", err, "InvalidArgument", 400)
	err = put(alice.c, "x", func(in *s3.PutObjectInput) { in.GrantRead = aws.String(`uri="http://example.com/group"`) })
	wantAPIError(t, "grant to an unknown group", err, "InvalidArgument", 400)
	err = put(alice.c, "x", func(in *s3.PutObjectInput) {
		in.GrantRead = aws.String(`id="bob"`)
		in.ACL = types.ObjectCannedACLPrivate
	})
	wantAPIError(t, "canned ACL and grant", err, "InvalidRequest", 400)
	err = put(alice.c, "x", func(in *s3.PutObjectInput) { in.ACL = "world-writable" })
	wantAPIError(t, "unknown canned ACL", err, "InvalidArgument", 400)

	// An AccessControlPolicy body (PutObjectAcl), then WRITE_ACP.
	owner := &types.Owner{ID: aws.String("alice")}
	if _, err := alice.c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String(bkt), Key: aws.String("private"),
		AccessControlPolicy: &types.AccessControlPolicy{Owner: owner, Grants: []types.Grant{
			{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("alice")}, Permission: types.PermissionFullControl},
			{Grantee: &types.Grantee{Type: types.TypeAmazonCustomerByEmail, EmailAddress: aws.String("bob@example.com")}, Permission: types.PermissionWriteAcp},
			{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("bob")}, Permission: types.PermissionRead},
		}}}); err != nil {
		t.Fatalf("PutObjectAcl body: %v", err)
	}
	if _, err := bob.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("private")}); err != nil {
		t.Errorf("bob reads private after the grant: %v", err)
	}
	if _, err := bob.c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String(bkt), Key: aws.String("private"), ACL: types.ObjectCannedACLPrivate}); err != nil {
		t.Errorf("bob (WRITE_ACP) resets the ACL: %v", err)
	}
	_, err = bob.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("private")})
	wantAPIError(t, "bob reads private after the reset", err, "AccessDenied", 403)
	_, err = alice.c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String(bkt), Key: aws.String("private"),
		AccessControlPolicy: &types.AccessControlPolicy{Owner: owner, Grants: []types.Grant{
			{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("nobody")}, Permission: types.PermissionRead}}}})
	wantAPIError(t, "body grant to an unknown id", err, "InvalidArgument", 400)
	u := objectURL(s, bkt, "private") + "?acl"
	for _, tc := range []struct {
		body   string
		header map[string]string
		code   string
		status int
	}{
		{"<AccessControlPolicy><AccessControlList><Grant>", nil, "MalformedACLError", 400},
		{`<AccessControlPolicy><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>bob</ID></Grantee><Permission>EVERYTHING</Permission></Grant></AccessControlList></AccessControlPolicy>`, nil, "MalformedACLError", 400},
		{`<AccessControlPolicy><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Robot"><ID>bob</ID></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, nil, "MalformedACLError", 400},
		{`<AccessControlPolicy><AccessControlList></AccessControlList></AccessControlPolicy>`, map[string]string{"x-amz-acl": "private"}, "UnexpectedContent", 400},
		{"", nil, "MissingSecurityHeader", 400},
	} {
		res := signedRaw(t, http.MethodPut, u, []byte(tc.body), tc.header, alice.name, alice.secret)
		if res.status != tc.status || res.code != tc.code {
			t.Errorf("PutObjectAcl %q %v: %d %s, want %d %s", tc.body, tc.header, res.status, res.code, tc.status, tc.code)
		}
	}

	// Versions keep their own ACLs.
	if _, err := alice.c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bkt),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	v1, err := alice.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("ver"), Body: strings.NewReader("one"), ACL: types.ObjectCannedACLPublicRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("ver"), Body: strings.NewReader("two")}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("ver"), VersionId: v1.VersionId}); err != nil {
		t.Errorf("bob reads the public-read version: %v", err)
	}
	_, err = bob.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("ver")})
	wantAPIError(t, "bob reads the private latest version", err, "AccessDenied", 403)
	if _, err := alice.c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String(bkt), Key: aws.String("ver"), VersionId: v1.VersionId, ACL: types.ObjectCannedACLPrivate}); err != nil {
		t.Fatal(err)
	}
	_, err = bob.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("ver"), VersionId: v1.VersionId})
	wantAPIError(t, "bob reads the version made private", err, "AccessDenied", 403)

	// CreateBucket with a canned ACL; the root sees everything.
	if _, err := alice.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("acl-alice-public"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("acl-alice-public")}); err != nil {
		t.Errorf("bob lists the public-read bucket: %v", err)
	}
	root := sdkClient(s, s3User, s3Secret)
	if _, err := root.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("private")}); err != nil {
		t.Errorf("root reads alice's private object: %v", err)
	}

	// Anonymous.
	t.Run("anonymous", func(t *testing.T) {
		skipUnlessAnonymous(t, s)
		for _, tc := range []struct {
			method, key string
			want        int
			code        string
		}{
			{"GET", "canned-public-read", 200, ""},
			{"GET", "canned-authenticated-read", 403, "AccessDenied"},
			{"GET", "private", 403, "AccessDenied"},
			{"GET", "no-such-key", 403, "AccessDenied"},
			{"PUT", "anon", 403, "AccessDenied"},
		} {
			var body []byte
			if tc.method == "PUT" {
				body = []byte("anon")
			}
			res := anonDo(t, tc.method, objectURL(s, bkt, tc.key), body)
			if res.status != tc.want || res.code != tc.code {
				t.Errorf("anonymous %s %s: %d %s, want %d %s", tc.method, tc.key, res.status, res.code, tc.want, tc.code)
			}
		}
		if res := anonDo(t, "GET", s.url("/acl-alice-public?list-type=2"), nil); res.status != 200 {
			t.Errorf("anonymous lists the public-read bucket: %d %s", res.status, res.body)
		}
		if res := anonDo(t, "GET", s.url("/"+bkt+"?list-type=2"), nil); res.status != 403 || res.code != "AccessDenied" {
			t.Errorf("anonymous lists the private bucket: %d %s", res.status, res.code)
		}
		if res := anonDo(t, "GET", s.url("/"), nil); res.status != 403 || res.code != "AccessDenied" {
			t.Errorf("anonymous ListBuckets: %d %s", res.status, res.code)
		}
		if _, err := alice.c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("acl-alice-public"), ACL: types.BucketCannedACLPublicReadWrite}); err != nil {
			t.Fatal(err)
		}
		if res := anonDo(t, "PUT", objectURL(s, "acl-alice-public", "anon"), []byte("anon")); res.status != 200 {
			t.Errorf("anonymous writes into the public-read-write bucket: %d %s", res.status, res.body)
		}
	})
}
