package s3

import "testing"

// TestPolicyObjectConditions checks the conditions that read the object
// (s3:ExistingObjectTag) or the write's tags (s3:RequestObjectTag), and
// the answer to a read of a key that is not there (NoSuchKey to whom may
// list the bucket, else AccessDenied).
func TestPolicyObjectConditions(t *testing.T) {
	s, _ := testServer(t)
	tagging := func(k, v string) string {
		return `<Tagging><TagSet><Tag><Key>` + k + `</Key><Value>` + v + `</Value></Tag></TagSet></Tagging>`
	}
	pol := `{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:GetObjectTagging","s3:PutObjectTagging","s3:GetObjectAcl"],"Resource":"arn:aws:s3:::tbk/*",
	   "Condition":{"StringEquals":{"s3:ExistingObjectTag/security":"public"}}},
	  {"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/bob"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::tbk/*",
	   "Condition":{"StringEquals":{"s3:RequestObjectTag/security":"public"}}}]}`
	for i, tc := range []struct {
		who, method, target, body string
		header                    map[string]string
		status                    int
		code                      string
	}{
		{"alice", "PUT", "/tbk", "", nil, 200, ""},
		{"alice", "PUT", "/tbk?policy", pol, nil, 204, ""},
		{"alice", "PUT", "/tbk/pub", "x", map[string]string{"x-amz-tagging": "security=public&foo=bar"}, 200, ""},
		{"alice", "PUT", "/tbk/priv", "x", nil, 200, ""},
		{"alice", "PUT", "/tbk/priv?tagging", tagging("security", "private"), nil, 200, ""},
		{"alice", "PUT", "/tbk/other", "x", map[string]string{"x-amz-tagging": "Security=public"}, 200, ""},

		{"bob", "GET", "/tbk/pub", "", nil, 200, ""},
		{"", "GET", "/tbk/pub", "", nil, 200, ""},
		{"bob", "GET", "/tbk/pub?tagging", "", nil, 200, ""},
		{"bob", "GET", "/tbk/pub?acl", "", nil, 200, ""},
		{"bob", "GET", "/tbk/priv", "", nil, 403, "AccessDenied"},
		{"bob", "GET", "/tbk/priv?tagging", "", nil, 403, "AccessDenied"},
		{"bob", "GET", "/tbk/priv?acl", "", nil, 403, "AccessDenied"},
		{"bob", "GET", "/tbk/other", "", nil, 403, "AccessDenied"}, // tag keys are case-sensitive
		// PutObjectTagging is decided on the tags the object has now.
		{"bob", "PUT", "/tbk/priv?tagging", tagging("security", "public"), nil, 403, "AccessDenied"},
		{"bob", "PUT", "/tbk/pub?tagging", tagging("security", "private"), nil, 200, ""},
		{"bob", "GET", "/tbk/pub", "", nil, 403, "AccessDenied"},
		{"bob", "PUT", "/tbk/pub?tagging", tagging("security", "public"), nil, 403, "AccessDenied"},

		// s3:RequestObjectTag: the x-amz-tagging header of the write.
		{"bob", "PUT", "/tbk/new", "x", nil, 403, "AccessDenied"},
		{"bob", "PUT", "/tbk/new", "x", map[string]string{"x-amz-tagging": "security=private"}, 403, "AccessDenied"},
		{"bob", "PUT", "/tbk/new", "x", map[string]string{"x-amz-tagging": "security=public"}, 200, ""},

		// A key that is not there: AccessDenied to whom may not list the
		// bucket, even if allowed to read it; NoSuchKey to whom may.
		{"alice", "GET", "/tbk/absent", "", nil, 404, "NoSuchKey"},
		{"bob", "GET", "/tbk/absent", "", nil, 403, "AccessDenied"},
		{"", "GET", "/tbk/absent", "", nil, 403, "AccessDenied"},
		{"alice", "PUT", "/tbk?acl", "", map[string]string{"x-amz-acl": "public-read"}, 200, ""},
		{"", "GET", "/tbk/absent", "", nil, 404, "NoSuchKey"},
		{"", "HEAD", "/tbk/absent", "", nil, 404, ""},
		{"bob", "GET", "/tbk/absent", "", nil, 404, "NoSuchKey"},
		{"bob", "GET", "/tbk/absent?attributes", "", map[string]string{"x-amz-object-attributes": "ETag"}, 404, "NoSuchKey"},
		{"alice", "DELETE", "/tbk/pub", "", nil, 204, ""},
		{"", "GET", "/tbk/pub", "", nil, 404, "NoSuchKey"},
		{"", "GET", "/tbk/priv", "", nil, 403, "AccessDenied"}, // there, but not readable
		{"alice", "PUT", "/tbk?acl", "", map[string]string{"x-amz-acl": "private"}, 200, ""},
		{"", "GET", "/tbk/pub", "", nil, 403, "AccessDenied"},
		{"", "HEAD", "/tbk/pub", "", nil, 403, ""},
	} {
		if st, code := call(t, s, tc.who, tc.method, tc.target, []byte(tc.body), tc.header); st != tc.status || code != tc.code {
			t.Errorf("%d: %q %s %s: %d %s, want %d %s", i, tc.who, tc.method, tc.target, st, code, tc.status, tc.code)
		}
	}
}

// TestPolicyResources checks which Resource a bucket policy may name.
func TestPolicyResources(t *testing.T) {
	s, _ := testServer(t)
	doc := func(res string) string {
		return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:ListBucket","Resource":` + res + `}]}`
	}
	for i, tc := range []struct {
		who, method, target, body string
		status                    int
		code                      string
	}{
		{"alice", "PUT", "/rb1", "", 200, ""},
		{"alice", "PUT", "/rb2", "", 200, ""},
		{"bob", "GET", "/rb1", "", 403, "AccessDenied"},
		{"alice", "PUT", "/rb1?policy", doc(`["arn:aws:s3:::*","arn:aws:s3:::*/*"]`), 204, ""},
		{"alice", "PUT", "/rb2?policy", doc(`"*"`), 204, ""},
		{"bob", "GET", "/rb1", "", 200, ""},
		{"bob", "GET", "/rb2?list-type=2", "", 200, ""},
		{"alice", "PUT", "/rb1?policy", doc(`"arn:aws:s3:::rb2"`), 400, "MalformedPolicy"},
		{"alice", "PUT", "/rb1?policy", doc(`["arn:aws:s3:::rb1","arn:aws:s3:::rb2/*"]`), 400, "MalformedPolicy"},
		{"alice", "PUT", "/rb1?policy", doc(`"arn:aws:s3:::rb1?"`), 400, "MalformedPolicy"},
		{"alice", "PUT", "/rb1?policy", doc(`"arn:aws:s3:::rb*"`), 204, ""},
		// An account or region in an S3 ARN (RGW's tenant form
		// arn:aws:s3::TENANT:bucket) is not an S3 ARN to AWS.
		{"alice", "PUT", "/rb1?policy", doc(`"arn:aws:s3::*:rb1"`), 400, "MalformedPolicy"},
	} {
		if st, code := call(t, s, tc.who, tc.method, tc.target, []byte(tc.body), nil); st != tc.status || code != tc.code {
			t.Errorf("%d: %q %s %s: %d %s, want %d %s", i, tc.who, tc.method, tc.target, st, code, tc.status, tc.code)
		}
	}
}
