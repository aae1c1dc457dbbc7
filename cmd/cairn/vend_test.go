package main

import (
	"testing"

	"github.com/cairnstore/cairn/frontends/s3/access"
)

// TestLocationPolicy: vended credentials' session policy allows the
// table's objects (written only when write), listing under its prefix,
// and nothing next to it.
func TestLocationPolicy(t *testing.T) {
	for _, write := range []bool{false, true} {
		doc, err := locationPolicy("wh", "ns/t/", write)
		if err != nil {
			t.Fatal(err)
		}
		p, err := access.ParsePolicy([]byte(doc), access.Identity)
		if err != nil {
			t.Fatalf("the policy does not parse: %v\n%s", err, doc)
		}
		for _, tc := range []struct {
			action, resource, prefix string
			want                     bool
		}{
			{"s3:GetObject", "arn:aws:s3:::wh/ns/t/data/a.parquet", "", true},
			{"s3:PutObject", "arn:aws:s3:::wh/ns/t/data/a.parquet", "", write},
			{"s3:DeleteObject", "arn:aws:s3:::wh/ns/t/metadata/x.avro", "", write},
			{"s3:GetObject", "arn:aws:s3:::wh/ns/t2/data/a.parquet", "", false},
			{"s3:GetObject", "arn:aws:s3:::wh/ns/other", "", false},
			{"s3:GetObject", "arn:aws:s3:::wh2/ns/t/data/a.parquet", "", false},
			{"s3:ListBucket", "arn:aws:s3:::wh", "ns/t/data/", true},
			{"s3:ListBucket", "arn:aws:s3:::wh", "ns/", false},
			{"s3:DeleteBucket", "arn:aws:s3:::wh", "", false},
		} {
			r := &access.Request{Principal: "u", Action: tc.action, Resource: tc.resource, Values: func(k string) ([]string, bool) {
				if k == "s3:prefix" {
					return []string{tc.prefix}, true
				}
				return nil, false
			}}
			if got := p.Eval(r) == access.Allow; got != tc.want {
				t.Errorf("write=%v %s %s prefix %q: allowed %v, want %v", write, tc.action, tc.resource, tc.prefix, got, tc.want)
			}
		}
	}
}
