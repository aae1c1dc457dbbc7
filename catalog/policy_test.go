package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

const (
	lakeARN  = "arn:aws:s3tables:us-east-1:000000000000:bucket/lake"
	tableARN = lakeARN + "/table/0f0e0d0c-0000-0000-0000-000000000001"
)

// policyDoc is a policy of one statement with the given elements (JSON
// members without braces).
func policyDoc(members string) string {
	return `{"Version":"2012-10-17","Statement":[{` + members + `}]}`
}

// TestResourcePolicyStorage puts, reads, replaces and deletes the
// policies of a warehouse and of a table on both backings: each is kept
// byte for byte, apart from the other, and ResourcePolicies reads both.
func TestResourcePolicyStorage(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			e := &env{t: t, dir: t.TempDir(), durable: durable}
			e.open()
			ctx := context.Background()
			if _, err := e.svc.CreateWarehouse(ctx, "lake"); err != nil {
				t.Fatal(err)
			}
			if err := e.svc.CreateNamespace(ctx, "lake", []string{"ns"}, nil); err != nil {
				t.Fatal(err)
			}
			e.mustCreate("t")
			tid := id("t")
			bucketDoc := policyDoc(`"Effect":"Allow","Principal":"*","Action":"s3tables:ListTables","Resource":"` + lakeARN + `"`)
			tableDoc := "{\n  " + strings.TrimPrefix(policyDoc(`"Effect":"Deny","Principal":{"AWS":"arn:aws:iam::000000000000:user/bob"},"Action":"s3tables:*","Resource":"`+tableARN+`"`), "{")

			for _, target := range []*catalog.Ident{nil, &tid} {
				_, err := e.svc.ResourcePolicy(ctx, "lake", target)
				wantErr(t, err, catalog.ErrNoSuchPolicy)
			}
			if b, tb, err := e.svc.ResourcePolicies(ctx, "lake", &tid); err != nil || b != "" || tb != "" {
				t.Fatalf("ResourcePolicies before any: %q %q %v", b, tb, err)
			}
			wantErr(t, e.svc.SetResourcePolicy(ctx, "lake", nil, lakeARN, bucketDoc), nil)
			wantErr(t, e.svc.SetResourcePolicy(ctx, "lake", &tid, tableARN, tableDoc), nil)
			for _, c := range []struct {
				target *catalog.Ident
				want   string
			}{{nil, bucketDoc}, {&tid, tableDoc}} {
				got, err := e.svc.ResourcePolicy(ctx, "lake", c.target)
				if err != nil || got != c.want {
					t.Fatalf("ResourcePolicy(%v) = %q, %v; want %q", c.target, got, err, c.want)
				}
			}
			if b, tb, err := e.svc.ResourcePolicies(ctx, "lake", &tid); err != nil || b != bucketDoc || tb != tableDoc {
				t.Fatalf("ResourcePolicies: %q %q %v", b, tb, err)
			}
			if b, tb, err := e.svc.ResourcePolicies(ctx, "lake", nil); err != nil || b != bucketDoc || tb != "" {
				t.Fatalf("ResourcePolicies of the warehouse: %q %q %v", b, tb, err)
			}
			other := id("nope")
			if b, tb, err := e.svc.ResourcePolicies(ctx, "lake", &other); err != nil || b != bucketDoc || tb != "" {
				t.Fatalf("ResourcePolicies of an unknown table: %q %q %v", b, tb, err)
			}
			if b, tb, err := e.svc.ResourcePolicies(ctx, "nowhere", &tid); err != nil || b != "" || tb != "" {
				t.Fatalf("ResourcePolicies of an unknown warehouse: %q %q %v", b, tb, err)
			}

			replaced := policyDoc(`"Effect":"Allow","Principal":"*","Action":["s3tables:GetTable","s3tables:ListTables"],"Resource":["` + lakeARN + `","` + lakeARN + `/table/*"]`)
			wantErr(t, e.svc.SetResourcePolicy(ctx, "lake", nil, lakeARN, replaced), nil)
			if got, _ := e.svc.ResourcePolicy(ctx, "lake", nil); got != replaced {
				t.Fatalf("after a second put: %q", got)
			}

			wantErr(t, e.svc.DeleteResourcePolicy(ctx, "lake", nil), nil)
			wantErr(t, e.svc.DeleteResourcePolicy(ctx, "lake", nil), nil) // none is no error
			_, err := e.svc.ResourcePolicy(ctx, "lake", nil)
			wantErr(t, err, catalog.ErrNoSuchPolicy)
			if got, err := e.svc.ResourcePolicy(ctx, "lake", &tid); err != nil || got != tableDoc {
				t.Fatalf("the table's policy after the warehouse's was deleted: %q %v", got, err)
			}
			wantErr(t, e.svc.DeleteResourcePolicy(ctx, "lake", &tid), nil)
			_, err = e.svc.ResourcePolicy(ctx, "lake", &tid)
			wantErr(t, err, catalog.ErrNoSuchPolicy)
		})
	}
}

