package iam

import (
	"errors"
	"testing"
)

func TestPolicyEvaluation(t *testing.T) {
	p, err := ParsePolicy([]byte(`{
	  "Version": "2012-10-17",
	  "Statement": [
	    {"Effect": "Allow", "Action": ["s3:Get*", "s3:ListBucket"], "Resource": ["arn:aws:s3:::logs", "arn:aws:s3:::logs/*"]},
	    {"Effect": "Allow", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::logs/in/*"},
	    {"Effect": "Deny", "Action": "s3:*", "Resource": "arn:aws:s3:::logs/secret/*"}
	  ]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		action, resource string
		want             bool
	}{
		{"s3:GetObject", "arn:aws:s3:::logs/a/b.txt", true},
		{"s3:getobject", "arn:aws:s3:::logs/a", true},
		{"s3:ListBucket", "arn:aws:s3:::logs", true},
		{"s3:ListBucket", "arn:aws:s3:::other", false},
		{"s3:PutObject", "arn:aws:s3:::logs/in/x", true},
		{"s3:PutObject", "arn:aws:s3:::logs/out/x", false},
		{"s3:GetObject", "arn:aws:s3:::logs/secret/k", false},
		{"s3:DeleteObject", "arn:aws:s3:::logs/a", false},
		{"s3:GetObject", "arn:aws:s3:::logsx/a", false},
	} {
		if got := p.Allowed(tc.action, tc.resource); got != tc.want {
			t.Errorf("%s on %s: %v, want %v", tc.action, tc.resource, got, tc.want)
		}
	}
}

func TestParsePolicyErrors(t *testing.T) {
	for _, doc := range []string{
		``, `{}`, `{"Statement": []}`,
		`{"Statement": [{"Effect": "Maybe", "Action": "s3:*", "Resource": "*"}]}`,
		`{"Statement": [{"Effect": "Allow", "Action": "ec2:*", "Resource": "*"}]}`,
		`{"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "arn:aws:sqs:::x"}]}`,
		`{"Statement": [{"Effect": "Allow", "Action": "s3:*"}]}`,
		`{"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*", "Condition": {"Maybe": {"k": "v"}}}]}`,
	} {
		if _, err := ParsePolicy([]byte(doc)); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%q: %v, want ErrInvalidPolicy", doc, err)
		}
	}
}

func TestCanned(t *testing.T) {
	for _, tc := range []struct {
		policy, action string
		want           bool
	}{
		{ReadWrite, "s3:DeleteBucket", true},
		{ReadOnly, "s3:GetObject", true},
		{ReadOnly, "s3:PutObject", false},
		{WriteOnly, "s3:PutObject", true},
		{WriteOnly, "s3:GetObject", false},
	} {
		p, ok := Canned(tc.policy)
		if !ok {
			t.Fatalf("no canned %s", tc.policy)
		}
		if got := p.Allowed(tc.action, "arn:aws:s3:::b/k"); got != tc.want {
			t.Errorf("%s %s: %v", tc.policy, tc.action, got)
		}
	}
	if _, ok := Canned("admin"); ok {
		t.Error("unknown canned policy found")
	}
}

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(`{"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}`))
	f.Add([]byte(`{"Statement": [{"Effect": "Deny", "Action": ["s3:Get*"], "Resource": ["arn:aws:s3:::b/[x*"]}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := ParsePolicy(raw)
		if err != nil {
			return
		}
		_ = p.Allowed("s3:GetObject", "arn:aws:s3:::b/k")
	})
}
