package iam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// ErrInvalidPolicy means a policy document is malformed or names an
// action or resource that is not an S3 one.
var ErrInvalidPolicy = errors.New("iam: invalid policy")

// Policy is an IAM-style policy document.
type Policy struct {
	Version   string      `json:"Version,omitempty"`
	Statement []Statement `json:"Statement"`
}

// Statement is one Allow or Deny.
type Statement struct {
	Sid      string    `json:"Sid,omitempty"`
	Effect   string    `json:"Effect"`
	Action   stringSet `json:"Action"`
	Resource stringSet `json:"Resource"`
}

// stringSet is an IAM "string or list of strings".
type stringSet []string

func (s *stringSet) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = stringSet{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// ParsePolicy decodes and validates a policy document.
func ParsePolicy(raw []byte) (Policy, error) {
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("%w: %v", ErrInvalidPolicy, err)
	}
	if len(p.Statement) == 0 {
		return Policy{}, fmt.Errorf("%w: no statement", ErrInvalidPolicy)
	}
	for i, st := range p.Statement {
		if st.Effect != "Allow" && st.Effect != "Deny" {
			return Policy{}, fmt.Errorf("%w: statement %d: Effect must be Allow or Deny", ErrInvalidPolicy, i)
		}
		if len(st.Action) == 0 || len(st.Resource) == 0 {
			return Policy{}, fmt.Errorf("%w: statement %d: Action and Resource are required", ErrInvalidPolicy, i)
		}
		for _, a := range st.Action {
			if a != "*" && !strings.HasPrefix(a, "s3:") && !strings.HasPrefix(a, "admin:") {
				return Policy{}, fmt.Errorf("%w: statement %d: action %q is not an s3: or admin: action", ErrInvalidPolicy, i, a)
			}
		}
		for _, r := range st.Resource {
			if r != "*" && !strings.HasPrefix(r, "arn:aws:s3:::") {
				return Policy{}, fmt.Errorf("%w: statement %d: resource %q is not an S3 ARN", ErrInvalidPolicy, i, r)
			}
		}
	}
	return p, nil
}

// Allowed reports whether the policy allows action on resource: an
// explicit Deny wins, then any Allow; nothing matching denies.
func (p Policy) Allowed(action, resource string) bool {
	allowed := false
	for _, st := range p.Statement {
		if !matchAny(st.Action, action) || !matchAny(st.Resource, resource) {
			continue
		}
		if st.Effect == "Deny" {
			return false
		}
		allowed = true
	}
	return allowed
}

func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if match(p, s) {
			return true
		}
	}
	return false
}

// match is IAM wildcard matching: * any run (slashes included), ? one
// character; action names compare case-insensitively.
func match(pattern, s string) bool {
	if strings.HasPrefix(pattern, "s3:") || pattern == "*" {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	// path.Match treats '/' specially; replace it with a byte that cannot
	// occur in either (NUL is invalid in keys and ARNs).
	ok, err := path.Match(strings.ReplaceAll(escapeBrackets(pattern), "/", "\x00"), strings.ReplaceAll(s, "/", "\x00"))
	return err == nil && ok
}

// escapeBrackets keeps path.Match from reading [ and \ as syntax.
func escapeBrackets(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `[`, `\[`)
	return r.Replace(p)
}

// Canned policies.
const (
	ReadWrite = "readwrite"
	ReadOnly  = "readonly"
	WriteOnly = "writeonly"
)

// Canned returns a canned policy by name.
func Canned(name string) (Policy, bool) {
	all := func(actions ...string) Policy {
		return Policy{Version: "2012-10-17", Statement: []Statement{{Effect: "Allow", Action: actions, Resource: stringSet{"arn:aws:s3:::*"}}}}
	}
	switch name {
	case ReadWrite:
		return all("s3:*"), true
	case ReadOnly:
		return all("s3:GetObject", "s3:ListBucket", "s3:ListAllMyBuckets", "s3:ListBucketVersions",
			"s3:GetBucketLocation", "s3:GetBucketVersioning", "s3:GetLifecycleConfiguration", "s3:GetObjectAttributes"), true
	case WriteOnly:
		return all("s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts", "s3:ListBucketMultipartUploads"), true
	}
	return Policy{}, false
}
