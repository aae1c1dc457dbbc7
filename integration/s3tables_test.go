package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// s3tablesScript drives the AWS S3 Tables API with boto3's s3tables
// client, one step per run (its first argument): "create" makes two table
// buckets, a namespace and two tables, lists them (through botocore's
// paginators, one item a page), configures table and table bucket
// maintenance and reads it back, reads the job status, and checks a
// missing table's error; it prints the table's ARN. "delete" deletes
// them all. It exits 0 and prints PASS when every check holds.
const s3tablesScript = `
import os, sys
import boto3, botocore
from botocore.config import Config

ENDPOINT = os.environ["CAIRN_ENDPOINT"]
c = boto3.client("s3tables", endpoint_url=ENDPOINT, region_name="us-east-1",
                 config=Config(retries={"max_attempts": 1}))
ARN = "arn:aws:s3tables:us-east-1:000000000000:bucket/s3t-lake"
OTHER = "arn:aws:s3tables:us-east-1:000000000000:bucket/s3t-other"

def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)
    print("ok:", msg)

def error_code(call, **kw):
    try:
        call(**kw)
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Message"]
    return None, 200, ""

def names(pages, key, field="name"):
    return [item[field] for page in pages for item in page[key]]

def step_create():
    arn = c.create_table_bucket(name="s3t-lake")["arn"]
    check(arn == ARN, "create_table_bucket answers the bucket's ARN (%s)" % arn)
    c.create_table_bucket(name="s3t-other")
    b = c.get_table_bucket(tableBucketARN=ARN)
    check(b["name"] == "s3t-lake" and b["ownerAccountId"] == "000000000000" and b["createdAt"].year >= 2024,
          "get_table_bucket describes it: %r" % {k: b[k] for k in ("name", "ownerAccountId", "createdAt")})
    pages = list(c.get_paginator("list_table_buckets").paginate(prefix="s3t-", PaginationConfig={"PageSize": 1}))
    check(names(pages, "tableBuckets") == ["s3t-lake", "s3t-other"] and len(pages) >= 2,
          "list_table_buckets pages through both buckets, one a page (%d pages)" % len(pages))

    ns = c.create_namespace(tableBucketARN=ARN, namespace=["sales"])
    check(ns["namespace"] == ["sales"] and ns["tableBucketARN"] == ARN, "create_namespace")
    check(c.get_namespace(tableBucketARN=ARN, namespace="sales")["namespace"] == ["sales"], "get_namespace")
    got = [n["namespace"] for n in c.list_namespaces(tableBucketARN=ARN)["namespaces"]]
    check(got == [["sales"]], "list_namespaces: %r" % got)

    t = c.create_table(tableBucketARN=ARN, namespace="sales", name="orders", format="ICEBERG",
        metadata={"iceberg": {"schema": {"fields": [
            {"name": "id", "type": "long", "required": True},
            {"name": "amount", "type": "decimal(10,2)"},
            {"name": "placed", "type": "timestamptz"}]}}})
    check(t["tableARN"].startswith(ARN + "/table/") and t["versionToken"], "create_table: %s" % t["tableARN"])
    c.create_table(tableBucketARN=ARN, namespace="sales", name="returns", format="ICEBERG")
    g = c.get_table(tableBucketARN=ARN, namespace="sales", name="orders")
    check(g["tableARN"] == t["tableARN"] and g["versionToken"] == t["versionToken"] and g["format"] == "ICEBERG"
          and g["metadataLocation"].startswith("s3://s3t-lake/") and g["warehouseLocation"].startswith("s3://s3t-lake/"),
          "get_table: %r" % {k: g[k] for k in ("metadataLocation", "warehouseLocation", "versionToken")})
    check(c.get_table(tableArn=t["tableARN"])["name"] == "orders", "get_table by the table's ARN")
    pages = list(c.get_paginator("list_tables").paginate(tableBucketARN=ARN, namespace="sales", PaginationConfig={"PageSize": 1}))
    check(names(pages, "tables") == ["orders", "returns"], "list_tables pages through both tables")
    loc = c.get_table_metadata_location(tableBucketARN=ARN, namespace="sales", name="orders")
    check(loc["versionToken"] == g["versionToken"] and loc["metadataLocation"] == g["metadataLocation"], "get_table_metadata_location")
    # An engine writes the next metadata file itself and swaps it in.
    s3 = boto3.client("s3", endpoint_url=ENDPOINT, region_name="us-east-1")
    key = loc["metadataLocation"][len("s3://s3t-lake/"):]
    nxt = key.rsplit("/", 1)[0] + "/00001-engine.metadata.json"
    s3.copy_object(Bucket="s3t-lake", Key=nxt, CopySource={"Bucket": "s3t-lake", "Key": key})
    up = c.update_table_metadata_location(tableBucketARN=ARN, namespace="sales", name="orders",
                                          versionToken=loc["versionToken"], metadataLocation="s3://s3t-lake/" + nxt)
    check(up["metadataLocation"] == "s3://s3t-lake/" + nxt and up["versionToken"] != loc["versionToken"]
          and up["tableARN"] == t["tableARN"], "update_table_metadata_location swaps it: %r" % up)
    code, status, msg = error_code(c.update_table_metadata_location, tableBucketARN=ARN, namespace="sales", name="orders",
                                   versionToken=loc["versionToken"], metadataLocation="s3://s3t-lake/" + key)
    check(code == "ConflictException" and status == 409, "a stale versionToken is refused: %s %d %s" % (code, status, msg))
    check(c.get_table(tableBucketARN=ARN, namespace="sales", name="orders")["metadataLocation"] == "s3://s3t-lake/" + nxt,
          "get_table sees the swapped metadata")

    table = dict(tableBucketARN=ARN, namespace="sales", name="orders")
    c.put_table_maintenance_configuration(type="icebergCompaction", value={"status": "enabled",
        "settings": {"icebergCompaction": {"targetFileSizeMB": 256, "strategy": "binpack"}}}, **table)
    c.put_table_maintenance_configuration(type="icebergSnapshotManagement", value={"status": "enabled",
        "settings": {"icebergSnapshotManagement": {"minSnapshotsToKeep": 3, "maxSnapshotAgeHours": 48}}}, **table)
    cfg = c.get_table_maintenance_configuration(**table)["configuration"]
    check(cfg["icebergCompaction"] == {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 256, "strategy": "binpack"}}},
          "compaction reads back: %r" % cfg["icebergCompaction"])
    check(cfg["icebergSnapshotManagement"] == {"status": "enabled", "settings": {"icebergSnapshotManagement": {"minSnapshotsToKeep": 3, "maxSnapshotAgeHours": 48}}},
          "snapshot management reads back: %r" % cfg["icebergSnapshotManagement"])
    c.put_table_bucket_maintenance_configuration(tableBucketARN=ARN, type="icebergUnreferencedFileRemoval", value={"status": "enabled",
        "settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 4, "nonCurrentDays": 12}}})
    cfg = c.get_table_bucket_maintenance_configuration(tableBucketARN=ARN)["configuration"]
    check(cfg["icebergUnreferencedFileRemoval"] == {"status": "enabled", "settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 4, "nonCurrentDays": 12}}},
          "unreferenced file removal reads back: %r" % cfg)
    st = c.get_table_maintenance_job_status(**table)["status"]
    check(sorted(st) == ["icebergCompaction", "icebergSnapshotManagement", "icebergUnreferencedFileRemoval"]
          and all(st[k]["status"] in ("Not_Yet_Run", "Successful", "Failed") for k in st),
          "job status of the three enabled jobs: %r" % st)
    st = c.get_table_maintenance_job_status(tableBucketARN=ARN, namespace="sales", name="returns")["status"]
    check(st["icebergCompaction"]["status"] == "Disabled" and st["icebergUnreferencedFileRemoval"]["status"] != "Disabled",
          "another table has compaction disabled and the bucket's removal enabled: %r" % st)

    code, status, msg = error_code(c.get_table, tableBucketARN=ARN, namespace="sales", name="nope")
    check(code == "NotFoundException" and status == 404 and "nope" in msg, "get_table of a missing table: %s %d %s" % (code, status, msg))
    try:
        c.get_table(tableBucketARN=ARN, namespace="sales", name="nope")
        check(False, "get_table of a missing table fails")
    except c.exceptions.NotFoundException:
        print("ok: it is the modeled NotFoundException")
    code, status, _ = error_code(c.put_table_maintenance_configuration, type="icebergCompaction",
        value={"settings": {"icebergCompaction": {"targetFileSizeMB": 4096}}}, **table)
    check(code == "BadRequestException" and status == 400, "a target file size over 512 MB: %s %d" % (code, status))
    print("TABLE_ARN", t["tableARN"])

def step_delete():
    c.delete_table(tableBucketARN=ARN, namespace="sales", name="orders")
    c.delete_table(tableBucketARN=ARN, namespace="sales", name="returns")
    code, _, _ = error_code(c.delete_table_bucket, tableBucketARN=ARN)
    check(code == "ConflictException", "a table bucket holding a namespace is not deleted: %s" % code)
    c.delete_namespace(tableBucketARN=ARN, namespace="sales")
    c.delete_table_bucket(tableBucketARN=ARN)
    c.delete_table_bucket(tableBucketARN=OTHER)
    check(c.list_table_buckets(prefix="s3t-")["tableBuckets"] == [], "no table bucket left")
    code, status, _ = error_code(c.get_table_bucket, tableBucketARN=ARN)
    check(code == "NotFoundException" and status == 404, "get_table_bucket of a deleted bucket: %s" % code)

print("boto3", boto3.__version__, "botocore", botocore.__version__)
globals()["step_" + sys.argv[1]]()
print("PASS")
`