// TestResourcePolicyTargets: an unknown warehouse or table is refused
// by every operation but ResourcePolicies.
func TestResourcePolicyTargets(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ghost := id("ghost")
	doc := policyDoc(`"Effect":"Allow","Principal":"*","Action":"s3tables:*","Resource":"*"`)
	_, err := e.svc.ResourcePolicy(ctx, "nowhere", nil)
	wantErr(t, err, catalog.ErrNoSuchWarehouse)
	_, err = e.svc.ResourcePolicy(ctx, "lake", &ghost)
	wantErr(t, err, catalog.ErrNoSuchTable)
	wantErr(t, e.svc.SetResourcePolicy(ctx, "nowhere", nil, "arn:aws:s3tables:us-east-1:000000000000:bucket/nowhere", doc), catalog.ErrNoSuchWarehouse)
	wantErr(t, e.svc.SetResourcePolicy(ctx, "lake", &ghost, lakeARN+"/table/x", doc), catalog.ErrNoSuchTable)
	wantErr(t, e.svc.DeleteResourcePolicy(ctx, "lake", &ghost), catalog.ErrNoSuchTable)
	wantErr(t, e.svc.DeleteResourcePolicy(ctx, "nowhere", nil), catalog.ErrNoSuchWarehouse)
}

// TestResourcePolicyValidation puts documents on the table bucket and
// on a table: each is kept or refused with ErrBadRequest, as AWS takes
// or refuses it, and a refused one leaves the policy as it was.
func TestResourcePolicyValidation(t *testing.T) {
	const (
		allow  = `"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable",`
		onLake = `"Resource":"` + lakeARN + `"`
	)
	cases := []struct {
		name  string
		table bool // put on the table, else on the table bucket
		doc   string
		ok    bool
	}{
		{"bucket itself", false, policyDoc(allow + onLake), true},
		{"its tables", false, policyDoc(allow + `"Resource":"` + lakeARN + `/table/*"`), true},
		{"one of its tables", false, policyDoc(allow + `"Resource":"` + tableARN + `"`), true},
		{"everything under it", false, policyDoc(allow + `"Resource":"` + lakeARN + `/*"`), true},
		{"star", false, policyDoc(allow + `"Resource":"*"`), true},
		{"any region and account", false, policyDoc(allow + `"Resource":"arn:aws:s3tables:*:*:bucket/lake"`), true},
		{"one statement, not a list", false, `{"Version":"2012-10-17","Statement":{` + allow + onLake + `}}`, true},
		{"no version", false, `{"Statement":[{` + allow + onLake + `}]}`, true},
		{"principals", false, policyDoc(`"Effect":"Allow","Principal":{"AWS":["000000000000","arn:aws:iam::000000000000:user/alice"],"CanonicalUser":"bob"},"Action":["s3tables:Get*","s3tables:ListTables"],` + onLake), true},
		{"deny with NotPrincipal and NotAction", false, policyDoc(`"Effect":"Deny","NotPrincipal":{"AWS":"arn:aws:iam::000000000000:user/alice"},"NotAction":"s3tables:Get*","NotResource":"` + lakeARN + `/table/x"`), true},
		{"condition", false, policyDoc(allow + onLake + `,"Condition":{"StringEquals":{"s3tables:namespace":"hr"}}`), true},
		{"lower-case action", false, policyDoc(`"Effect":"Allow","Principal":"*","Action":"S3Tables:gettable",` + onLake), true},

		{"the table itself", true, policyDoc(allow + `"Resource":"` + tableARN + `"`), true},
		{"tables of its bucket", true, policyDoc(allow + `"Resource":"` + lakeARN + `/table/*"`), true},
		{"star on a table", true, policyDoc(allow + `"Resource":"*"`), true},
		{"the bucket on a table", true, policyDoc(allow + onLake), false},
		{"another table", true, policyDoc(allow + `"Resource":"` + lakeARN + `/table/other"`), false},

		{"empty", false, ``, false},
		{"blank", false, "  \n", false},
		{"not JSON", false, `{"Statement":`, false},
		{"a list", false, `[]`, false},
		{"trailing data", false, policyDoc(allow+onLake) + `{}`, false},
		{"unknown member", false, `{"Version":"2012-10-17","Statements":[]}`, false},
		{"bad version", false, `{"Version":"2020-01-01","Statement":[{` + allow + onLake + `}]}`, false},
		{"no statement", false, `{"Version":"2012-10-17"}`, false},
		{"empty statement list", false, `{"Version":"2012-10-17","Statement":[]}`, false},
		{"statement not an object", false, `{"Version":"2012-10-17","Statement":["x"]}`, false},
		{"unknown statement member", false, policyDoc(allow + onLake + `,"Effects":"Allow"`), false},
		{"no effect", false, policyDoc(`"Principal":"*","Action":"s3tables:GetTable",` + onLake), false},
		{"bad effect", false, policyDoc(`"Effect":"Permit","Principal":"*","Action":"s3tables:GetTable",` + onLake), false},
		{"no principal", false, policyDoc(`"Effect":"Allow","Action":"s3tables:GetTable",` + onLake), false},
		{"principal and not principal", false, policyDoc(allow + onLake + `,"NotPrincipal":"*"`), false},
		{"allow with NotPrincipal", false, policyDoc(`"Effect":"Allow","NotPrincipal":"*","Action":"s3tables:GetTable",` + onLake), false},
		{"principal a name", false, policyDoc(`"Effect":"Allow","Principal":"alice","Action":"s3tables:GetTable",` + onLake), false},
		{"principal empty", false, policyDoc(`"Effect":"Allow","Principal":{},"Action":"s3tables:GetTable",` + onLake), false},
		{"principal unknown type", false, policyDoc(`"Effect":"Allow","Principal":{"Users":"alice"},"Action":"s3tables:GetTable",` + onLake), false},
		{"principal not an ARN", false, policyDoc(`"Effect":"Allow","Principal":{"AWS":"alice"},"Action":"s3tables:GetTable",` + onLake), false},
		{"no action", false, policyDoc(`"Effect":"Allow","Principal":"*",` + onLake), false},
		{"action and not action", false, policyDoc(allow + `"NotAction":"s3tables:Get*",` + onLake), false},
		{"s3 action", false, policyDoc(`"Effect":"Allow","Principal":"*","Action":"s3:GetObject",` + onLake), false},
		{"empty action list", false, policyDoc(`"Effect":"Allow","Principal":"*","Action":[],` + onLake), false},
		{"action not a string", false, policyDoc(`"Effect":"Allow","Principal":"*","Action":7,` + onLake), false},
		{"no resource", false, policyDoc(`"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable"`), false},
		{"resource and not resource", false, policyDoc(allow + onLake + `,"NotResource":"*"`), false},
		{"another bucket", false, policyDoc(allow + `"Resource":"arn:aws:s3tables:us-east-1:000000000000:bucket/other"`), false},
		{"a bucket whose name starts the same", false, policyDoc(allow + `"Resource":"arn:aws:s3tables:us-east-1:000000000000:bucket/lakeside"`), false},
		{"another region", false, policyDoc(allow + `"Resource":"arn:aws:s3tables:eu-west-1:000000000000:bucket/lake"`), false},
		{"another account", false, policyDoc(allow + `"Resource":"arn:aws:s3tables:us-east-1:111122223333:bucket/lake"`), false},
		{"an S3 bucket", false, policyDoc(allow + `"Resource":"arn:aws:s3:::lake/*"`), false},
		{"every bucket", false, policyDoc(allow + `"Resource":"arn:aws:s3tables:us-east-1:000000000000:bucket/*"`), false},
		{"a table's namespace path", false, policyDoc(allow + `"Resource":"` + lakeARN + `/table/ns/t"`), false},
		{"condition not an object", false, policyDoc(allow + onLake + `,"Condition":"x"`), false},
		{"duplicate sid", false, `{"Statement":[{"Sid":"a",` + allow + onLake + `},{"Sid":"a",` + allow + onLake + `}]}`, false},
		{"too large", false, policyDoc(allow + onLake + `,"Sid":"` + strings.Repeat("x", catalog.MaxPolicySize) + `"`), false},
	}
	e := newEnv(t)
	e.mustCreate("t")
	tid := id("t")
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target, arn := (*catalog.Ident)(nil), lakeARN
			if c.table {
				target, arn = &tid, tableARN
			}
			_ = e.svc.DeleteResourcePolicy(ctx, "lake", target)
			err := e.svc.SetResourcePolicy(ctx, "lake", target, arn, c.doc)
			if c.ok {
				wantErr(t, err, nil)
				if got, err := e.svc.ResourcePolicy(ctx, "lake", target); err != nil || got != c.doc {
					t.Fatalf("kept %q, %v", got, err)
				}
				return
			}
			if !errors.Is(err, catalog.ErrBadRequest) {
				t.Fatalf("put: %v, want ErrBadRequest", err)
			}
			if !strings.Contains(err.Error(), "malformed resource policy") {
				t.Errorf("the message %q does not say the policy is malformed", err)
			}
			_, err = e.svc.ResourcePolicy(ctx, "lake", target)
			wantErr(t, err, catalog.ErrNoSuchPolicy)
		})
	}
}

