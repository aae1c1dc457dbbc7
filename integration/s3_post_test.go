package integration

// Browser uploads (POST object) against a real `cairn serve`: forms built
// with mime/multipart as a browser sends them, signed with SigV4 and SigV2
// by this file's own code, and a boto3 generate_presigned_post posted by
// Go. The cases and expected answers follow ceph s3-tests'
// test_post_object_* and AWS's POST policy documentation.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// postField is one form field, in order.
type postField struct{ name, value string }

// postFile is the form's file part.
type postFile struct {
	name, content string
}

// postForm sends fields then the file to u as multipart/form-data; the
// redirect is not followed.
func postForm(t *testing.T, u, host string, fields []postField, file postFile) rawResponse {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range fields {
		if err := w.WriteField(f.name, f.value); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := w.CreateFormFile("file", file.name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(fw, file.content)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	req := newRaw(t, http.MethodPost, u, b.Bytes())
	req.Header.Set("Content-Type", w.FormDataContentType())
	if host != "" {
		req.Host = host
	}
	ctx, cancel := context.WithTimeout(context.Background(), s3CallTimeout)
	defer cancel()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	res := rawResponse{status: resp.StatusCode, header: resp.Header, body: body}
	var e s3Error
	if resp.StatusCode >= 300 && xml.Unmarshal(body, &e) == nil {
		res.code = e.Code
	}
	return res
}

// postPolicy is base64 of a policy document expiring at exp.
func postPolicy(t *testing.T, exp time.Time, conds ...any) string {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"expiration": exp.UTC().Format("2006-01-02T15:04:05.000Z"), "conditions": conds})
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(doc)
}

func hmac256(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// signV4Form returns the SigV4 fields of a form with policy, signed now.
func signV4Form(accessKey, secret, policy string, now time.Time) []postField {
	day := now.UTC().Format("20060102")
	k := hmac256([]byte("AWS4"+secret), day)
	for _, s := range []string{s3Region, "s3", "aws4_request"} {
		k = hmac256(k, s)
	}
	return []postField{
		{"x-amz-algorithm", "AWS4-HMAC-SHA256"},
		{"x-amz-credential", accessKey + "/" + day + "/" + s3Region + "/s3/aws4_request"},
		{"x-amz-date", now.UTC().Format("20060102T150405Z")},
		{"policy", policy},
		{"x-amz-signature", hex.EncodeToString(hmac256(k, policy))},
	}
}

// signV2Form returns the SigV2 fields of a form with policy.
func signV2Form(accessKey, secret, policy string) []postField {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(policy))
	return []postField{{"AWSAccessKeyId", accessKey}, {"policy", policy}, {"signature", base64.StdEncoding.EncodeToString(m.Sum(nil))}}
}