// s3tablesPython returns a python3 whose boto3 knows the s3tables service
// (botocore 1.35.76 and later): the engines' virtualenv's (boto3 pinned in
// integration/engines/requirements.txt), which make test installs, else
// Debian's or the one on PATH; or it skips the test.
func s3tablesPython(t *testing.T) string {
	t.Helper()
	var cands []string
	if dir := os.Getenv("CAIRN_ENGINES"); dir != "" {
		cands = append(cands, filepath.Join(dir, "venv", "bin", "python"))
	}
	cands = append(cands, "/usr/bin/python3")
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	const probe = `import sys, boto3; sys.exit(0 if "s3tables" in boto3.session.Session().get_available_services() else 1)`
	for _, p := range cands {
		if !cliExecutable(p) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := exec.CommandContext(ctx, p, "-c", probe).Run()
		cancel()
		if err == nil {
			return p
		}
	}
	t.Skipf("SKIP: no python3 whose boto3 knows s3tables (tried %q): install boto3 1.35.76 or later to run this test", cands)
	return ""
}

// TestS3TablesBoto3 runs boto3's s3tables client against the server as
// root: table buckets, a namespace and tables made over S3 Tables, their
// maintenance and a missing table's error; in between, the table it made
// loads through the Iceberg REST face with the schema it was given, and
// its ARN ends in the table-uuid; once deleted over S3 Tables, the
// warehouse is gone from the Iceberg face too.
func TestS3TablesBoto3(t *testing.T) {
	py := s3tablesPython(t)
	s := startCLIServer(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "s3tables.py")
	cliWrite(t, script, s3tablesScript)
	env := append(s.awsEnv(t), "CAIRN_ENDPOINT="+s.endpoint)
	run := func(step string) string {
		t.Helper()
		r := cliRun(t, env, dir, py, script, step)
		t.Logf("%s %s:\n%s%s", py, step, r.stdout, r.stderr)
		if r.code != 0 || !strings.Contains(r.stdout, "\nPASS") {
			t.Fatalf("boto3 s3tables step %s failed: %s", step, r)
		}
		return r.stdout
	}
	out := run("create")

	root := cfCred{cliUser, cliSecret}
	r := cfCall(t, s.server, root, "GET", "/iceberg/v1/s3t-lake/namespaces/sales/tables/orders", "")
	if r.status != 200 {
		t.Fatalf("the table made over S3 Tables does not load through the Iceberg REST face: %s", r)
	}
	var load struct {
		Metadata struct {
			UUID     string `json:"table-uuid"`
			Location string `json:"location"`
			Schemas  []struct {
				Fields []struct {
					ID       int    `json:"id"`
					Name     string `json:"name"`
					Type     string `json:"type"`
					Required bool   `json:"required"`
				} `json:"fields"`
			} `json:"schemas"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(r.body, &load); err != nil || len(load.Metadata.Schemas) != 1 {
		t.Fatalf("load: %v: %s", err, r.body)
	}
	fields := load.Metadata.Schemas[0].Fields
	// Iceberg writes decimal(10,2) as "decimal(10, 2)": spaces are not compared.
	want := []string{"1 id long true", "2 amount decimal(10,2) false", "3 placed timestamptz false"}
	if len(fields) != len(want) {
		t.Fatalf("schema %+v, want %q", fields, want)
	}
	for i, f := range fields {
		got := fmt.Sprintf("%d %s %s %v", f.ID, f.Name, strings.ReplaceAll(f.Type, " ", ""), f.Required)
		if got != want[i] {
			t.Errorf("field %d: %q, want %q", i, got, want[i])
		}
	}
	m := regexp.MustCompile(`TABLE_ARN (\S+)`).FindStringSubmatch(out)
	if m == nil || m[1] != "arn:aws:s3tables:us-east-1:000000000000:bucket/s3t-lake/table/"+load.Metadata.UUID {
		t.Errorf("the table's ARN %q does not end in its table-uuid %s", m, load.Metadata.UUID)
	}

	run("delete")
	if r := cfCall(t, s.server, root, "GET", "/iceberg/v1/config?warehouse=s3t-lake", ""); r.status != 404 {
		t.Errorf("the table bucket deleted over S3 Tables is still a warehouse: %s", r)
	}
}
