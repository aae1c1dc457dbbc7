package s3

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRoute(t *testing.T) {
	s := &Server{opt: Options{Domains: []string{"s3.test"}}}
	s.subs.bucket, s.subs.object = s.bucketSubs(), s.objectSubs()
	for _, tc := range []struct {
		method, target, host string
		header               map[string]string
		api                  string
		bucket, key          string
	}{
		{"GET", "/", "", nil, "ListBuckets", "", ""},
		{"PUT", "/b", "", nil, "CreateBucket", "b", ""},
		{"PUT", "/b/", "", nil, "CreateBucket", "b", ""},
		{"HEAD", "/b", "", nil, "HeadBucket", "b", ""},
		{"DELETE", "/b", "", nil, "DeleteBucket", "b", ""},
		{"GET", "/b?location", "", nil, "GetBucketLocation", "b", ""},
		{"GET", "/b?versioning", "", nil, "GetBucketVersioning", "b", ""},
		{"PUT", "/b?versioning", "", nil, "PutBucketVersioning", "b", ""},
		{"GET", "/b?lifecycle", "", nil, "GetBucketLifecycleConfiguration", "b", ""},
		{"PUT", "/b?lifecycle", "", nil, "PutBucketLifecycleConfiguration", "b", ""},
		{"DELETE", "/b?lifecycle", "", nil, "DeleteBucketLifecycle", "b", ""},
		{"GET", "/b?uploads", "", nil, "ListMultipartUploads", "b", ""},
		{"GET", "/b?versions", "", nil, "ListObjectVersions", "b", ""},
		{"GET", "/b?list-type=2&prefix=x", "", nil, "ListObjectsV2", "b", ""},
		{"GET", "/b?prefix=x", "", nil, "ListObjects", "b", ""},
		{"POST", "/b?delete", "", nil, "DeleteObjects", "b", ""},
		{"PUT", "/b/k", "", nil, "PutObject", "b", "k"},
		{"PUT", "/b/a//b/../c", "", nil, "PutObject", "b", "a//b/../c"},
		{"PUT", "/b/k", "", map[string]string{"x-amz-copy-source": "/b/j"}, "CopyObject", "b", "k"},
		{"PUT", "/b/k?partNumber=1&uploadId=u", "", nil, "UploadPart", "b", "k"},
		{"PUT", "/b/k?partNumber=1&uploadId=u", "", map[string]string{"x-amz-copy-source": "/b/j"}, "UploadPartCopy", "b", "k"},
		{"PUT", "/b/k?renameObject", "", map[string]string{"x-amz-rename-source": "/b/j"}, "RenameObject", "b", "k"},
		{"GET", "/b/k", "", nil, "GetObject", "b", "k"},
		{"GET", "/b/k?uploadId=u", "", nil, "ListParts", "b", "k"},
		{"GET", "/b/k?attributes", "", nil, "GetObjectAttributes", "b", "k"},
		{"HEAD", "/b/k", "", nil, "HeadObject", "b", "k"},
		{"DELETE", "/b/k", "", nil, "DeleteObject", "b", "k"},
		{"DELETE", "/b/k?uploadId=u", "", nil, "AbortMultipartUpload", "b", "k"},
		{"POST", "/b/k?uploads", "", nil, "CreateMultipartUpload", "b", "k"},
		{"POST", "/b/k?uploadId=u", "", nil, "CompleteMultipartUpload", "b", "k"},
		{"GET", "/b?website", "", nil, "Unsupported:website", "b", ""},
		{"GET", "/b?acl", "", nil, "GetBucketAcl", "b", ""},
		{"PUT", "/b/k?tagging", "", nil, "PutObjectTagging", "b", "k"},
		{"DELETE", "/b/k?tagging", "", nil, "DeleteObjectTagging", "b", "k"},
		{"DELETE", "/b?cors", "", nil, "DeleteBucketCors", "b", ""},
		{"POST", "/b?cors", "", nil, "MethodNotAllowed", "b", ""},
		{"GET", "/b/k?retention", "", nil, "GetObjectRetention", "b", "k"},
		{"PUT", "/b?object-lock", "", nil, "PutObjectLockConfiguration", "b", ""},
		{"OPTIONS", "/b/k", "", nil, "PreflightCORS", "b", "k"},
		{"POST", "/b", "", nil, "PostObject", "b", ""},
		{"POST", "/b/k", "", nil, "MethodNotAllowed", "b", "k"},
		{"DELETE", "/", "", nil, "MethodNotAllowed", "", ""},
		// virtual-hosted style
		{"GET", "/", "b.s3.test", nil, "ListObjects", "b", ""},
		{"PUT", "/dir/k", "b.s3.test:9000", nil, "PutObject", "b", "dir/k"},
		{"GET", "/b/k", "other.host", nil, "GetObject", "b", "k"},
	} {
		r := httptest.NewRequest(tc.method, "http://127.0.0.1:9000"+tc.target, nil)
		if tc.host != "" {
			r.Host = tc.host
		}
		for k, v := range tc.header {
			r.Header.Set(k, v)
		}
		req := &request{Request: r}
		req.bucket, req.key = s.resolve(r)
		_, api := s.route(req)
		if api != tc.api || req.bucket != tc.bucket || req.key != tc.key {
			t.Errorf("%s %s (host %q): %s %q %q, want %s %q %q", tc.method, tc.target, tc.host, api, req.bucket, req.key, tc.api, tc.bucket, tc.key)
		}
	}
	_ = http.MethodGet
}

// FuzzRequestXML feeds arbitrary bodies to every XML request decoder and
// to the lifecycle rule conversion: errors, never panics.
func FuzzRequestXML(f *testing.F) {
	for _, seed := range []string{
		`<Delete><Quiet>true</Quiet><Object><Key>a</Key><VersionId>v</VersionId></Object></Delete>`,
		`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>`,
		`<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Filter><Prefix>tmp/</Prefix></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>`,
		`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`,
		`<CreateBucketConfiguration><LocationConstraint>us-east-1</LocationConstraint></CreateBucketConfiguration>`,
		`<`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range []any{&deleteRequest{}, &completeMultipartUpload{}, &lifecycleConfiguration{}, &versioningConfiguration{}, &createBucketConfiguration{}} {
			req := &request{Request: httptest.NewRequest("PUT", "/b", nil)}
			_ = decodeXMLBytes(body, v)
			if lc, ok := v.(*lifecycleConfiguration); ok {
				for _, r := range lc.Rules {
					_, _ = toRule(r)
				}
			}
			_ = req
		}
	})
}
