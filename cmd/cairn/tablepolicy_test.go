package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/frontends/iceberg"
	"github.com/cairnstore/cairn/frontends/s3/iam"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// fakePolicyCatalog serves the resource policies of warehouse lake and
// its tables (by TableKey), and loads the tables of uuids.
type fakePolicyCatalog struct {
	bucket string
	tables map[string]string
	uuids  map[string]string // TableKey -> table-uuid
	err    error
}

func (f *fakePolicyCatalog) ResourcePolicies(_ context.Context, wh string, id *catalog.Ident) (string, string, error) {
	if f.err != nil || wh != "lake" {
		return "", "", f.err
	}
	if id == nil {
		return f.bucket, "", nil
	}
	return f.bucket, f.tables[catalog.TableKey(*id)], nil
}

func (f *fakePolicyCatalog) LoadTable(_ context.Context, wh string, id catalog.Ident, _ string) (catalog.TableResult, error) {
	uuid, ok := f.uuids[catalog.TableKey(id)]
	if wh != "lake" || !ok {
		return catalog.TableResult{}, fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, id)
	}
	return catalog.TableResult{Metadata: []byte(`{"format-version":2,"table-uuid":"` + uuid + `"}`)}, nil
}

// newTestUsers opens a user directory with root "rootkey" and the users
// of policies (access key -> policy).
func newTestUsers(t *testing.T, policies map[string]string) *iam.Directory {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 1, BlockSize: 64 << 10, NoBackground: true})
	t.Cleanup(func() { _ = st.Close() })
	users, err := iam.OpenDirectory(ctx, st, "rootkey", "rootsecret", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	for key, pol := range policies {
		if err := users.Add(ctx, iam.User{AccessKey: key, SecretKey: "secret-" + key, Policy: pol}); err != nil {
			t.Fatal(err)
		}
	}
	return users
}

// userPolicy is an identity policy of one statement.
func userPolicy(effect, action, resource string) string {
	return `{"Version":"2012-10-17","Statement":[{"Effect":"` + effect + `","Action":"` + action + `","Resource":"` + resource + `"}]}`
}

// tablesPolicy is a resource policy of the given statements (JSON
// objects without braces).
func tablesPolicy(statements ...string) string {
	return `{"Version":"2012-10-17","Statement":[{` + strings.Join(statements, "},{") + `}]}`
}

// stmt is one statement of a resource policy.
func stmt(effect, principal, action, resource string, extra ...string) string {
	s := `"Effect":"` + effect + `","Principal":` + principal + `,"Action":` + action + `,"Resource":"` + resource + `"`
	for _, e := range extra {
		s += "," + e
	}
	return s
}