// TestResourcePolicyARN: the ARN a policy is put with must be the table
// bucket's (the table's for a table policy).
func TestResourcePolicyARN(t *testing.T) {
	e := newEnv(t)
	e.mustCreate("t")
	tid := id("t")
	ctx := context.Background()
	doc := policyDoc(`"Effect":"Allow","Principal":"*","Action":"s3tables:*","Resource":"*"`)
	for _, c := range []struct {
		target *catalog.Ident
		arn    string
	}{
		{nil, "lake"},
		{nil, "arn:aws:s3:::lake"},
		{nil, "arn:aws:s3tables:us-east-1:000000000000:bucket/other"},
		{nil, tableARN},
		{&tid, lakeARN},
		{&tid, lakeARN + "/table/"},
		{&tid, lakeARN + "/table/*"},
	} {
		if err := e.svc.SetResourcePolicy(ctx, "lake", c.target, c.arn, doc); !errors.Is(err, catalog.ErrBadRequest) {
			t.Errorf("put with ARN %q (table %v): %v, want ErrBadRequest", c.arn, c.target != nil, err)
		}
	}
}

// TestResourcePolicyCheckHook: Options.PolicyCheck refuses what the
// catalog's own checks let through, as a malformed policy.
func TestResourcePolicyCheckHook(t *testing.T) {
	e := newEnv(t, func(o *catalog.Options) {
		o.PolicyCheck = func(doc []byte) error {
			if strings.Contains(string(doc), "StringSortOf") {
				return errors.New(`unknown condition operator "StringSortOf"`)
			}
			return nil
		}
	})
	ctx := context.Background()
	good := policyDoc(`"Effect":"Allow","Principal":"*","Action":"s3tables:*","Resource":"*","Condition":{"StringEquals":{"s3tables:namespace":"a"}}`)
	bad := policyDoc(`"Effect":"Allow","Principal":"*","Action":"s3tables:*","Resource":"*","Condition":{"StringSortOf":{"s3tables:namespace":"a"}}`)
	wantErr(t, e.svc.SetResourcePolicy(ctx, "lake", nil, lakeARN, good), nil)
	err := e.svc.SetResourcePolicy(ctx, "lake", nil, lakeARN, bad)
	wantErr(t, err, catalog.ErrBadRequest)
	if !strings.Contains(err.Error(), "StringSortOf") {
		t.Errorf("the message %q does not say what the check found", err)
	}
	if got, _ := e.svc.ResourcePolicy(ctx, "lake", nil); got != good {
		t.Errorf("a refused put replaced the policy: %q", got)
	}
}

