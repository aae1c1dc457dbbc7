package sigv2

import (
	"net/http"
	"testing"
)

func TestSubresources(t *testing.T) {
	for _, tc := range []struct {
		name, query, aws, botocore string
	}{
		{"none", "", "", ""},
		{"not sub-resources", "prefix=photos&max-keys=50&marker=puppy&list-type=2", "", ""},
		{"acl", "acl", "?acl", "?acl"},
		{"acl with =", "acl=", "?acl", "?acl="},
		{"sorted", "versioning&acl&uploads", "?acl&uploads&versioning", "?acl&uploads&versioning"},
		{"uploadId before uploads", "uploads&uploadId=x", "?uploadId=x&uploads", "?uploadId=x&uploads"},
		{"versionId before versioning", "versioning&versions&versionId=3", "?versionId=3&versioning&versions", "?versionId=3&versioning&versions"},
		{"part of a multipart upload", "partNumber=2&uploadId=a%2Fb", "?partNumber=2&uploadId=a/b", "?partNumber=2&uploadId=a/b"},
		{"response overrides decoded", "response-content-disposition=attachment%3B%20filename%3D%22a%20b%22&response-cache-control=no-cache&x=1",
			"?response-cache-control=no-cache&response-content-disposition=attachment; filename=\"a b\"",
			"?response-cache-control=no-cache&response-content-disposition=attachment; filename=\"a b\""},
		{"all response overrides", "response-expires=e&response-content-type=t&response-content-language=l&response-content-encoding=g",
			"?response-content-encoding=g&response-content-language=l&response-content-type=t&response-expires=e",
			"?response-content-encoding=g&response-content-language=l&response-content-type=t&response-expires=e"},
		{"delete, cors, lifecycle, tagging, policy", "tagging&policy&lifecycle&delete&cors",
			"?cors&delete&lifecycle&policy&tagging", "?cors&delete&lifecycle&policy&tagging"},
		{"location logging notification requestPayment torrent website", "website&torrent&requestPayment&notification&logging&location",
			"?location&logging&notification&requestPayment&torrent&website", "?location&logging&notification&requestPayment&torrent&website"},
		{"minio-go's additions", "retention&legal-hold&encryption", "?encryption&legal-hold&retention", ""},
		{"botocore's additions", "object-lock&restore&accelerate", "", "?accelerate&object-lock&restore"},
		{"repeated", "acl&acl=x", "?acl", "?acl&acl=x"},
		{"bad escape kept", "versionId=%zz", "?versionId=%zz", "?versionId=%zz"},
		{"empty parts", "&&acl&&", "?acl", "?acl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := subresources(tc.query, ruleAWS); got != tc.aws {
				t.Errorf("AWS list: %q, want %q", got, tc.aws)
			}
			if got := subresources(tc.query, ruleBotocore); got != tc.botocore {
				t.Errorf("botocore list: %q, want %q", got, tc.botocore)
			}
		})
	}
}

func TestResourcePaths(t *testing.T) {
	for _, tc := range []struct {
		name, target, bucket string
		want                 []string
	}{
		{"path-style", "http://h/b/k", "", []string{"/b/k"}},
		{"path-style bucket", "http://h/b", "", []string{"/b", "/b/"}},
		{"path-style bucket with slash", "http://h/b/", "", []string{"/b/"}},
		{"virtual-hosted", "http://b.h/k", "b", []string{"/b/k"}},
		{"virtual-hosted bucket root", "http://b.h/", "b", []string{"/b/"}},
		{"service root", "http://h/", "", []string{"/"}},
		{"encoded as sent", "http://h/b/a%20b", "", []string{"/b/a%20b"}},
		{"sent unencoded, re-encoded too", "http://h/b/a+b(c)", "", []string{"/b/a+b(c)", "/b/a%2Bb%28c%29"}},
		{"double-encoded percent", "http://h/b/a%2520b", "", []string{"/b/a%2520b"}},
		{"utf-8", "http://h/b/%E2%82%AC", "", []string{"/b/%E2%82%AC"}},
		{"lowercase escapes re-encoded", "http://h/b/%e2%82%ac", "", []string{"/b/%e2%82%ac", "/b/%E2%82%AC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resourcePaths(serverRequest("GET", tc.target, nil), tc.bucket)
			if len(got) != len(tc.want) {
				t.Fatalf("paths %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("paths %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func TestAmzHeaders(t *testing.T) {
	h := http.Header{}
	h.Set("X-Amz-Meta-ReviewedBy", "joe@example.com")
	h.Add("X-Amz-Meta-ReviewedBy", " jane@example.com ")
	h.Set("x-amz-acl", "public-read")
	h.Set("X-Amz-Date", "Tue, 27 Mar 2007 21:06:08 +0000")
	h.Set("Content-Type", "text/plain")
	h.Set("X-Amzn-Trace-Id", "not an amz header")
	want := "x-amz-acl:public-read\nx-amz-date:Tue, 27 Mar 2007 21:06:08 +0000\nx-amz-meta-reviewedby:joe@example.com,jane@example.com\n"
	if got := amzHeaders(h, nil, ""); got != want {
		t.Errorf("amz headers %q, want %q", got, want)
	}
	want = "x-amz-acl:public-read\nx-amz-meta-reviewedby:joe@example.com,jane@example.com\n"
	if got := amzHeaders(h, nil, "x-amz-date"); got != want {
		t.Errorf("amz headers without x-amz-date %q, want %q", got, want)
	}
	q := map[string][]string{"x-amz-security-token": {"tok"}, "prefix": {"p"}}
	want = "x-amz-security-token:tok\n"
	if got := amzHeaders(http.Header{}, q, ""); got != want {
		t.Errorf("amz query parameters %q, want %q", got, want)
	}
}
