package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// vendedLoad is what a load with vended credentials answers.
type vendedLoad struct {
	Metadata struct {
		Location string `json:"location"`
	} `json:"metadata"`
	Config             map[string]string `json:"config"`
	StorageCredentials []struct {
		Prefix string            `json:"prefix"`
		Config map[string]string `json:"config"`
	} `json:"storage-credentials"`
}

// TestCatalogVendedCredentials: a user limited to one warehouse loads a
// table with X-Iceberg-Access-Delegation: vended-credentials and gets
// credentials for the table's location (in config and
// storage-credentials, Cache-Control: no-store) with which it reads and
// writes the table's data files over S3, is refused one key outside the
// location, and, once they expired, everything; a user who may only read
// gets read-only ones; GET .../credentials refreshes them; another
// warehouse is refused to the first user. Remote signing: a load asking
// for it names the signer, which signs a put inside the table's location
// (the put then lands), refuses one outside (403 ForbiddenException) and
// a reader's put, and signs a reader's get.
func TestCatalogVendedCredentials(t *testing.T) {
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	const ttl = 6 * time.Second
	s := startServer(t, t.TempDir(), "--catalog-credential-ttl", ttl.String())
	s.waitReady(readyTimeout)
	cfMakeWarehouse(t, s, "vwh")
	cfMakeWarehouse(t, s, "owh")
	dir := t.TempDir()
	for name, doc := range map[string]string{
		"eng":    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":["arn:aws:s3:::vwh","arn:aws:s3:::vwh/*"]}]}`,
		"reader": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::vwh","arn:aws:s3:::vwh/*"]}]}`,
	} {
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		browserAddUser(t, s, name, name+"-secret-key", "@"+p)
	}
	// call GETs path (POSTs body when given) as user, asking for the
	// access delegation mechanism delegation when given.
	call := func(user, path, delegation, body string) (int, http.Header, []byte) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), cfCallTimeout)
		defer cancel()
		method := http.MethodGet
		if body != "" {
			method = http.MethodPost
		}
		req, err := http.NewRequestWithContext(ctx, method, s.url(path), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if delegation != "" {
			req.Header.Set("X-Iceberg-Access-Delegation", delegation)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if err := sigv4.Sign(req, user, user+"-secret-key", s3Region, "s3", sha256hex([]byte(body)), time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	load := func(user string) (vendedLoad, *s3.Client, time.Time) {
		t.Helper()
		status, h, body := call(user, "/iceberg/v1/vwh/namespaces/ns/tables/t", "vended-credentials", "")
		if status != http.StatusOK {
			t.Fatalf("%s loads the table with vended credentials: %d %s", user, status, body)
		}
		if h.Get("Cache-Control") != "no-store" {
			t.Fatalf("a load with credentials answered Cache-Control %q, want no-store", h.Get("Cache-Control"))
		}
		var l vendedLoad
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatal(err)
		}
		if len(l.StorageCredentials) != 1 || l.StorageCredentials[0].Prefix != strings.TrimSuffix(l.Metadata.Location, "/")+"/" {
			t.Fatalf("storage-credentials %+v for location %s", l.StorageCredentials, l.Metadata.Location)
		}
		c := l.StorageCredentials[0].Config
		for _, k := range []string{"s3.access-key-id", "s3.secret-access-key", "s3.session-token"} {
			if c[k] == "" || l.Config[k] != c[k] {
				t.Fatalf("%s missing or not the same in config and storage-credentials: %q %q", k, c[k], l.Config[k])
			}
		}
		ms, err := strconv.ParseInt(c["s3.session-token-expires-at-ms"], 10, 64)
		if err != nil {
			t.Fatalf("s3.session-token-expires-at-ms %q", c["s3.session-token-expires-at-ms"])
		}
		cl := s3.New(s3.Options{Region: s3Region, BaseEndpoint: aws.String(s.url("")), UsePathStyle: true, HTTPClient: sdkHTTPClient(),
			Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: c["s3.access-key-id"], SecretAccessKey: c["s3.secret-access-key"], SessionToken: c["s3.session-token"], Source: "vended"}, nil
			}))})
		return l, cl, time.UnixMilli(ms)
	}
	wantCode := func(what string, err error, status int, code string) {
		t.Helper()
		var re interface{ HTTPStatusCode() int }
		var ae smithy.APIError
		if err == nil || !errors.As(err, &re) || re.HTTPStatusCode() != status || !errors.As(err, &ae) || ae.ErrorCode() != code {
			t.Fatalf("%s: %v, want %d %s", what, err, status, code)
		}
	}
	l, eng, expires := load("eng")
	loc := strings.TrimPrefix(strings.TrimSuffix(l.Metadata.Location, "/"), "s3://vwh/")
	put := func(cl *s3.Client, key string) error {
		_, err := cl.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: aws.String("vwh"), Key: aws.String(key), Body: bytes.NewReader([]byte("rows of " + key))})
		return err
	}
	get := func(cl *s3.Client, key string) error {
		out, err := cl.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: aws.String("vwh"), Key: aws.String(key)})
		if err == nil {
			_, _ = io.Copy(io.Discard, out.Body)
			_ = out.Body.Close()
		}
		return err
	}
	data := loc + "/data/00000-0-vended.parquet"
	if err := put(eng, data); err != nil {
		t.Fatalf("a write of a data file with vended credentials: %v", err)
	}
	if err := get(eng, data); err != nil {
		t.Fatalf("a read of a data file with vended credentials: %v", err)
	}
	if _, err := eng.ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: aws.String("vwh"), Prefix: aws.String(loc + "/")}); err != nil {
		t.Fatalf("a list of the table's location: %v", err)
	}
	wantCode("a write next to the table's location", put(eng, "ns/other/data/x.parquet"), http.StatusForbidden, "AccessDenied")
	wantCode("a read outside the table's location", get(eng, "ns/other/data/x.parquet"), http.StatusForbidden, "AccessDenied")

	// A reader's credentials read and do not write.
	_, reader, _ := load("reader")
	if err := get(reader, data); err != nil {
		t.Fatalf("a read with a reader's vended credentials: %v", err)
	}
	wantCode("a write with a reader's vended credentials", put(reader, loc+"/data/r.parquet"), http.StatusForbidden, "AccessDenied")

	// The credentials endpoint; another warehouse.
	status, h, body := call("eng", "/iceberg/v1/vwh/namespaces/ns/tables/t/credentials", "vended-credentials", "")
	var refreshed struct {
		StorageCredentials []struct {
			Prefix string            `json:"prefix"`
			Config map[string]string `json:"config"`
		} `json:"storage-credentials"`
	}
	if status != http.StatusOK || h.Get("Cache-Control") != "no-store" || json.Unmarshal(body, &refreshed) != nil ||
		len(refreshed.StorageCredentials) != 1 || refreshed.StorageCredentials[0].Config["s3.session-token"] == "" {
		t.Fatalf("GET .../credentials: %d %s", status, body)
	}
	if status, _, body := call("eng", "/iceberg/v1/owh/namespaces/ns/tables/t", "vended-credentials", ""); status != http.StatusForbidden {
		t.Fatalf("eng loads a table of another warehouse: %d %s, want 403", status, body)
	}

	// Remote signing: the load turns it on and names the signer; the
	// signer signs requests inside the location only, and writes only for
	// a caller who may write.
	sign := func(user, method, uri string) (int, []byte, http.Header) {
		t.Helper()
		status, h, body := call(user, "/iceberg/v1/vwh/namespaces/ns/tables/t", "remote-signing", "")
		var lt vendedLoad
		if status != http.StatusOK || json.Unmarshal(body, &lt) != nil || lt.Config["s3.remote-signing-enabled"] != "true" || h.Get("Cache-Control") != "no-store" {
			t.Fatalf("a load asking for remote signing: %d %s", status, body)
		}
		signer := strings.TrimPrefix(lt.Config["s3.signer.uri"], s.url(""))
		req := `{"region":"` + s3Region + `","uri":"` + uri + `","method":"` + method + `","headers":{"x-amz-content-sha256":["UNSIGNED-PAYLOAD"]}}`
		status, _, body = call(user, signer+"/"+lt.Config["s3.signer.endpoint"], "", req)
		var sr struct {
			Headers http.Header `json:"headers"`
		}
		if status == http.StatusOK {
			if err := json.Unmarshal(body, &sr); err != nil {
				t.Fatal(err)
			}
		}
		return status, body, sr.Headers
	}
	signedURI := s.url("/vwh/" + loc + "/data/signed.parquet")
	status, body, hdr := sign("eng", http.MethodPut, signedURI)
	if status != http.StatusOK || hdr.Get("Authorization") == "" || hdr.Get("X-Amz-Security-Token") == "" {
		t.Fatalf("signing a put inside the location: %d %s", status, body)
	}
	preq, err := http.NewRequestWithContext(callCtx(t), http.MethodPut, signedURI, strings.NewReader("signed rows"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		preq.Header[k] = v
	}
	presp, err := http.DefaultClient.Do(preq)
	if err != nil {
		t.Fatal(err)
	}
	pbody, _ := io.ReadAll(presp.Body)
	_ = presp.Body.Close()
	if presp.StatusCode != http.StatusOK {
		t.Fatalf("the put with the signed headers %v: %d %s", hdr, presp.StatusCode, pbody)
	}
	if err := get(eng, loc+"/data/signed.parquet"); err != nil {
		t.Fatalf("reading the remotely signed put back: %v", err)
	}
	if status, body, _ := sign("eng", http.MethodPut, s.url("/vwh/ns/other/data/x.parquet")); status != http.StatusForbidden || !strings.Contains(string(body), "ForbiddenException") {
		t.Fatalf("signing a put outside the location: %d %s, want 403 ForbiddenException", status, body)
	}
	if status, body, _ := sign("reader", http.MethodPut, s.url("/vwh/"+loc+"/data/r.parquet")); status != http.StatusForbidden {
		t.Fatalf("signing a reader's put: %d %s, want 403", status, body)
	}
	if status, body, _ := sign("reader", http.MethodGet, signedURI); status != http.StatusOK {
		t.Fatalf("signing a reader's get: %d %s", status, body)
	}

	// Expired: refused.
	time.Sleep(time.Until(expires) + time.Second)
	wantCode("a read after the credentials expired", get(eng, data), http.StatusBadRequest, "ExpiredToken")
	cfStop(t, s)
}
