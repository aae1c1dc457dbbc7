package s3

import (
	"encoding/xml"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

func TestLastOfEachNumber(t *testing.T) {
	p := func(n int, etag string) objstore.CompletePart { return objstore.CompletePart{Number: n, ETag: etag} }
	for _, tc := range []struct {
		name     string
		in, want []objstore.CompletePart
	}{
		{"one", []objstore.CompletePart{p(1, "a")}, []objstore.CompletePart{p(1, "a")}},
		{"ascending", []objstore.CompletePart{p(1, "a"), p(2, "b"), p(5, "c")}, []objstore.CompletePart{p(1, "a"), p(2, "b"), p(5, "c")}},
		{"re-sent part: the last answer counts", []objstore.CompletePart{p(1, "b"), p(1, "a")}, []objstore.CompletePart{p(1, "a")}},
		{"runs", []objstore.CompletePart{p(1, "a"), p(2, "x"), p(2, "y"), p(2, "z"), p(3, "c")}, []objstore.CompletePart{p(1, "a"), p(2, "z"), p(3, "c")}},
		// Not ascending: left for the store to refuse (InvalidPartOrder).
		{"descending kept", []objstore.CompletePart{p(2, "b"), p(1, "a")}, []objstore.CompletePart{p(2, "b"), p(1, "a")}},
		{"apart kept", []objstore.CompletePart{p(1, "a"), p(2, "b"), p(1, "c")}, []objstore.CompletePart{p(1, "a"), p(2, "b"), p(1, "c")}},
	} {
		in := append([]objstore.CompletePart(nil), tc.in...)
		if got := lastOfEachNumber(in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestUploadParties: ListMultipartUploads names each upload's starter as
// Initiator and the object's owner-to-be as Owner: the writer in a user's
// bucket, the bucket owner when the bucket owns what is written in it
// (BucketOwnerPreferred with bucket-owner-full-control), the account
// (root) in the account's buckets.
func TestUploadParties(t *testing.T) {
	s, _ := testServer(t)
	for _, tc := range []struct {
		bucket, creator string
		header          map[string]string
	}{
		{"pub-rw", "alice", map[string]string{"x-amz-acl": "public-read-write"}},
		{"preferred", "alice", map[string]string{"x-amz-acl": "public-read-write", "x-amz-object-ownership": ownerPreferred}},
		{"account", "root", map[string]string{"x-amz-acl": "public-read-write"}},
	} {
		if status, code := call(t, s, tc.creator, "PUT", "/"+tc.bucket, nil, tc.header); status != 200 {
			t.Fatalf("create %s: %d %s", tc.bucket, status, code)
		}
	}
	for _, tc := range []struct {
		bucket, who      string
		header           map[string]string
		initiator, owner string
	}{
		{"pub-rw", "alice", nil, "alice", "alice"},
		{"pub-rw", "bob", nil, "bob", "bob"},
		{"preferred", "bob", nil, "bob", "bob"},
		{"preferred", "root", map[string]string{"x-amz-acl": "bucket-owner-full-control"}, "alice", "alice"},
		{"account", "alice", nil, "alice", "root"},
		{"account", "bob", nil, "bob", "root"},
	} {
		key := "up-" + tc.who
		if status, code := call(t, s, tc.who, "POST", "/"+tc.bucket+"/"+key+"?uploads", nil, tc.header); status != 200 {
			t.Fatalf("%s/%s: create upload: %d %s", tc.bucket, key, status, code)
		}
		var res listMultipartUploadsResult
		if err := xml.Unmarshal(callBody(t, s, "root", "GET", "/"+tc.bucket+"?uploads"), &res); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, u := range res.Uploads {
			if u.Key != key {
				continue
			}
			found = true
			if u.Initiator != (owner{tc.initiator, tc.initiator}) || u.Owner != (owner{tc.owner, tc.owner}) {
				t.Errorf("%s/%s by %s: Initiator %+v Owner %+v, want %s and %s", tc.bucket, key, tc.who, u.Initiator, u.Owner, tc.initiator, tc.owner)
			}
			var parts listPartsResult
			if err := xml.Unmarshal(callBody(t, s, "root", "GET", "/"+tc.bucket+"/"+key+"?uploadId="+u.UploadID), &parts); err != nil {
				t.Fatal(err)
			}
			if parts.Initiator != u.Initiator || parts.Owner != u.Owner {
				t.Errorf("%s/%s ListParts: Initiator %+v Owner %+v, want %+v %+v", tc.bucket, key, parts.Initiator, parts.Owner, u.Initiator, u.Owner)
			}
		}
		if !found {
			t.Errorf("%s/%s not listed: %+v", tc.bucket, key, res.Uploads)
		}
	}
}

// callBody serves one signed request and returns its 200 body.
func callBody(t *testing.T, s *Server, who, method, target string) []byte {
	t.Helper()
	r := httptest.NewRequest(method, "http://cairn.test"+target, nil)
	signAs(t, r, who)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
	}
	return w.Body.Bytes()
}

// TestInvalidURI: a bucket or key that is not UTF-8 is 400 InvalidURI,
// signed or not, before anything else is looked at.
func TestInvalidURI(t *testing.T) {
	s, _ := testServer(t)
	if status, code := call(t, s, "alice", "PUT", "/uri-bucket", nil, nil); status != 200 {
		t.Fatalf("create: %d %s", status, code)
	}
	for _, tc := range []struct {
		who, method, target string
		status              int
		code                string
	}{
		{"alice", "GET", "/uri-bucket/%AE%8A-", 400, "InvalidURI"},
		{"alice", "PUT", "/uri-bucket/a%FFb", 400, "InvalidURI"},
		{"", "GET", "/uri-bucket/%C0", 400, "InvalidURI"},
		{"alice", "GET", "/%FFbucket/k", 400, "InvalidURI"},
		{"bob", "DELETE", "/uri-bucket/%E2%82", 400, "InvalidURI"},
		{"alice", "GET", "/uri-bucket/%C2%AE%C2%8A-", 404, "NoSuchKey"},
		{"alice", "GET", "/uri-bucket/caf%C3%A9", 404, "NoSuchKey"},
	} {
		if status, code := call(t, s, tc.who, tc.method, tc.target, nil, nil); status != tc.status || code != tc.code {
			t.Errorf("%s %s by %q: %d %s, want %d %s", tc.method, tc.target, tc.who, status, code, tc.status, tc.code)
		}
	}
}
