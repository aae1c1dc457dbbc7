package iceberg

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// FuzzS3TablesARN: an ARN parseARN accepts names a non-empty bucket
// without "/" (and a table id without "/"), is rebuilt by bucketARN and
// tableARN into one that parses the same, and survives the SDKs'
// encoding into a path segment.
func FuzzS3TablesARN(f *testing.F) {
	for _, s := range []string{"arn:aws:s3tables:us-east-1:000000000000:bucket/lake",
		"arn:aws:s3tables:us-east-1:000000000000:bucket/lake/table/0e8e4f5a-1b2c-4d3e-8f90-123456789abc",
		"arn:aws-cn:s3tables:::bucket/b", "arn:aws:s3tables:r:a:bucket/", "arn:aws:s3tables:r:a:bucket/b/table/", "arn:::::", ""} {
		f.Add(s)
	}
	e := &s3Tables{opt: S3TablesOptions{Region: DefaultS3TablesRegion, AccountID: DefaultS3TablesAccount}}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := parseARN(s)
		if err != nil {
			if _, ok := err.(*APIError); !ok {
				t.Fatalf("parseARN(%q): %v is not a 400", s, err)
			}
			return
		}
		if a.bucket == "" || strings.Contains(a.bucket, "/") || strings.Contains(a.table, "/") {
			t.Fatalf("parseARN(%q) = %+v", s, a)
		}
		again := e.bucketARN(a.bucket)
		if a.table != "" {
			again = e.tableARN(a.bucket, a.table)
		}
		if b, err := parseARN(again); err != nil || b != a {
			t.Fatalf("parseARN(%q) = %+v, rebuilt %q parses to %+v, %v", s, a, again, b, err)
		}
		segs, err := splitPath("buckets/" + sdkEscape(s))
		if err != nil || len(segs) != 2 || segs[1] != s {
			t.Fatalf("%q does not survive a path segment: %q, %v", s, segs, err)
		}
	})
}

// FuzzS3TablesListToken: a token either is refused (400) or resumes after
// a key that encodes back to a token resuming after the same key.
func FuzzS3TablesListToken(f *testing.F) {
	for _, s := range []string{encodeListToken("lake"), encodeListToken("ns\x1ft"), "==", "!", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		key, err := decodeListToken(tok)
		if err != nil {
			return
		}
		if key == "" {
			t.Fatalf("token %q resumes after the empty key", tok)
		}
		if again, err := decodeListToken(encodeListToken(key)); err != nil || again != key {
			t.Fatalf("key %q: round trip %q, %v", key, again, err)
		}
	})
}

// FuzzS3TablesCreateTable: a CreateTable body is refused (400) or becomes
// a JSON CreateTableRequest naming the same table, with a struct schema.
func FuzzS3TablesCreateTable(f *testing.F) {
	for _, s := range []string{`{"name":"t","format":"ICEBERG"}`,
		`{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"schema":{"fields":[{"id":2147483647,"name":"a","type":"int"},{"name":"b","type":"long"}]}}}}`,
		`{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"schemaV2":{"type":"struct","fields":[]},"partitionSpec":{"fields":[]}}}}`,
		`{"name":"t","format":"ICEBERG","metadata":null}`, `{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"schemaV2":null}}}`, `[]`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		name, out, err := icebergCreateBody(body)
		if err != nil {
			if _, ok := err.(*APIError); !ok {
				t.Fatalf("%q: %v is not a 400", body, err)
			}
			return
		}
		var req struct {
			Name   string `json:"name"`
			Schema struct {
				Type string `json:"type"`
			} `json:"schema"`
		}
		if err := json.Unmarshal(out, &req); err != nil || req.Name != name || name == "" || req.Schema.Type != "struct" {
			t.Fatalf("%q became %s (name %q): %v", body, out, name, err)
		}
	})
}

