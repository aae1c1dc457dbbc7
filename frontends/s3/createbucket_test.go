package s3

import (
	"encoding/xml"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// regionServer is testServer answering for region.
func regionServer(t *testing.T, region string) *Server {
	t.Helper()
	s, _ := testServerWith(t, Options{Region: region})
	return s
}

// bucketGrants is GetBucketAcl's grants as "who:PERM" in document order.
func bucketGrants(t *testing.T, s *Server, who, bucket string) string {
	t.Helper()
	r := httptest.NewRequest("GET", "http://cairn.test/"+bucket+"?acl", nil)
	if err := sigv4.Sign(r, who, who+"-secret", "us-east-1", "s3", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	var doc accessControlPolicy
	if w.Code != 200 || xml.Unmarshal(w.Body.Bytes(), &doc) != nil {
		t.Fatalf("GetBucketAcl %s: %d %s", bucket, w.Code, w.Body)
	}
	var out []string
	for _, g := range doc.Grants {
		who := g.Grantee.ID
		if who == "" {
			who = g.Grantee.URI[strings.LastIndex(g.Grantee.URI, "/")+1:]
		}
		out = append(out, who+":"+g.Permission)
	}
	return strings.Join(out, " ")
}

// TestRecreateBucket: the owner's re-create is 200 with the ACL reset in
// us-east-1, 409 BucketAlreadyOwnedByYou elsewhere; anyone else's is 409
// BucketAlreadyExists; the objects stay.
func TestRecreateBucket(t *testing.T) {
	type step struct {
		who    string
		header map[string]string
		status int
		code   string
		grants string // the bucket's grants after the step
	}
	acl := func(canned string) map[string]string { return map[string]string{"x-amz-acl": canned} }
	for _, tc := range []struct {
		region string
		steps  []step
	}{
		{"us-east-1", []step{
			{"alice", nil, 200, "", "alice:FULL_CONTROL"},
			{"alice", nil, 200, "", "alice:FULL_CONTROL"},
			{"alice", acl("public-read"), 200, "", "AllUsers:READ alice:FULL_CONTROL"},
			{"bob", nil, 409, "BucketAlreadyExists", "AllUsers:READ alice:FULL_CONTROL"},
			{"bob", acl("private"), 409, "BucketAlreadyExists", "AllUsers:READ alice:FULL_CONTROL"},
			{"alice", map[string]string{"x-amz-grant-read": "id=bob"}, 200, "", "bob:READ"},
			{"alice", map[string]string{"x-amz-acl": "private", "x-amz-grant-read": "id=bob"}, 400, "InvalidRequest", "bob:READ"},
			{"alice", map[string]string{"x-amz-grant-read": "id=nobody"}, 400, "InvalidArgument", "bob:READ"},
			{"alice", nil, 200, "", "alice:FULL_CONTROL"},
			{"root", nil, 409, "BucketAlreadyExists", "alice:FULL_CONTROL"},
		}},
		{"eu-west-1", []step{
			{"alice", acl("public-read"), 200, "", "AllUsers:READ alice:FULL_CONTROL"},
			{"alice", nil, 409, "BucketAlreadyOwnedByYou", "AllUsers:READ alice:FULL_CONTROL"},
			{"alice", acl("private"), 409, "BucketAlreadyOwnedByYou", "AllUsers:READ alice:FULL_CONTROL"},
			{"bob", nil, 409, "BucketAlreadyExists", "AllUsers:READ alice:FULL_CONTROL"},
		}},
	} {
		t.Run(tc.region, func(t *testing.T) {
			s := regionServer(t, tc.region)
			body := []byte{}
			if tc.region != legacyRegion {
				body = []byte("<CreateBucketConfiguration><LocationConstraint>" + tc.region + "</LocationConstraint></CreateBucketConfiguration>")
			}
			for i, st := range tc.steps {
				status, code := call(t, s, st.who, "PUT", "/rbucket", body, st.header)
				if status != st.status || code != st.code {
					t.Fatalf("step %d (%s %v): %d %s, want %d %s", i, st.who, st.header, status, code, st.status, st.code)
				}
				if i == 0 {
					if status, code := call(t, s, "alice", "PUT", "/rbucket/k", []byte("kept"), nil); status != 200 {
						t.Fatalf("put: %d %s", status, code)
					}
				}
				if got := bucketGrants(t, s, "alice", "rbucket"); got != st.grants {
					t.Errorf("step %d (%s %v): grants %q, want %q", i, st.who, st.header, got, st.grants)
				}
			}
			if status, code := call(t, s, "alice", "GET", "/rbucket/k", nil, nil); status != 200 {
				t.Fatalf("the object after the re-creates: %d %s", status, code)
			}
		})
	}
}

// TestRecreateEnforcedBucket: under BucketOwnerEnforced a re-create keeps
// ACLs disabled: an ACL other than the owner's is refused, none is fine.
func TestRecreateEnforcedBucket(t *testing.T) {
	s := regionServer(t, legacyRegion)
	if status, code := call(t, s, "alice", "PUT", "/enf", nil, map[string]string{"x-amz-object-ownership": ownerEnforced}); status != 200 {
		t.Fatalf("create: %d %s", status, code)
	}
	for _, tc := range []struct {
		header map[string]string
		status int
		code   string
	}{
		{nil, 200, ""},
		{map[string]string{"x-amz-acl": "private"}, 200, ""},
		{map[string]string{"x-amz-acl": "public-read"}, 400, "AccessControlListNotSupported"},
	} {
		if status, code := call(t, s, "alice", "PUT", "/enf", nil, tc.header); status != tc.status || code != tc.code {
			t.Errorf("%v: %d %s, want %d %s", tc.header, status, code, tc.status, tc.code)
		}
	}
	if got := bucketGrants(t, s, "alice", "enf"); got != "alice:FULL_CONTROL" {
		t.Errorf("grants %q", got)
	}
}
