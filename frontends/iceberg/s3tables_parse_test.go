package iceberg

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

func TestParseS3TablesARN(t *testing.T) {
	for _, tc := range []struct {
		arn     string
		want    s3tARN
		errWant string // in the message; "" for success
	}{
		{"arn:aws:s3tables:us-east-1:000000000000:bucket/lake", s3tARN{bucket: "lake"}, ""},
		{"arn:aws:s3tables:eu-west-3:123456789012:bucket/lake", s3tARN{bucket: "lake"}, ""},
		{"arn:aws-cn:s3tables:cn-north-1:123456789012:bucket/lake", s3tARN{bucket: "lake"}, ""},
		{"arn:aws:s3tables:::bucket/lake", s3tARN{bucket: "lake"}, ""},
		{"arn:aws:s3tables:us-east-1:000000000000:bucket/lake/table/0e8e4f5a-1b2c-4d3e-8f90-123456789abc",
			s3tARN{bucket: "lake", table: "0e8e4f5a-1b2c-4d3e-8f90-123456789abc"}, ""},
		{"lake", s3tARN{}, "six fields"},
		{"arn:aws:s3tables:us-east-1:000000000000", s3tARN{}, "six fields"},
		{"urn:aws:s3tables:us-east-1:000000000000:bucket/lake", s3tARN{}, "start with arn:"},
		{"arn:gcp:s3tables:us-east-1:000000000000:bucket/lake", s3tARN{}, "partition"},
		{"arn:aws:s3:us-east-1:000000000000:bucket/lake", s3tARN{}, "service"},
		{"arn:aws:s3tables:us-east-1:000000000000:table/lake", s3tARN{}, "bucket/"},
		{"arn:aws:s3tables:us-east-1:000000000000:bucket/", s3tARN{}, "bucket name"},
		{"arn:aws:s3tables:us-east-1:000000000000:bucket/a\x01b", s3tARN{}, "control"},
		{"arn:aws:s3tables:us-east-1:000000000000:bucket/lake/view/x", s3tARN{}, "/table/TABLE-ID"},
		{"arn:aws:s3tables:us-east-1:000000000000:bucket/lake/table/", s3tARN{}, "/table/TABLE-ID"},
		{"arn:aws:s3tables:us-east-1:000000000000:bucket/lake/table/a/b", s3tARN{}, "/table/TABLE-ID"},
	} {
		got, err := parseARN(tc.arn)
		switch {
		case tc.errWant == "" && (err != nil || got != tc.want):
			t.Errorf("parseARN(%q) = %+v, %v; want %+v", tc.arn, got, err, tc.want)
		case tc.errWant != "" && (err == nil || !strings.Contains(err.Error(), tc.errWant) || !strings.Contains(err.Error(), "arn:aws:s3tables:REGION")):
			t.Errorf("parseARN(%q): error %v, want one saying %q and what an ARN looks like", tc.arn, err, tc.errWant)
		}
	}
	if _, err := parseBucketARN("arn:aws:s3tables:us-east-1:000000000000:bucket/lake/table/x"); err == nil {
		t.Error("parseBucketARN accepts a table's ARN")
	}
	e := &s3Tables{opt: S3TablesOptions{Region: "eu-west-3", AccountID: "123456789012"}}
	if got := e.tableARN("lake", "id-1"); got != "arn:aws:s3tables:eu-west-3:123456789012:bucket/lake/table/id-1" {
		t.Errorf("tableARN = %s", got)
	}
	if got, err := parseARN(e.tableARN("lake", "id-1")); err != nil || got != (s3tARN{bucket: "lake", table: "id-1"}) {
		t.Errorf("tableARN does not parse back: %+v %v", got, err)
	}
}

// TestS3TablesPathARN: an ARN percent-encoded in a path segment, as the
// SDKs send it (":" and "/" encoded), names the bucket; unencoded, its "/"
// splits the path and no operation matches; a table's ARN is refused.
func TestS3TablesPathARN(t *testing.T) {
	e := newS3TEnv(t)
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/buckets/" + url.QueryEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/wh"), 200},
		{"/buckets/" + url.PathEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/wh"), 200}, // ":" left as is
		{"/buckets/arn:aws:s3tables:us-east-1:000000000000:bucket/wh", 404},
		{"/buckets/" + url.QueryEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/wh/table/x"), 400},
	} {
		if w := e.call("reader", "GET", tc.target, ""); w.Code != tc.status {
			t.Errorf("GET %s: %d %s, want %d", tc.target, w.Code, w.Body, tc.status)
		}
	}
}