// FuzzS3TablesMaintenance: a maintenance put's body is refused (400) or
// becomes a configuration of non-negative settings, whole MiB and hours
// or days, that renders back without loss.
func FuzzS3TablesMaintenance(f *testing.F) {
	for _, s := range []string{`{"value":{"status":"enabled","settings":{"icebergCompaction":{"targetFileSizeMB":128}}}}`,
		`{"value":{"settings":{"icebergSnapshotManagement":{"minSnapshotsToKeep":1,"maxSnapshotAgeHours":2562047}}}}`,
		`{"value":{"status":"disabled","settings":{"icebergUnreferencedFileRemoval":{"unreferencedDays":106751,"nonCurrentDays":1}}}}`,
		`{"value":{"settings":{"icebergCompaction":{"targetFileSizeMB":-9223372036854775808}}}}`, `{"value":null}`} {
		for k := range catalog.JobKinds() {
			f.Add(uint8(k), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, k uint8, body []byte) {
		kind := catalog.JobKinds()[int(k)%len(catalog.JobKinds())]
		var in s3tPutMaintenanceRequest
		if s3tDecode(body, &in) != nil || in.Value == nil {
			return
		}
		c, err := s3tJobConfig(kind, *in.Value)
		if err != nil {
			if _, ok := err.(*APIError); !ok {
				t.Fatalf("%q: %v is not a 400", body, err)
			}
			return
		}
		if c.TargetFileSize < 0 || c.TargetFileSize%s3tMiB != 0 || c.MinSnapshotsToKeep < 0 || c.MaxSnapshotAge < 0 ||
			c.UnreferencedAfter < 0 || c.NonCurrentAfter < 0 {
			t.Fatalf("%q became %+v", body, c)
		}
		v := s3tMaintenanceValueOf(kind, c)
		back, err := s3tJobConfig(kind, v)
		if err != nil {
			t.Fatalf("%q: %+v renders as %+v, which is refused: %v", body, c, v, err)
		}
		for _, p := range []struct{ got, set, dflt int64 }{
			{back.TargetFileSize, c.TargetFileSize, catalog.DefaultTargetFileSize},
			{int64(back.MaxSnapshotAge), int64(c.MaxSnapshotAge), int64(catalog.DefaultMaxSnapshotAge)},
			{int64(back.UnreferencedAfter), int64(c.UnreferencedAfter), int64(catalog.DefaultUnreferencedAfter)},
		} {
			if (p.set != 0 && p.got != p.set) || (p.set == 0 && p.got != 0 && p.got != p.dflt) {
				t.Fatalf("%q: %+v renders back as %+v", body, c, back)
			}
		}
	})
}

// FuzzS3TablesRequest: whatever the path, query and body, the handler
// answers without an internal error, and every error carries its
// exception type and a message.
func FuzzS3TablesRequest(f *testing.F) {
	arn := url.QueryEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/wh")
	for _, s := range []struct{ path, body string }{
		{"/buckets", `{"name":"lake"}`}, {"/buckets/" + arn, ""}, {"/namespaces/" + arn, `{"namespace":["ns"]}`},
		{"/tables/" + arn + "/ns", `{"name":"t","format":"ICEBERG"}`}, {"/get-table?tableBucketARN=" + arn + "&namespace=ns&name=t", ""},
		{"/tables/" + arn + "/ns/t/maintenance/icebergCompaction", `{"value":{}}`}, {"/tables/" + arn + "?maxTables=1", ""},
		{"/tables/" + arn + "/ns/t/rename", `{"newName":"u"}`}, {"/buckets/" + arn + "/maintenance", ""},
		{"/buckets/" + arn + "/policy", `{"resourcePolicy":"{\"Statement\":[]}"}`}, {"/tables/" + arn + "/ns/t/policy", `{"resourcePolicy":"x"}`},
	} {
		for m := range 4 {
			f.Add(uint8(m), s.path, []byte(s.body))
		}
	}
	f.Fuzz(func(t *testing.T, m uint8, target string, body []byte) {
		u, err := url.ParseRequestURI(target)
		if err != nil || !strings.HasPrefix(target, "/") {
			return
		}
		// A fresh catalog per input, holding table ns.t of wh, so that a
		// failure replays alone.
		cat := newFakeCatalog("wh")
		ctx := context.Background()
		if err := cat.CreateNamespace(ctx, "wh", []string{"ns"}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := cat.CreateTable(ctx, "wh", []string{"ns"}, []byte(`{"name":"t"}`)); err != nil {
			t.Fatal(err)
		}
		s, err := New(Options{Catalog: cat, Authenticator: fakeAuth{}, Authorizer: fakeAuth{}})
		if err != nil {
			t.Fatal(err)
		}
		h := s.S3Tables(S3TablesOptions{})
		method := []string{"GET", "PUT", "DELETE", "POST"}[int(m)%4]
		r := httptest.NewRequest(method, "http://cairn.test/", strings.NewReader(string(body)))
		r.URL, r.RequestURI = u, target
		r.Header.Set("Authorization", "Test root")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, target, body, w.Code, w.Body)
		}
		if w.Code >= 400 {
			var eb s3tErrorBody
			if json.Unmarshal(w.Body.Bytes(), &eb) != nil || eb.Message == "" || w.Header().Get("X-Amzn-Errortype") == "" {
				t.Fatalf("%s %s: error %d without type or message: %s", method, target, w.Code, w.Body)
			}
		}
	})
}
