package catalog

import (
	"errors"
	"testing"
)

// FuzzPolicyDocument: the resource policy checks never panic, fail only
// with ErrBadRequest, and take nothing larger than MaxPolicySize.
func FuzzPolicyDocument(f *testing.F) {
	for _, s := range []string{
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable","Resource":"arn:aws:s3tables:us-east-1:000000000000:bucket/lake"}]}`,
		`{"Statement":{"Sid":"x","Effect":"Deny","NotPrincipal":{"AWS":["000000000000"]},"NotAction":["s3tables:Get*"],"NotResource":"*","Condition":{"StringEquals":{"s3tables:namespace":"a"}}}}`,
		`{"Statement":[{"Effect":"Allow","Principal":{"CanonicalUser":"a"},"Action":"*","Resource":"arn:aws:s3tables:*:*:bucket/lake/table/*"}]}`,
		`{"Statement":[]}`, `{`, `null`, `[]`, ``, `{"Statement":[null]}`, `{"Statement":[{"Principal":{"AWS":[]}}]}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, doc []byte, table bool) {
		target := policyARN{Partition: "aws", Region: "us-east-1", Account: "000000000000", Bucket: "bucket/lake"}
		if table {
			target.Table = "table/t1"
		}
		err := checkPolicyDocument(doc, target)
		if err != nil && !errors.Is(err, ErrBadRequest) {
			t.Fatalf("error without ErrBadRequest: %v", err)
		}
		if err == nil && len(doc) > MaxPolicySize {
			t.Fatalf("a document of %d bytes was taken", len(doc))
		}
	})
}
