package sigv2

import (
	"encoding/base64"
	"slices"
	"testing"
	"time"
)

// The examples of AWS's "Signing and authenticating REST requests"
// (Signature Version 2), with their StringToSign and signature as the
// documentation prints them.
func TestKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, method, target, bucket string
		header                       map[string]string
		sts, sig                     string
		at                           time.Time
	}{
		{
			name: "object GET", method: "GET", bucket: "awsexamplebucket1",
			target: "http://awsexamplebucket1.us-west-1.s3.amazonaws.com/photos/puppy.jpg",
			header: map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 +0000"},
			sts:    "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/awsexamplebucket1/photos/puppy.jpg",
			sig:    "qgk2+6Sv9/oM7G3qLEjTH1a1l1g=",
			at:     time.Date(2007, 3, 27, 19, 36, 42, 0, time.UTC),
		},
		{
			name: "object PUT", method: "PUT", bucket: "awsexamplebucket1",
			target: "http://awsexamplebucket1.s3.us-west-1.amazonaws.com/photos/puppy.jpg",
			header: map[string]string{"Date": "Tue, 27 Mar 2007 21:15:45 +0000", "Content-Type": "image/jpeg", "Content-Length": "94328"},
			sts:    "PUT\n\nimage/jpeg\nTue, 27 Mar 2007 21:15:45 +0000\n/awsexamplebucket1/photos/puppy.jpg",
			sig:    "iqRzw+ileNPu1fhspnRs8nOjjIA=",
			at:     time.Date(2007, 3, 27, 21, 15, 45, 0, time.UTC),
		},
		{
			name: "list", method: "GET", bucket: "awsexamplebucket1",
			target: "http://awsexamplebucket1.s3.us-west-1.amazonaws.com/?prefix=photos&max-keys=50&marker=puppy",
			header: map[string]string{"Date": "Tue, 27 Mar 2007 19:42:41 +0000", "User-Agent": "Mozilla/5.0"},
			sts:    "GET\n\n\nTue, 27 Mar 2007 19:42:41 +0000\n/awsexamplebucket1/",
			sig:    "m0WP8eCtspQl5Ahe6L1SozdX9YA=",
			at:     time.Date(2007, 3, 27, 19, 42, 41, 0, time.UTC),
		},
		{
			name: "fetch ACL", method: "GET", bucket: "awsexamplebucket1",
			target: "http://awsexamplebucket1.s3.us-west-1.amazonaws.com/?acl",
			header: map[string]string{"Date": "Tue, 27 Mar 2007 19:44:46 +0000"},
			sts:    "GET\n\n\nTue, 27 Mar 2007 19:44:46 +0000\n/awsexamplebucket1/?acl",
			sig:    "82ZHiFIjc+WbcwFKGUVEQspPn+0=",
			at:     time.Date(2007, 3, 27, 19, 44, 46, 0, time.UTC),
		},
		{
			// Path-style, and x-amz-date takes precedence over Date.
			name: "delete with x-amz-date", method: "DELETE",
			target: "http://s3.us-west-1.amazonaws.com/awsexamplebucket1/photos/puppy.jpg",
			header: map[string]string{"Date": "Tue, 27 Mar 2007 21:20:27 +0000", "X-Amz-Date": "Tue, 27 Mar 2007 21:20:26 +0000", "User-Agent": "dotnet"},
			sts:    "DELETE\n\n\nTue, 27 Mar 2007 21:20:26 +0000\n/awsexamplebucket1/photos/puppy.jpg",
			sig:    "XbyTlbQdu9Xw5o8P4iMwPktxQd8=",
			at:     time.Date(2007, 3, 27, 21, 20, 26, 0, time.UTC),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := serverRequest(tc.method, tc.target, tc.header)
			cands := candidates(r, tc.bucket, r.Header.Get("Content-Md5"), r.Header.Get("Content-Type"), headerForms(r.Header))
			if !slices.Contains(cands, tc.sts) {
				t.Fatalf("StringToSign %q not among the candidates %q", tc.sts, cands)
			}
			if got := base64.StdEncoding.EncodeToString(sign(testSecretKey, tc.sts)); got != tc.sig {
				t.Fatalf("signature %s, want %s", got, tc.sig)
			}
			r.Header.Set("Authorization", "AWS "+testAccessKey+":"+tc.sig)
			auth, err := newTestVerifier(tc.at.Add(time.Minute)).Verify(r, tc.bucket)
			wantErr(t, err, nil)
			if auth.AccessKey != testAccessKey || auth.Presigned {
				t.Fatalf("auth %+v", auth)
			}
			// The same request with another secret, or after 15 minutes, fails.
			_, err = (&Verifier{Secret: func(string) (string, bool) { return "wrong", true }, Now: func() time.Time { return tc.at }}).Verify(r, tc.bucket)
			wantErr(t, err, ErrSignatureMismatch)
			_, err = newTestVerifier(tc.at.Add(16*time.Minute)).Verify(r, tc.bucket)
			wantErr(t, err, ErrTimeSkewed)
		})
	}
}