func TestS3TablesPaging(t *testing.T) {
	keys := []string{"b", "a", "ab", "c"}
	id := func(k string) string { return k }
	for _, tc := range []struct {
		query    string
		want     []string
		wantNext string
		err      bool
	}{
		{"", []string{"a", "ab", "b", "c"}, "", false},
		{"maxBuckets=2", []string{"a", "ab"}, "ab", false},
		{"maxBuckets=2&continuationToken=" + encodeListToken("ab"), []string{"b", "c"}, "", false},
		{"maxBuckets=4", []string{"a", "ab", "b", "c"}, "", false},
		{"prefix=a", []string{"a", "ab"}, "", false},
		{"prefix=a&continuationToken=" + encodeListToken("a"), []string{"ab"}, "", false},
		{"continuationToken=" + encodeListToken("zz"), nil, "", false},
		{"maxBuckets=1001", nil, "", true},
		{"maxBuckets=-1", nil, "", true},
		{"maxBuckets=x", nil, "", true},
		{"continuationToken=%3D%3D", nil, "", true},
	} {
		q, _ := url.ParseQuery(tc.query)
		pg, err := parsePaging(q, "maxBuckets")
		if tc.err {
			if err == nil {
				t.Errorf("%s: no error", tc.query)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		got, next := pg.page(append([]string(nil), keys...), id)
		wantNext := ""
		if tc.wantNext != "" {
			wantNext = encodeListToken(tc.wantNext)
		}
		if !reflect.DeepEqual(got, tc.want) || next != wantNext {
			t.Errorf("%s: %q next %q, want %q next %q", tc.query, got, next, tc.want, wantNext)
		}
	}
}

// TestIcebergCreateBody: CreateTable's body becomes the Iceberg REST
// CreateTableRequest; fields get ids, types are lowercased, schemaV2,
// partitionSpec, writeOrder and properties pass through.
func TestIcebergCreateBody(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string // the Iceberg request's JSON; "" when an error is wanted
		errWant  string
	}{
		{"no metadata", `{"name":"t","format":"ICEBERG"}`,
			`{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[]}}`, ""},
		{"schema", `{"name":"t","format":"iceberg","metadata":{"iceberg":{"schema":{"fields":[
			{"name":"id","type":"LONG","required":true},{"name":"amount","type":" decimal(10,2) "},{"name":"at","type":"timestamptz","required":false}]}}}}`,
			`{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[
			{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"amount","type":"decimal(10,2)","required":false},
			{"id":3,"name":"at","type":"timestamptz","required":false}]}}`, ""},
		{"given ids", `{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"schema":{"fields":[
			{"name":"a","type":"int"},{"id":7,"name":"b","type":"int"},{"name":"c","type":"int"}]}}}}`,
			`{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[
			{"id":8,"name":"a","type":"int","required":false},{"id":7,"name":"b","type":"int","required":false},{"id":9,"name":"c","type":"int","required":false}]}}`, ""},
		{"schemaV2 and the rest", `{"name":"t","format":"ICEBERG","metadata":{"iceberg":{
			"schemaV2":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"p","type":{"type":"list","element-id":2,"element":"int","element-required":true},"required":true}]},
			"partitionSpec":{"spec-id":0,"fields":[{"source-id":1,"transform":"identity","name":"p"}]},
			"writeOrder":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]},
			"properties":{"write.format.default":"parquet"}}}}`,
			`{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"p","type":{"type":"list","element-id":2,"element":"int","element-required":true},"required":true}]},
			"partition-spec":{"spec-id":0,"fields":[{"source-id":1,"transform":"identity","name":"p"}]},
			"write-order":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]},
			"properties":{"write.format.default":"parquet"}}`, ""},
		{"no name", `{"format":"ICEBERG"}`, "", "name is required"},
		{"no format", `{"name":"t"}`, "", "format is required"},
		{"other format", `{"name":"t","format":"DELTA"}`, "", "give ICEBERG"},
		{"both schemas", `{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"schema":{"fields":[]},"schemaV2":{"type":"struct","fields":[]}}}}`, "", "not both"},
		{"schemaV2 not a struct", `{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"schemaV2":{"type":"list"}}}}`, "", "schemaV2 must be"},
		{"field without name", `{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"schema":{"fields":[{"type":"int"}]}}}}`, "", "name is required"},
		{"field without type", `{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"schema":{"fields":[{"name":"a"}]}}}}`, "", "type is required"},
		{"nested type", `{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"schema":{"fields":[{"name":"a","type":"struct<x:int>"}]}}}}`, "", "schemaV2"},
		{"bad id", `{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"schema":{"fields":[{"id":0,"name":"a","type":"int"}]}}}}`, "", "id 0"},
		{"partition spec not an object", `{"name":"t","format":"ICEBERG","metadata":{"iceberg":{"partitionSpec":[1]}}}`, "", "partitionSpec must be"},
		{"encryption", `{"name":"t","format":"ICEBERG","encryptionConfiguration":{"sseAlgorithm":"aws:kms"}}`, "", "encryptionConfiguration"},
		{"not JSON", `{"name":`, "", "not the JSON"},
		{"wrong JSON type", `{"name":1}`, "", "not the JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, got, err := icebergCreateBody([]byte(tc.in))
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), tc.errWant) {
					t.Fatalf("error %v, want one saying %q", err, tc.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := json.Unmarshal(got, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) || name != "t" {
				t.Fatalf("%s: got %s, want %s", name, got, tc.want)
			}
		})
	}
}

