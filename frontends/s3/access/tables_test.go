package access

import (
	"errors"
	"testing"
)

// TestTablesPolicy: an S3 Tables resource policy takes s3tables: actions
// on S3 Tables ARNs (and no S3 ones), and evaluates with the principals,
// wildcards and conditions of a bucket policy.
func TestTablesPolicy(t *testing.T) {
	const bucket = "arn:aws:s3tables:us-east-1:000000000000:bucket/lake"
	p := mustPolicy(t, `{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/alice"},"Action":["s3tables:Get*","s3tables:ListTables"],"Resource":["`+bucket+`","`+bucket+`/table/*"]},
	  {"Effect":"Allow","Principal":"*","Action":"s3tables:GetTableData","Resource":"`+bucket+`/table/*","Condition":{"StringEquals":{"s3tables:namespace":"hr"}}},
	  {"Effect":"Deny","Principal":{"AWS":"000000000000"},"Action":"s3tables:DeleteTable","Resource":"`+bucket+`/table/t1"}
	]}`, Tables)
	ns := func(v string) func(string) ([]string, bool) {
		return values(map[string][]string{"s3tables:namespace": {v}})
	}
	for _, tc := range []struct {
		who, action, res string
		values           func(string) ([]string, bool)
		want             Effect
	}{
		{"alice", "s3tables:GetTable", bucket + "/table/t1", nil, Allow},
		{"alice", "s3tables:gettablebucket", bucket, nil, Allow},
		{"alice", "s3tables:ListTables", bucket, nil, Allow},
		{"alice", "s3tables:PutTableData", bucket + "/table/t1", nil, None},
		{"alice", "s3tables:GetTable", "arn:aws:s3tables:us-east-1:000000000000:bucket/other", nil, None},
		{"bob", "s3tables:GetTable", bucket + "/table/t1", nil, None},
		{"bob", "s3tables:GetTableData", bucket + "/table/t1", ns("hr"), Allow},
		{"bob", "s3tables:GetTableData", bucket + "/table/t1", ns("sales"), None},
		{"alice", "s3tables:DeleteTable", bucket + "/table/t1", nil, Deny},
		{"alice", "s3tables:DeleteTable", bucket + "/table/t2", nil, None},
	} {
		r := &Request{Principal: tc.who, Action: tc.action, Resource: tc.res, Values: tc.values}
		if got := p.Eval(r); got != tc.want {
			t.Errorf("%s %s on %s: %v, want %v", tc.who, tc.action, tc.res, got, tc.want)
		}
	}
	for _, doc := range []string{
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"` + bucket + `"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable","Resource":"arn:aws:s3:::lake"}]}`,
		`{"Statement":[{"Effect":"Allow","Action":"s3tables:GetTable","Resource":"` + bucket + `"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable","Resource":"` + bucket + `","Condition":{"StringSortOf":{"a":"b"}}}]}`,
	} {
		if _, err := ParsePolicy([]byte(doc), Tables); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", doc, err)
		}
	}
	if _, err := ParsePolicy([]byte(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable","Resource":"`+bucket+`"}]}`), Resource); !errors.Is(err, ErrMalformed) {
		t.Errorf("a bucket policy takes s3tables: actions: %v", err)
	}
}

// TestCacheTablesPolicy: S3 Tables policies are cached apart from bucket
// policies of the same key, and parsed as S3 Tables policies.
func TestCacheTablesPolicy(t *testing.T) {
	var c Cache
	doc := []byte(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable","Resource":"*"}]}`)
	p1, err := c.TablesPolicy("lake", doc)
	if err != nil {
		t.Fatal(err)
	}
	if p2, _ := c.TablesPolicy("lake", doc); p2 != p1 {
		t.Error("the same document was parsed twice")
	}
	if _, err := c.Policy("lake", doc); err == nil {
		t.Error("an S3 Tables policy parsed as a bucket policy of the same key")
	}
	if p, err := c.TablesPolicy("lake", doc); err != nil || p != p1 {
		t.Errorf("the bucket policy's entry replaced the S3 Tables one: %v", err)
	}
	if p, err := c.TablesPolicy("lake", nil); p != nil || err != nil {
		t.Errorf("no document: %v %v", p, err)
	}
}