// TestResourcePolicyForgotten: a table's policy follows it on rename
// and is forgotten on drop, so that a table made later under its old
// name does not get it; deleting the warehouse forgets the warehouse's.
func TestResourcePolicyForgotten(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.mustCreate("t")
	from, to := id("t"), id("u")
	doc := policyDoc(`"Effect":"Allow","Principal":"*","Action":"s3tables:*","Resource":"*"`)
	wantErr(t, e.svc.SetResourcePolicy(ctx, "lake", &from, tableARN, doc), nil)

	wantErr(t, e.svc.RenameTable(ctx, "lake", from, to), nil)
	if _, tb, err := e.svc.ResourcePolicies(ctx, "lake", &from); err != nil || tb != "" {
		t.Fatalf("the old name keeps a policy after a rename: %q %v", tb, err)
	}
	if _, tb, err := e.svc.ResourcePolicies(ctx, "lake", &to); err != nil || tb != doc {
		t.Fatalf("the new name has not the policy after a rename: %q %v", tb, err)
	}
	wantErr(t, e.svc.DropTable(ctx, "lake", to, false), nil)
	e.mustCreate("u")
	if _, tb, err := e.svc.ResourcePolicies(ctx, "lake", &to); err != nil || tb != "" {
		t.Fatalf("a table made under a dropped one's name has its policy: %q %v", tb, err)
	}
	e.mustCreate("t")

	wantErr(t, e.svc.SetResourcePolicy(ctx, "lake", nil, lakeARN, doc), nil)
	wantErr(t, e.svc.DropTable(ctx, "lake", from, false), nil)
	wantErr(t, e.svc.DropTable(ctx, "lake", to, false), nil)
	wantErr(t, e.svc.DropNamespace(ctx, "lake", []string{"ns"}), nil)
	wantErr(t, e.svc.DeleteWarehouse(ctx, "lake"), nil)
	if _, err := e.svc.CreateWarehouse(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
	if b, _, err := e.svc.ResourcePolicies(ctx, "lake", nil); err != nil || b != "" {
		t.Fatalf("a warehouse made again under a deleted one's name has its policy: %q %v", b, err)
	}
}