// TestS3TablesJobConfig: the settings of a put become the catalog's job
// configuration, and a configuration answers the settings back.
func TestS3TablesJobConfig(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		name  string
		kind  catalog.JobKind
		value string
		want  catalog.JobConfig
		err   string
	}{
		{"compaction", catalog.JobCompaction, `{"status":"enabled","settings":{"icebergCompaction":{"targetFileSizeMB":256,"strategy":"auto"}}}`,
			catalog.JobConfig{Enabled: true, TargetFileSize: 256 << 20, Strategy: "auto"}, ""},
		{"no status is enabled", catalog.JobCompaction, `{}`, catalog.JobConfig{Enabled: true}, ""},
		{"disabled", catalog.JobSnapshots, `{"status":"disabled"}`, catalog.JobConfig{}, ""},
		{"snapshots", catalog.JobSnapshots, `{"status":"enabled","settings":{"icebergSnapshotManagement":{"minSnapshotsToKeep":5,"maxSnapshotAgeHours":36}}}`,
			catalog.JobConfig{Enabled: true, MinSnapshotsToKeep: 5, MaxSnapshotAge: 36 * time.Hour}, ""},
		{"unreferenced", catalog.JobUnreferenced, `{"settings":{"icebergUnreferencedFileRemoval":{"unreferencedDays":3,"nonCurrentDays":10}}}`,
			catalog.JobConfig{Enabled: true, UnreferencedAfter: 3 * day, NonCurrentAfter: 10 * day}, ""},
		{"bad status", catalog.JobCompaction, `{"status":"on"}`, catalog.JobConfig{}, "enabled or disabled"},
		{"zero", catalog.JobCompaction, `{"settings":{"icebergCompaction":{"targetFileSizeMB":0}}}`, catalog.JobConfig{}, "targetFileSizeMB 0"},
		{"negative", catalog.JobSnapshots, `{"settings":{"icebergSnapshotManagement":{"minSnapshotsToKeep":-1}}}`, catalog.JobConfig{}, "minSnapshotsToKeep -1"},
		{"too many hours", catalog.JobSnapshots, `{"settings":{"icebergSnapshotManagement":{"maxSnapshotAgeHours":2147483647}}}`, catalog.JobConfig{}, "maxSnapshotAgeHours"},
		{"too many days", catalog.JobUnreferenced, `{"settings":{"icebergUnreferencedFileRemoval":{"nonCurrentDays":200000}}}`, catalog.JobConfig{}, "nonCurrentDays"},
		{"other job", catalog.JobUnreferenced, `{"settings":{"icebergCompaction":{}}}`, catalog.JobConfig{}, "does not apply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v s3tMaintenanceValue
			if err := json.Unmarshal([]byte(tc.value), &v); err != nil {
				t.Fatal(err)
			}
			got, err := s3tJobConfig(tc.kind, v)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		kind catalog.JobKind
		cfg  catalog.JobConfig
		want string
	}{
		{catalog.JobCompaction, catalog.JobConfig{Enabled: true, TargetFileSize: 100<<20 + 1},
			`{"status":"enabled","settings":{"icebergCompaction":{"targetFileSizeMB":101,"strategy":"auto"}}}`},
		{catalog.JobCompaction, catalog.JobConfig{},
			`{"status":"disabled","settings":{"icebergCompaction":{"targetFileSizeMB":512,"strategy":"auto"}}}`},
		{catalog.JobSnapshots, catalog.JobConfig{Enabled: true, MinSnapshotsToKeep: 2, MaxSnapshotAge: 90 * time.Minute},
			`{"status":"enabled","settings":{"icebergSnapshotManagement":{"minSnapshotsToKeep":2,"maxSnapshotAgeHours":2}}}`},
		{catalog.JobUnreferenced, catalog.JobConfig{Enabled: true, UnreferencedAfter: time.Second},
			`{"status":"enabled","settings":{"icebergUnreferencedFileRemoval":{"unreferencedDays":1,"nonCurrentDays":10}}}`},
	} {
		got, _ := json.Marshal(s3tMaintenanceValueOf(tc.kind, tc.cfg))
		if string(got) != tc.want {
			t.Errorf("%s %+v: %s, want %s", tc.kind, tc.cfg, got, tc.want)
		}
	}
}
