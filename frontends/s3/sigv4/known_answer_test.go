package sigv4

import (
	"bytes"
	"strings"
	"testing"
)

// TestKnownAnswersHeader checks the examples of the S3 documentation
// "Signature Calculations for the Authorization Header: Transferring Payload
// in a Single Chunk" and "… Query String Parameters" (presigned).
func TestKnownAnswersHeader(t *testing.T) {
	const empty = emptySHA256
	cases := []struct {
		name    string
		method  string
		url     string
		headers map[string]string
		body    string
		signed  string
		sig     string
	}{
		{
			name:   "GET object",
			method: "GET", url: "https://examplebucket.s3.amazonaws.com/test.txt",
			headers: map[string]string{"Range": "bytes=0-9", "X-Amz-Content-Sha256": empty, "X-Amz-Date": "20130524T000000Z"},
			signed:  "host;range;x-amz-content-sha256;x-amz-date",
			sig:     "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
		},
		{
			name:   "PUT object",
			method: "PUT", url: "https://examplebucket.s3.amazonaws.com/test%24file.text",
			headers: map[string]string{
				"Date":                 "Fri, 24 May 2013 00:00:00 GMT",
				"X-Amz-Date":           "20130524T000000Z",
				"X-Amz-Storage-Class":  "REDUCED_REDUNDANCY",
				"X-Amz-Content-Sha256": "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
			},
			body:   "Welcome to Amazon S3.",
			signed: "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
			sig:    "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
		},
		{
			name:   "GET bucket lifecycle",
			method: "GET", url: "https://examplebucket.s3.amazonaws.com/?lifecycle",
			headers: map[string]string{"X-Amz-Content-Sha256": empty, "X-Amz-Date": "20130524T000000Z"},
			signed:  "host;x-amz-content-sha256;x-amz-date",
			sig:     "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543",
		},
		{
			name:   "GET bucket list objects",
			method: "GET", url: "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J",
			headers: map[string]string{"X-Amz-Content-Sha256": empty, "X-Amz-Date": "20130524T000000Z"},
			signed:  "host;x-amz-content-sha256;x-amz-date",
			sig:     "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body *strings.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			r := mustRequest(t, tc.method, tc.url, nil)
			if body != nil {
				r = mustRequest(t, tc.method, tc.url, body)
			}
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testAccessKey+
				"/20130524/us-east-1/s3/aws4_request,SignedHeaders="+tc.signed+",Signature="+tc.sig)
			auth, b, err := newTestVerifier(testTime).Verify(r)
			wantErr(t, err, nil)
			if auth.AccessKey != testAccessKey || auth.Region != "us-east-1" || auth.Service != "s3" || auth.Presigned {
				t.Fatalf("auth = %+v", auth)
			}
			got, err := readBody(t, b)
			wantErr(t, err, nil)
			if string(got) != tc.body {
				t.Fatalf("body = %q, want %q", got, tc.body)
			}

			// One changed signature digit fails.
			bad := []byte(tc.sig)
			bad[10] ^= 1
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), tc.sig, string(bad), 1))
			_, _, err = newTestVerifier(testTime).Verify(r)
			wantErr(t, err, ErrSignatureMismatch)
		})
	}
}

func TestKnownAnswerPresigned(t *testing.T) {
	const u = "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256" +
		"&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request" +
		"&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host" +
		"&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
	auth, b, err := newTestVerifier(testTime.Add(86399e9)).Verify(mustRequest(t, "GET", u, nil))
	wantErr(t, err, nil)
	if !auth.Presigned || auth.Payload != PayloadUnsigned || b.Size() != 0 {
		t.Fatalf("auth = %+v size %d", auth, b.Size())
	}
	_, _, err = newTestVerifier(testTime.Add(86401e9)).Verify(mustRequest(t, "GET", u, nil))
	wantErr(t, err, ErrExpired)

	// Presign reproduces the documented URL.
	r := mustRequest(t, "GET", "https://examplebucket.s3.amazonaws.com/test.txt", nil)
	got, err := Presign(r, testAccessKey, testSecretKey, "us-east-1", "s3", 86400e9, testTime)
	wantErr(t, err, nil)
	if !strings.HasSuffix(got, "X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404") {
		t.Fatalf("Presign = %s", got)
	}
}

// TestKnownAnswerChunked checks the example of "Signature Calculations for
// the Authorization Header: Transferring Payload in Multiple Chunks (Chunked
// Upload)" and of its trailing-header variant, with their published seed,
// chunk and trailer signatures.
func TestKnownAnswerChunked(t *testing.T) {
	a1, a2 := bytes.Repeat([]byte("a"), 65536), bytes.Repeat([]byte("a"), 1024)
	plain := "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n" + string(a1) + "\r\n" +
		"400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n" + string(a2) + "\r\n" +
		"0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n"
	trailed := "10000;chunk-signature=b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2\r\n" + string(a1) + "\r\n" +
		"400;chunk-signature=1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7\r\n" + string(a2) + "\r\n" +
		"0;chunk-signature=2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992\r\n" +
		"x-amz-checksum-crc32c:sOO8/Q==\r\n" +
		"x-amz-trailer-signature:d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n\r\n"
	cases := []struct {
		name, payload, body, signed, seed, trailer, wantAlgo, wantSum string
	}{
		{
			name: "chunked", payload: PayloadStreamingSigned, body: plain,
			signed: "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class",
			seed:   "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
		},
		{
			name: "chunked with trailer", payload: PayloadStreamingSignedTrail, body: trailed,
			signed:  "content-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class;x-amz-trailer",
			seed:    "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e",
			trailer: "x-amz-checksum-crc32c", wantAlgo: "crc32c", wantSum: "sOO8/Q==",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			build := func(body string) *Body {
				t.Helper()
				r := mustRequest(t, "PUT", "https://s3.amazonaws.com/examplebucket/chunkObject.txt", strings.NewReader(body))
				r.Header.Set("X-Amz-Date", "20130524T000000Z")
				r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
				r.Header.Set("X-Amz-Content-Sha256", tc.payload)
				r.Header.Set("Content-Encoding", "aws-chunked")
				r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
				if tc.trailer != "" {
					r.Header.Set("X-Amz-Trailer", tc.trailer)
				} else {
					r.ContentLength = 66824
				}
				r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testAccessKey+
					"/20130524/us-east-1/s3/aws4_request,SignedHeaders="+tc.signed+",Signature="+tc.seed)
				auth, b, err := newTestVerifier(testTime).Verify(r)
				wantErr(t, err, nil)
				if auth.Payload != tc.payload || b.Size() != 66560 {
					t.Fatalf("auth %+v size %d", auth, b.Size())
				}
				return b
			}
			b := build(tc.body)
			got, err := readBody(t, b)
			wantErr(t, err, nil)
			if !bytes.Equal(got, append(append([]byte{}, a1...), a2...)) {
				t.Fatalf("decoded %d bytes, want 66560 of 'a'", len(got))
			}
			algo, sum, ok := b.Checksum()
			if algo != tc.wantAlgo || sum != tc.wantSum || ok != (tc.wantAlgo != "") {
				t.Fatalf("Checksum() = %q %q %v", algo, sum, ok)
			}
			// A flipped data byte breaks the chunk signature.
			bad := []byte(tc.body)
			bad[200] = 'b'
			_, err = readBody(t, build(string(bad)))
			wantErr(t, err, ErrSignatureMismatch)
		})
	}
}