// The query-string example of the same document (its first edition's
// bucket, johnsmith, which the printed signature is computed for).
func TestKnownAnswerPresigned(t *testing.T) {
	const target = "http://johnsmith.s3.amazonaws.com/photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D"
	r := serverRequest("GET", target, nil)
	const sts = "GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg"
	if got := candidates(r, "johnsmith", "", "", []dateForm{{"1175139620", ""}}); got[0] != sts {
		t.Fatalf("StringToSign %q, want %q", got[0], sts)
	}
	before := time.Unix(1175139620, 0).Add(-time.Hour)
	auth, err := newTestVerifier(before).Verify(r, "johnsmith")
	wantErr(t, err, nil)
	if auth.AccessKey != testAccessKey || !auth.Presigned {
		t.Fatalf("auth %+v", auth)
	}
	_, err = newTestVerifier(time.Unix(1175139621, 0)).Verify(r, "johnsmith")
	wantErr(t, err, ErrExpired)
	_, err = newTestVerifier(before).Verify(r, "")
	wantErr(t, err, ErrSignatureMismatch) // path-style resource lacks the bucket
}

// The resources botocore signs, from its own debug log (StringToSign) for
// path-style requests: 1.43 signs what AWS documents; 1.29 (Debian 12)
// also signs the fixed query of the operation's URI template.
func TestBotocoreResources(t *testing.T) {
	for _, tc := range []struct{ target, resource string }{
		// botocore 1.43.11
		{"http://h/b?list-type=2&prefix=d%2F&encoding-type=url", "/b/"},
		{"http://h/b?acl", "/b/?acl"},
		{"http://h/b/k?uploads", "/b/k?uploads"},
		{"http://h/b?encoding-type=url", "/b/"},
		{"http://h/b?policyStatus", "/b/"},
		{"http://h/b/k?uploadId=u&partNumber=1", "/b/k?partNumber=1&uploadId=u"},
		{"http://h/b/a%20b", "/b/a%20b"},
		{"http://h/b?versions&encoding-type=url", "/b/?versions"},
		// botocore 1.29.27
		{"http://h/b?list-type=2&prefix=d%2F&encoding-type=url", "/b?list-type=2"},
		{"http://h/b?acl", "/b?acl?acl"},
		{"http://h/b/k?tagging", "/b/k?tagging?tagging"},
		{"http://h/b?policyStatus", "/b?policyStatus"},
		{"http://h/b?versions&encoding-type=url", "/b?versions?versions"},
		{"http://h/b/k?select&select-type=2", "/b/k?select&select-type=2?select&select-type=2"},
	} {
		r := serverRequest("GET", tc.target, nil)
		want := stringToSign("GET", "", "", "d", "", tc.resource)
		if got := candidates(r, "", "", "", []dateForm{{"d", ""}}); !slices.Contains(got, want) {
			t.Errorf("%s: resource %q not among the candidates %q", tc.target, tc.resource, got)
		}
	}
}