func TestS3PostObject(t *testing.T) {
	s := startCLIServer(t)
	c := sdkClient(s.server, cliUser, cliSecret)
	ctx := callCtx(t)
	const bucket = "post-forms"
	for _, b := range []string{bucket, "post-other"} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	u := s.url("/" + bucket)
	now := time.Now()
	later := now.Add(100 * time.Minute)
	// The conditions of ceph's tests.
	base := func(extra ...any) []any {
		return append([]any{
			map[string]string{"bucket": bucket},
			[]any{"starts-with", "$key", "foo"},
			map[string]string{"acl": "private"},
			[]any{"starts-with", "$Content-Type", "text/plain"},
			[]any{"content-length-range", 0, 1024},
		}, extra...)
	}
	v4 := func(policy string, fields ...postField) []postField {
		return append(append([]postField{}, fields...), signV4Form(cliUser, cliSecret, policy, now)...)
	}
	v2 := func(policy string, fields ...postField) []postField {
		return append(append([]postField{}, fields...), signV2Form(cliUser, cliSecret, policy)...)
	}
	plain := []postField{{"key", "foo.txt"}, {"acl", "private"}, {"Content-Type", "text/plain"}}
	with := func(fs []postField, more ...postField) []postField {
		return append(append([]postField{}, fs...), more...)
	}
	head := func(key string) (*s3.HeadObjectOutput, error) {
		return c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	}
	body := func(key string) string {
		t.Helper()
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GetObject %s: %v", key, err)
		}
		defer func() { _ = out.Body.Close() }()
		b, _ := io.ReadAll(out.Body)
		return string(b)
	}
	bar := postFile{"bar.txt", "bar"}

	for _, tc := range []struct {
		name   string
		fields []postField
		file   postFile
		status int
		code   string
		key    string // stored when status < 300
	}{
		{"sigv2", v2(postPolicy(t, later, base()...), plain...), bar, 204, "", "foo.txt"},
		{"sigv4", v4(postPolicy(t, later, base(
			map[string]string{"x-amz-algorithm": "AWS4-HMAC-SHA256"},
			[]any{"starts-with", "$x-amz-credential", cliUser + "/"},
			[]any{"starts-with", "$x-amz-date", ""},
		)...), with(plain, postField{"key", "foo-v4.txt"})[1:]...), bar, 204, "", "foo-v4.txt"},
		{"sigv4 credential not covered", v4(postPolicy(t, later, base()...), plain...), bar, 403, "AccessDenied", ""},
		{"no content type", v2(postPolicy(t, later, map[string]string{"bucket": bucket}, []any{"starts-with", "$key", "foo"},
			map[string]string{"acl": "private"}), postField{"key", "foo-nct"}, postField{"acl", "private"}), bar, 204, "", "foo-nct"},
		{"${filename}", v2(postPolicy(t, later, base()...), postField{"key", "${filename}"}, postField{"acl", "private"},
			postField{"Content-Type", "text/plain"}), postFile{"foo-named.txt", "named"}, 204, "", "foo-named.txt"},
		{"case-insensitive names", v2(postPolicy(t, later,
			map[string]string{"bUcKeT": bucket}, []any{"StArTs-WiTh", "$KeY", "foo"}, map[string]string{"AcL": "private"},
			[]any{"StArTs-WiTh", "$CoNtEnT-TyPe", "text/plain"}, []any{"content-length-range", 0, 1024}),
			postField{"kEy", "foo-case"}, postField{"aCl", "private"}, postField{"Content-Type", "text/plain"}), bar, 204, "", "foo-case"},
		{"x-ignore- field", v2(postPolicy(t, later, base()...), with(plain, postField{"x-ignore-foo", "bar"})...), bar, 204, "", "foo.txt"},
		{"escaped field values", v2(postPolicy(t, later, map[string]string{"bucket": bucket}, []any{"starts-with", "$key", `\$foo`},
			map[string]string{"acl": "private"}), postField{"key", `\$foo.txt`}, postField{"acl", "private"}), bar, 204, "", `\$foo.txt`},
		{"x-amz-meta", v2(postPolicy(t, later, base([]any{"starts-with", "$x-amz-meta-foo", "bar"})...),
			with(plain, postField{"x-amz-meta-foo", "barclamp"}, postField{"key", "foo-meta"})[1:]...), bar, 204, "", "foo-meta"},
		{"tagging field", v2(postPolicy(t, later, base([]any{"starts-with", "$tagging", ""})...),
			with(plain, postField{"tagging", "<Tagging><TagSet><Tag><Key>0</Key><Value>0</Value></Tag></TagSet></Tagging>"})...), bar, 204, "", "foo.txt"},
		{"larger than a chunk", v2(postPolicy(t, later, base()[:4]...), plain...), postFile{"big", strings.Repeat("foo", mib)}, 204, "", "foo.txt"},
		{"field without condition", v2(postPolicy(t, later, base()...), with(plain, postField{"x-amz-meta-foo", "barclamp"})...), bar, 403, "AccessDenied", ""},
		{"condition on a missing field", v2(postPolicy(t, later, base([]any{"starts-with", "$x-amz-meta-foo", "bar"})...), plain...), bar, 403, "AccessDenied", ""},
		{"eq fails", v2(postPolicy(t, later, base([]any{"eq", "$x-amz-meta-foo", ""})...), with(plain, postField{"x-amz-meta-foo", "barclamp"})...), bar, 403, "AccessDenied", ""},
		{"starts-with fails", v2(postPolicy(t, later, base()...), postField{"key", "bar.txt"}, postField{"acl", "private"}, postField{"Content-Type", "text/plain"}), bar, 403, "AccessDenied", ""},
		{"exact condition fails", v2(postPolicy(t, later, base()...), postField{"key", "foo.txt"}, postField{"acl", "public-read"}, postField{"Content-Type", "text/plain"}), bar, 403, "AccessDenied", ""},
		{"no bucket condition", v2(postPolicy(t, later, base()[1:]...), plain...), bar, 403, "AccessDenied", ""},
		{"expired policy", v2(postPolicy(t, now.Add(-100*time.Minute), base()...), plain...), bar, 403, "AccessDenied", ""},
		{"too large", v2(postPolicy(t, later, append(base()[:4], []any{"content-length-range", 0, 2})...), plain...), bar, 400, "EntityTooLarge", ""},
		{"too small", v2(postPolicy(t, later, append(base()[:4], []any{"content-length-range", 512, 1000})...), plain...), bar, 400, "EntityTooSmall", ""},
		{"empty range", v2(postPolicy(t, later, append(base()[:4], []any{"content-length-range", 0, 0})...), plain...), bar, 400, "EntityTooLarge", ""},
		{"range with one bound", v2(postPolicy(t, later, append(base()[:4], []any{"content-length-range", 0})...), plain...), bar, 400, "InvalidPolicyDocument", ""},
		{"negative range", v2(postPolicy(t, later, append(base()[:4], []any{"content-length-range", -1, 0})...), plain...), bar, 400, "InvalidPolicyDocument", ""},
		{"empty condition", v2(postPolicy(t, later, map[string]string{}), plain...), bar, 400, "InvalidPolicyDocument", ""},
		{"bad signature v2", with(v2(postPolicy(t, later, base()...), plain...)[:len(plain)+2], postField{"signature", "AAAA" + strings.Repeat("B", 24)}), bar, 403, "SignatureDoesNotMatch", ""},
		{"unknown access key v2", append(with(plain, postField{"AWSAccessKeyId", "nobody"}), v2(postPolicy(t, later, base()...))[1:]...), bar, 403, "InvalidAccessKeyId", ""},
		{"missing signature v4", v4(postPolicy(t, later, base()...), plain...)[:len(plain)+4], bar, 400, "InvalidArgument", ""},
		{"bad signature v4", with(v4(postPolicy(t, later, base()...), plain...)[:len(plain)+4], postField{"x-amz-signature", strings.Repeat("0", 64)}), bar, 403, "SignatureDoesNotMatch", ""},
		{"missing signature", with(plain, postField{"AWSAccessKeyId", cliUser}, postField{"policy", postPolicy(t, later, base()...)}), bar, 400, "InvalidArgument", ""},
		{"no key", v2(postPolicy(t, later, base()...), postField{"acl", "private"}, postField{"Content-Type", "text/plain"}), bar, 400, "InvalidArgument", ""},
		{"anonymous, private bucket", plain, bar, 403, "AccessDenied", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.key != "" {
				_, _ = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(tc.key)})
			}
			r := postForm(t, u, "", tc.fields, tc.file)
			if r.status != tc.status || r.code != tc.code {
				t.Fatalf("status %d %s, want %d %s: %s", r.status, r.code, tc.status, tc.code, r.body)
			}
			if tc.key != "" {
				if got := body(tc.key); got != tc.file.content {
					t.Fatalf("stored %d bytes, want %d", len(got), len(tc.file.content))
				}
				if et := r.header.Get("ETag"); et == "" {
					t.Fatal("no ETag header")
				}
			}
		})
	}
	if h, err := head("foo-meta"); err != nil || h.Metadata["foo"] != "barclamp" || aws.ToString(h.ContentType) != "text/plain" {
		t.Fatalf("x-amz-meta-foo: %v %v", err, h)
	}
	if h, err := head("foo-nct"); err != nil || aws.ToString(h.ContentType) != "binary/octet-stream" {
		t.Fatalf("no Content-Type: %v %v", err, h)
	}

	t.Run("refused uploads store nothing", func(t *testing.T) {
		f := v2(postPolicy(t, later, append(base()[:4], []any{"content-length-range", 0, 2})...), postField{"key", "foo-refused"},
			postField{"acl", "private"}, postField{"Content-Type", "text/plain"})
		if r := postForm(t, u, "", f, bar); r.code != "EntityTooLarge" {
			t.Fatalf("got %d %s", r.status, r.code)
		}
		_, err := head("foo-refused")
		if httpStatus(err) != 404 {
			t.Fatalf("HeadObject of a refused upload: %v", err)
		}
	})

	t.Run("wrong bucket", func(t *testing.T) {
		f := v2(postPolicy(t, later, base()...), postField{"key", "foo.txt"}, postField{"bucket", bucket}, postField{"acl", "private"}, postField{"Content-Type", "text/plain"})
		if r := postForm(t, s.url("/post-other"), "", f, bar); r.status != 403 || r.code != "AccessDenied" {
			t.Fatalf("got %d %s", r.status, r.code)
		}
	})

	t.Run("success_action_status", func(t *testing.T) {
		for _, tc := range []struct {
			value  string
			status int
		}{{"200", 200}, {"201", 201}, {"204", 204}, {"404", 204}} {
			f := v2(postPolicy(t, later, base(map[string]string{"success_action_status": tc.value})...),
				with(plain, postField{"success_action_status", tc.value})...)
			r := postForm(t, u, "", f, bar)
			if r.status != tc.status {
				t.Fatalf("%s: status %d, want %d: %s", tc.value, r.status, tc.status, r.body)
			}
			if tc.status != 201 {
				if len(r.body) != 0 {
					t.Fatalf("%s: body %q", tc.value, r.body)
				}
				continue
			}
			var pr struct {
				Location, Bucket, Key, ETag string
			}
			if err := xml.Unmarshal(r.body, &pr); err != nil || pr.Key != "foo.txt" || pr.Bucket != bucket ||
				pr.ETag != r.header.Get("ETag") || pr.Location != s.url("/"+bucket+"/foo.txt") {
				t.Fatalf("201 body %q: %v %+v", r.body, err, pr)
			}
		}
	})

	t.Run("redirect", func(t *testing.T) {
		redirect := s.url("/" + bucket)
		f := v2(postPolicy(t, later, base([]any{"eq", "$success_action_redirect", redirect})...),
			with(plain, postField{"success_action_redirect", redirect})...)
		r := postForm(t, u, "", f, bar)
		h, err := head("foo.txt")
		if err != nil {
			t.Fatal(err)
		}
		want := redirect + "?bucket=" + bucket + "&key=foo.txt&etag=%22" + strings.Trim(aws.ToString(h.ETag), `"`) + "%22"
		if r.status != 303 || r.header.Get("Location") != want {
			t.Fatalf("status %d Location %q, want 303 %q", r.status, r.header.Get("Location"), want)
		}
	})

	t.Run("virtual-hosted", func(t *testing.T) {
		f := v2(postPolicy(t, later, base(map[string]string{"success_action_status": "201"})...), postField{"key", "foo-vh"},
			postField{"acl", "private"}, postField{"Content-Type", "text/plain"}, postField{"success_action_status", "201"})
		host := bucket + ".localhost:" + s.addr[strings.LastIndex(s.addr, ":")+1:]
		r := postForm(t, s.url("/"), host, f, bar)
		if r.status != 201 || !bytes.Contains(r.body, []byte("<Location>http://"+host+"/foo-vh</Location>")) {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		if got := body("foo-vh"); got != "bar" {
			t.Fatalf("stored %q", got)
		}
	})

	t.Run("read-only user", func(t *testing.T) {
		browserAddUser(t, s.server, "post-reader", "post-reader-secret", "readonly")
		p := postPolicy(t, later, base()...)
		f := append(append([]postField{}, plain...), signV2Form("post-reader", "post-reader-secret", p)...)
		if r := postForm(t, u, "", f, bar); r.status != 403 || r.code != "AccessDenied" {
			t.Fatalf("got %d %s", r.status, r.code)
		}
	})

	t.Run("not a form", func(t *testing.T) {
		req := newRaw(t, http.MethodPost, u, []byte("key=foo"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if r := doRaw(t, req); r.status != 412 || r.code != "PreconditionFailed" {
			t.Fatalf("got %d %s", r.status, r.code)
		}
	})

	t.Run("boto3 generate_presigned_post", func(t *testing.T) {
		py := cliPython(t)
		dir := t.TempDir()
		script := filepath.Join(dir, "presigned_post.py")
		cliWrite(t, script, boto3PresignedPostScript)
		r := cliRun(t, append(s.awsEnv(t), "CAIRN_ENDPOINT="+s.endpoint, "CAIRN_BUCKET="+bucket), dir, py, script)
		if r.code != 0 {
			t.Fatalf("boto3: %s", r)
		}
		var posts []struct {
			Name   string            `json:"name"`
			URL    string            `json:"url"`
			Fields map[string]string `json:"fields"`
			Status int               `json:"status"`
			File   string            `json:"file"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &posts); err != nil {
			t.Fatalf("boto3 output %q: %v", r.stdout, err)
		}
		for _, p := range posts {
			var fields []postField
			for k, v := range p.Fields {
				fields = append(fields, postField{k, v})
			}
			got := postForm(t, p.URL, "", fields, postFile{"upload.bin", p.File})
			if got.status != p.Status {
				t.Errorf("%s: status %d %s, want %d: %s", p.Name, got.status, got.code, p.Status, got.body)
			}
		}
		if got := body("presigned/plain"); got != "from boto3" {
			t.Errorf("presigned/plain holds %q", got)
		}
	})
	browserFsck(t, s.server)
}

// boto3PresignedPostScript prints the presigned POSTs to try, as JSON:
// boto3 signs them (SigV4), Go posts them.
const boto3PresignedPostScript = `
import json, os
import boto3
from botocore.config import Config

s3 = boto3.client("s3", endpoint_url=os.environ["CAIRN_ENDPOINT"],
                  config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
b = os.environ["CAIRN_BUCKET"]
out = []
def add(name, status, file, **kw):
    p = s3.generate_presigned_post(b, ExpiresIn=3600, **kw)
    out.append({"name": name, "url": p["url"], "fields": p["fields"], "status": status, "file": file})

add("plain", 204, "from boto3", Key="presigned/plain")
add("fields and conditions", 201, "x" * 10, Key="presigned/${filename}",
    Fields={"acl": "private", "success_action_status": "201", "Content-Type": "text/plain"},
    Conditions=[{"acl": "private"}, {"success_action_status": "201"}, ["starts-with", "$Content-Type", "text/"],
                ["content-length-range", 1, 100]])
add("too large for its range", 400, "x" * 101, Key="presigned/big",
    Conditions=[["content-length-range", 1, 100]])
print(json.dumps(out))
`