// TestTablesAuthEvaluation: a request is allowed by the user's own
// policy or by the resource policies of its table bucket and table, an
// explicit Deny in any of them refusing it; root is allowed everything.
func TestTablesAuthEvaluation(t *testing.T) {
	const (
		lake   = "arn:aws:s3tables:us-east-1:000000000000:bucket/lake"
		uuid1  = "11111111-1111-1111-1111-111111111111"
		t1ARN  = lake + "/table/" + uuid1
		alice  = `{"AWS":"arn:aws:iam::000000000000:user/alice"}`
		reader = `{"AWS":"arn:aws:iam::000000000000:user/reader"}`
	)
	users := newTestUsers(t, map[string]string{
		"reader": userPolicy("Allow", "s3:GetObject", "arn:aws:s3:::lake/*"),
		"writer": "readwrite",
		"alice":  userPolicy("Allow", "s3:GetObject", "arn:aws:s3:::elsewhere/*"),
		"denied": `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"s3:GetObject","Resource":"arn:aws:s3:::lake/*"}]}`,
	})
	t1 := &catalog.Ident{Namespace: []string{"hr"}, Name: "t1"}
	t2 := &catalog.Ident{Namespace: []string{"sales"}, Name: "t2"}
	ghost := &catalog.Ident{Namespace: []string{"hr"}, Name: "ghost"}
	load := []string{"s3tables:GetTableMetadataLocation", "s3tables:GetTableData"}
	getTable := []string{"s3tables:GetTable"}
	for _, tc := range []struct {
		name        string
		user        string
		action      iceberg.Action
		actions     []string
		table       *catalog.Ident
		bucket      string // the table bucket's policy
		tablePolicy string // t1's policy
		want        bool
	}{
		{"root", "rootkey", iceberg.ActionWrite, getTable, t1, "", "", true},
		{"root despite a deny", "rootkey", iceberg.ActionRead, getTable, t1, tablesPolicy(stmt("Deny", `"*"`, `"s3tables:*"`, "*")), "", true},
		{"IAM allows", "reader", iceberg.ActionRead, load, t1, "", "", true},
		{"IAM does not allow write", "reader", iceberg.ActionWrite, []string{"s3tables:PutTableData"}, t1, "", "", false},
		{"IAM readwrite writes", "writer", iceberg.ActionWrite, []string{"s3tables:PutTableData"}, t1, "", "", true},
		{"no rights", "alice", iceberg.ActionRead, getTable, t1, "", "", false},
		{"unknown user", "mallory", iceberg.ActionRead, getTable, t1, "", "", false},
		{"bucket policy allows the user", "alice", iceberg.ActionRead, getTable, t1,
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTable"`, lake+"/table/*")), "", true},
		{"bucket policy allows another user", "alice", iceberg.ActionRead, getTable, t1,
			tablesPolicy(stmt("Allow", reader, `"s3tables:GetTable"`, lake+"/table/*")), "", false},
		{"bucket policy allows another action", "alice", iceberg.ActionRead, getTable, t1,
			tablesPolicy(stmt("Allow", alice, `"s3tables:ListTables"`, lake+"/table/*")), "", false},
		{"every action must be allowed", "alice", iceberg.ActionRead, load, t1,
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTableMetadataLocation"`, lake+"/table/*")), "", false},
		{"actions allowed by both policies together", "alice", iceberg.ActionRead, load, t1,
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTableMetadataLocation"`, lake+"/table/*")),
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTableData"`, t1ARN)), true},
		{"the bucket's ARN names no table", "alice", iceberg.ActionRead, getTable, t1,
			tablesPolicy(stmt("Allow", alice, `"s3tables:*"`, lake)), "", false},
		{"the bucket's ARN for a request on the bucket", "alice", iceberg.ActionRead, []string{"s3tables:ListTables"}, nil,
			tablesPolicy(stmt("Allow", alice, `"s3tables:*"`, lake)), "", true},
		{"a table's ARN names that table", "alice", iceberg.ActionRead, getTable, t1,
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTable"`, t1ARN)), "", true},
		{"a table's ARN names no other", "alice", iceberg.ActionRead, getTable, t2,
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTable"`, t1ARN)), "", false},
		{"a table that does not exist", "alice", iceberg.ActionRead, getTable, ghost,
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTable"`, lake+"/table/*")), "", true},
		{"everyone", "alice", iceberg.ActionRead, getTable, t1, tablesPolicy(stmt("Allow", `"*"`, `"s3tables:Get*"`, "*")), "", true},
		{"the account", "alice", iceberg.ActionRead, getTable, t1, tablesPolicy(stmt("Allow", `{"AWS":"000000000000"}`, `"s3tables:Get*"`, "*")), "", true},
		{"the access key", "alice", iceberg.ActionRead, getTable, t1, tablesPolicy(stmt("Allow", `{"CanonicalUser":"alice"}`, `"s3tables:Get*"`, "*")), "", true},
		{"namespace condition holds", "alice", iceberg.ActionRead, getTable, t1,
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTable"`, "*", `"Condition":{"StringEquals":{"s3tables:namespace":"hr"}}`)), "", true},
		{"namespace condition fails", "alice", iceberg.ActionRead, getTable, t2,
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTable"`, "*", `"Condition":{"StringEquals":{"s3tables:namespace":"hr"}}`)), "", false},
		{"table name condition", "alice", iceberg.ActionRead, getTable, t1,
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTable"`, "*", `"Condition":{"StringLike":{"s3tables:tableName":"t*"}}`)), "", true},
		{"deny in the bucket policy beats IAM", "reader", iceberg.ActionRead, load, t1,
			tablesPolicy(stmt("Deny", reader, `"s3tables:GetTableData"`, lake+"/table/*")), "", false},
		{"deny of another action leaves IAM", "reader", iceberg.ActionRead, load, t1,
			tablesPolicy(stmt("Deny", reader, `"s3tables:DeleteTable"`, lake+"/table/*")), "", true},
		{"deny in the table policy beats the bucket policy", "alice", iceberg.ActionRead, getTable, t1,
			tablesPolicy(stmt("Allow", alice, `"s3tables:*"`, lake+"/table/*")),
			tablesPolicy(stmt("Deny", `"*"`, `"s3tables:GetTable"`, t1ARN)), false},
		{"the table policy of one table leaves another", "alice", iceberg.ActionRead, getTable, t2,
			tablesPolicy(stmt("Allow", alice, `"s3tables:*"`, lake+"/table/*")),
			tablesPolicy(stmt("Deny", `"*"`, `"s3tables:GetTable"`, t1ARN)), true},
		{"table policy alone allows", "alice", iceberg.ActionRead, getTable, t1, "",
			tablesPolicy(stmt("Allow", alice, `"s3tables:GetTable"`, t1ARN)), true},
		{"table policy is not the bucket's", "alice", iceberg.ActionRead, []string{"s3tables:ListTables"}, nil, "",
			tablesPolicy(stmt("Allow", alice, `"s3tables:*"`, "*")), false},
		{"deny NotPrincipal", "alice", iceberg.ActionRead, getTable, t1,
			tablesPolicy(stmt("Allow", `"*"`, `"s3tables:*"`, "*"), `"Effect":"Deny","NotPrincipal":`+reader+`,"Action":"s3tables:GetTable","Resource":"*"`), "", false},
		{"IAM deny beats the bucket policy", "denied", iceberg.ActionRead, getTable, t1,
			tablesPolicy(stmt("Allow", `"*"`, `"s3tables:*"`, "*")), "", false},
		{"resource policies never grant migrate", "alice", iceberg.ActionMigrate, nil, nil,
			tablesPolicy(stmt("Allow", `"*"`, `"s3tables:*"`, "*")), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := &fakePolicyCatalog{bucket: tc.bucket, tables: map[string]string{catalog.TableKey(*t1): tc.tablePolicy},
				uuids: map[string]string{catalog.TableKey(*t1): uuid1, catalog.TableKey(*t2): "22222222-2222-2222-2222-222222222222"}}
			a := newTablesAuth(newIcebergAuth(users), cat, iceberg.S3TablesOptions{})
			r := iceberg.AccessRequest{Principal: iceberg.Principal{AccessKey: tc.user, Root: users.IsRoot(tc.user)},
				Action: tc.action, TablesActions: tc.actions, Warehouse: "lake", Table: tc.table}
			got, err := a.AuthorizeRequest(context.Background(), r)
			if err != nil || got != tc.want {
				t.Fatalf("AuthorizeRequest(%+v) = %v, %v; want %v", r, got, err, tc.want)
			}
		})
	}
	// A user's rights are per warehouse; another one's policies are not
	// lake's.
	a := newTablesAuth(newIcebergAuth(users), &fakePolicyCatalog{bucket: tablesPolicy(stmt("Allow", `"*"`, `"s3tables:*"`, "*"))}, iceberg.S3TablesOptions{})
	r := iceberg.AccessRequest{Principal: iceberg.Principal{AccessKey: "reader"}, Action: iceberg.ActionRead, TablesActions: getTable, Warehouse: "elsewhere"}
	if ok, err := a.AuthorizeRequest(context.Background(), r); ok || err != nil {
		t.Errorf("reader in another warehouse: %v, %v", ok, err)
	}
}

// TestTablesAuthFailures: a request whose policies cannot be read or
// evaluated fails (it might hold a Deny), with an error rather than a
// refusal; the users' policies alone still answer Authorize.
func TestTablesAuthFailures(t *testing.T) {
	users := newTestUsers(t, map[string]string{"reader": userPolicy("Allow", "s3:GetObject", "arn:aws:s3:::lake/*")})
	p := iceberg.Principal{AccessKey: "reader"}
	r := iceberg.AccessRequest{Principal: p, Action: iceberg.ActionRead, TablesActions: []string{"s3tables:ListTables"}, Warehouse: "lake"}
	for _, cat := range []*fakePolicyCatalog{
		{err: errors.New("backing on fire")},
		{bucket: `{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3tables:*","Resource":"*","Condition":{"StringSortOf":{"a":"b"}}}]}`},
	} {
		a := newTablesAuth(newIcebergAuth(users), cat, iceberg.S3TablesOptions{})
		if ok, err := a.AuthorizeRequest(context.Background(), r); ok || err == nil {
			t.Errorf("%+v: %v, %v; want an error", cat, ok, err)
		}
		if !a.Authorize(p, iceberg.ActionRead, "lake") || a.Authorize(p, iceberg.ActionWrite, "lake") || !a.Authorize(iceberg.Principal{AccessKey: "rootkey"}, iceberg.ActionMigrate, "lake") {
			t.Error("Authorize does not answer by the users' policies")
		}
	}
}

// TestCheckTablesPolicy: the catalog's PolicyCheck refuses what the
// evaluator cannot parse.
func TestCheckTablesPolicy(t *testing.T) {
	ok := `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable","Resource":"*","Condition":{"StringEquals":{"s3tables:namespace":"a"}}}]}`
	if err := checkTablesPolicy([]byte(ok)); err != nil {
		t.Errorf("%s: %v", ok, err)
	}
	for _, bad := range []string{
		strings.Replace(ok, "StringEquals", "StringSortOf", 1),
		strings.Replace(ok, `"StringEquals":{"s3tables:namespace":"a"}`, `"NumericLessThan":{"s3tables:namespace":"a"}`, 1),
		strings.Replace(ok, "s3tables:GetTable", "s3:GetObject", 1),
	} {
		if err := checkTablesPolicy([]byte(bad)); err == nil {
			t.Errorf("%s: taken", bad)
		}
	}
}
