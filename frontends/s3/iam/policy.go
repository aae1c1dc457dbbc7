package iam

import (
	"errors"
	"fmt"

	"github.com/cairnstore/cairn/frontends/s3/access"
)

// ErrInvalidPolicy means a policy document is malformed or names an
// action or resource that is not an S3 one.
var ErrInvalidPolicy = errors.New("iam: invalid policy")

// Policy is a user's policy, in the policy language of package access
// (Action/NotAction, Resource/NotResource, Condition; no Principal).
type Policy struct {
	p *access.Policy
}

// ParsePolicy decodes and validates a policy document.
func ParsePolicy(raw []byte) (Policy, error) {
	p, err := access.ParsePolicy(raw, access.Identity)
	if err != nil {
		return Policy{}, fmt.Errorf("%w: %v", ErrInvalidPolicy, err)
	}
	return Policy{p}, nil
}

// Compiled is the policy in the evaluator's form.
func (p Policy) Compiled() *access.Policy { return p.p }

// Allowed reports whether the policy allows action on resource, without
// request context (conditions see no context keys): an explicit Deny
// wins, then any Allow; nothing matching denies.
func (p Policy) Allowed(action, resource string) bool {
	return p.p.Eval(&access.Request{Principal: "user", Action: action, Resource: resource}) == access.Allow
}

// Canned policies.
const (
	ReadWrite = "readwrite"
	ReadOnly  = "readonly"
	WriteOnly = "writeonly"
)

// Canned returns a canned policy by name.
func Canned(name string) (Policy, bool) {
	doc := ""
	switch name {
	case ReadWrite:
		doc = `"s3:*"`
	case ReadOnly:
		doc = `["s3:GetObject","s3:ListBucket","s3:ListAllMyBuckets","s3:ListBucketVersions",
			"s3:GetBucketLocation","s3:GetBucketVersioning","s3:GetLifecycleConfiguration","s3:GetObjectAttributes"]`
	case WriteOnly:
		doc = `["s3:PutObject","s3:AbortMultipartUpload","s3:ListMultipartUploadParts","s3:ListBucketMultipartUploads"]`
	default:
		return Policy{}, false
	}
	p, err := ParsePolicy([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":` + doc + `,"Resource":"arn:aws:s3:::*"}]}`))
	if err != nil {
		panic(err) // a constant document
	}
	return p, true
}
