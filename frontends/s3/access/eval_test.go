package access

import (
	"fmt"
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	rw := mustPolicy(t, `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`, Identity)
	nothing := mustPolicy(t, `{"Statement":[{"Effect":"Allow","Action":"s3:ListAllMyBuckets","Resource":"*"}]}`, Identity)
	denyPut := mustPolicy(t, `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"},{"Effect":"Deny","Action":"s3:PutObject","Resource":"*"}]}`, Identity)
	pubRead := mustPolicy(t, `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`, Resource)
	denyBob := mustPolicy(t, `{"Statement":[{"Effect":"Deny","Principal":{"AWS":"arn:aws:iam::000000000000:user/bob"},"Action":"s3:*","Resource":"arn:aws:s3:::b/*"}]}`, Resource)
	publicRead, _ := Canned("public-read", "alice", "alice")
	authRead, _ := Canned("authenticated-read", "alice", "alice")
	grantBob := ACL{Grants: []Grant{{ID: "alice", Perm: FullControl}, {ID: "bob", Perm: Write}}}
	get := func(who string) *Request {
		return &Request{Principal: who, Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k"}
	}
	put := func(who string) *Request {
		return &Request{Principal: who, Action: "s3:PutObject", Resource: "arn:aws:s3:::b/k"}
	}
	list := func(who string) *Request {
		return &Request{Principal: who, Action: "s3:ListBucket", Resource: "arn:aws:s3:::b"}
	}
	for i, tc := range []struct {
		in            Input
		allowed, need bool
	}{
		// The root is allowed everything.
		{Input{Req: &Request{Root: true, Principal: "root", Action: "s3:DeleteBucket"}, BucketOwner: "alice", BucketPolicy: denyBob}, true, false},
		// A session (temporary credentials) is also limited by its policy:
		// the intersection with the user's, the root's included; its Deny
		// wins over a bucket policy's Allow.
		{Input{Req: get("bob"), User: rw, Session: rw, AccountBucket: true, BucketOwner: "root"}, true, false},
		{Input{Req: get("bob"), User: rw, Session: nothing, AccountBucket: true, BucketOwner: "root"}, false, false},
		{Input{Req: put("bob"), User: rw, Session: denyPut, AccountBucket: true, BucketOwner: "root"}, false, false},
		{Input{Req: get("bob"), User: nothing, Session: rw, AccountBucket: true, BucketOwner: "root"}, false, true},
		{Input{Req: &Request{Root: true, Principal: "root", Action: "s3:PutObject", Resource: "arn:aws:s3:::b/k"}, Session: nothing, BucketOwner: "alice"}, false, false},
		{Input{Req: get("bob"), User: nothing, Session: nothing, BucketPolicy: pubRead, BucketOwner: "alice"}, false, false},
		// Account buckets: the user's own policy suffices.
		{Input{Req: put("bob"), User: rw, AccountBucket: true, BucketOwner: "root"}, true, false},
		{Input{Req: put("bob"), User: nothing, AccountBucket: true, BucketOwner: "root"}, false, false},
		{Input{Req: put("bob"), User: denyPut, AccountBucket: true, BucketOwner: "root"}, false, false},
		// The owner of a bucket.
		{Input{Req: put("alice"), User: rw, BucketOwner: "alice"}, true, false},
		// Another user's bucket: own policy and the owner's grant.
		{Input{Req: put("bob"), User: rw, BucketOwner: "alice"}, false, false},
		{Input{Req: put("bob"), User: rw, BucketOwner: "alice", BucketACL: &grantBob}, true, false},
		{Input{Req: put("bob"), User: nothing, BucketOwner: "alice", BucketACL: &grantBob}, false, false},
		{Input{Req: put("bob"), User: denyPut, BucketOwner: "alice", BucketACL: &grantBob}, false, false},
		{Input{Req: list("bob"), User: rw, BucketOwner: "alice", BucketACL: &publicRead}, true, false},
		{Input{Req: list("bob"), User: rw, BucketOwner: "alice", BucketACL: &publicRead, PAB: PAB{IgnorePublicAcls: true}}, false, false},
		{Input{Req: list("bob"), User: rw, BucketOwner: "alice", BucketACL: &publicRead, Enforced: true}, false, false},
		{Input{Req: list("alice"), User: nothing, BucketOwner: "alice", BucketACL: &publicRead, Enforced: true}, true, false},
		// Anonymous.
		{Input{Req: list(""), BucketOwner: "alice", BucketACL: &publicRead}, true, false},
		{Input{Req: list(""), BucketOwner: "alice", BucketACL: &authRead}, false, false},
		{Input{Req: list("bob"), User: rw, BucketOwner: "alice", BucketACL: &authRead}, true, false},
		{Input{Req: put(""), BucketOwner: "alice", BucketACL: &publicRead}, false, false},
		{Input{Req: get(""), BucketOwner: "alice", BucketPolicy: pubRead}, false, true},
		{Input{Req: get(""), BucketOwner: "alice", BucketPolicy: pubRead, HasObject: true, ObjectOwner: "alice"}, true, false},
		{Input{Req: get(""), BucketOwner: "alice", BucketPolicy: pubRead, HasObject: true, ObjectOwner: "alice", PAB: PAB{RestrictPublicBuckets: true}}, false, false},
		{Input{Req: get("bob"), User: rw, BucketOwner: "alice", BucketPolicy: pubRead, HasObject: true, ObjectOwner: "alice", PAB: PAB{RestrictPublicBuckets: true}}, true, false},
		{Input{Req: get(""), AccountBucket: true, BucketOwner: "root", BucketPolicy: pubRead}, true, false},
		// Object context: another user's object in a user's bucket.
		{Input{Req: get(""), BucketOwner: "alice", BucketPolicy: pubRead, HasObject: true, ObjectOwner: "bob"}, false, false},
		{Input{Req: get("alice"), User: rw, BucketOwner: "alice", HasObject: true, ObjectOwner: "bob"}, false, false},
		{Input{Req: get("alice"), User: rw, BucketOwner: "alice", HasObject: true, ObjectOwner: "bob", ObjectACL: &ACL{Grants: []Grant{{ID: "alice", Perm: Read}}}}, true, false},
		{Input{Req: get("alice"), User: rw, BucketOwner: "alice", HasObject: true, ObjectOwner: "bob", Enforced: true}, true, false},
		{Input{Req: get("alice"), User: rw, BucketOwner: "alice", NoObject: true}, true, false},
		{Input{Req: get(""), BucketOwner: "alice", NoObject: true}, false, false},
		// Object ACLs are read only when they could allow.
		{Input{Req: get(""), BucketOwner: "alice"}, false, true},
		{Input{Req: get(""), BucketOwner: "alice", HasObject: true, ObjectOwner: "alice", ObjectACL: &publicRead}, true, false},
		{Input{Req: get(""), BucketOwner: "alice", HasObject: true, ObjectOwner: "alice"}, false, false},
		{Input{Req: get("bob"), User: rw, BucketOwner: "alice", HasObject: true, ObjectOwner: "bob"}, true, false},
		{Input{Req: get("bob"), User: rw, BucketOwner: "alice", HasObject: true, ObjectOwner: "alice"}, false, false},
		// Deny wins over every Allow.
		{Input{Req: get("bob"), User: rw, AccountBucket: true, BucketOwner: "root", BucketPolicy: denyBob}, false, false},
		{Input{Req: get("bob"), User: rw, BucketOwner: "alice", BucketPolicy: denyBob, HasObject: true, ObjectOwner: "alice", ObjectACL: &publicRead}, false, false},
		// No directory: every signed user is allowed by its (absent) policy.
		{Input{Req: put("bob"), UserAll: true, AccountBucket: true}, true, false},
	} {
		allowed, need := Decide(&tc.in)
		if allowed != tc.allowed || need != tc.need {
			t.Errorf("case %d (%q %s): allowed %v need %v, want %v %v", i, tc.in.Req.Principal, tc.in.Req.Action, allowed, need, tc.allowed, tc.need)
		}
	}
}

// policy20 is a 20-statement bucket policy like must-show 5's.
func policy20() string {
	var st []string
	for i := 0; i < 19; i++ {
		st = append(st, fmt.Sprintf(`{"Sid":"s%d","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/u%d"},"Action":["s3:PutObject","s3:Get*"],"Resource":"arn:aws:s3:::b/p%d/*","Condition":{"IpAddress":{"aws:SourceIp":"10.%d.0.0/16"}}}`, i, i, i, i))
	}
	st = append(st, `{"Sid":"anon","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`)
	return `{"Version":"2012-10-17","Statement":[` + strings.Join(st, ",") + `]}`
}

func BenchmarkDecide20(b *testing.B) {
	var c Cache
	raw := []byte(policy20())
	rw := mustPolicy(b, `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`, Identity)
	ctx := map[string][]string{"aws:sourceip": {"127.0.0.1"}}
	for _, tc := range []struct {
		name string
		req  Request
	}{
		{"anonymous-get", Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/some/key"}},
		{"user-put", Request{Principal: "alice", Action: "s3:PutObject", Resource: "arn:aws:s3:::b/some/key"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p, err := c.Policy("b", raw)
				if err != nil {
					b.Fatal(err)
				}
				r := tc.req
				r.Values = values(ctx)
				in := Input{Req: &r, User: rw, BucketOwner: "root", AccountBucket: true, BucketPolicy: p}
				if ok, _ := Decide(&in); !ok {
					b.Fatal("denied")
				}
			}
		})
	}
}

func TestCacheReparsesOnChange(t *testing.T) {
	var c Cache
	p1, err := c.Policy("b", []byte(policy20()))
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := c.Policy("b", []byte(policy20()))
	if p1 != p2 {
		t.Error("the same document was parsed twice")
	}
	p3, _ := c.Policy("b", []byte(`{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::b"}]}`))
	if p3 == p1 || len(p3.Statements) != 1 {
		t.Error("a changed document was not parsed again")
	}
	if _, err := c.Policy("b", []byte(`{`)); err == nil {
		t.Error("a bad document parsed")
	}
}
