package postform

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Condition operators.
const (
	OpEq          = "eq"
	OpStartsWith  = "starts-with"
	OpLengthRange = "content-length-range"
)

// maxPolicy bounds a decoded policy document.
const maxPolicy = 64 << 10

// Condition is one entry of a policy's condition list.
type Condition struct {
	Op    string // OpEq, OpStartsWith or OpLengthRange
	Field string // the form field, lower-case, without '$' (not for OpLengthRange)
	Value string // what eq compares to, the prefix of starts-with
	// Min and Max bound the file size, for OpLengthRange.
	Min, Max int64
	raw      string // the condition as written, for messages
}

// Policy is a POST policy document.
type Policy struct {
	Expiration time.Time
	Conditions []Condition
}

// ParsePolicy decodes the policy field: base64 of a JSON document with an
// "expiration" (ISO 8601, UTC) and a "conditions" list. Its top-level
// names are case-sensitive; condition field names and operators are not.
func ParsePolicy(b64 string) (Policy, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return Policy{}, fmt.Errorf("%w: Invalid Policy: Invalid Base64 Encoding", ErrInvalidPolicy)
	}
	if len(raw) > maxPolicy {
		return Policy{}, fmt.Errorf("%w: Invalid Policy: the document is larger than %d bytes", ErrInvalidPolicy, maxPolicy)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Policy{}, fmt.Errorf("%w: Invalid Policy: Invalid JSON", ErrInvalidPolicy)
	}
	var p Policy
	exp, ok := doc["expiration"]
	if !ok {
		return Policy{}, fmt.Errorf("%w: Invalid Policy: Policy missing expiration", ErrInvalidPolicy)
	}
	var es string
	if err := json.Unmarshal(exp, &es); err != nil {
		return Policy{}, fmt.Errorf("%w: Invalid Policy: Invalid 'expiration' value: not a string", ErrInvalidPolicy)
	}
	if p.Expiration, err = time.Parse(time.RFC3339Nano, es); err != nil {
		return Policy{}, fmt.Errorf("%w: Invalid Policy: Invalid 'expiration' value: '%s'", ErrInvalidPolicy, clip(es))
	}
	conds, ok := doc["conditions"]
	if !ok {
		return Policy{}, fmt.Errorf("%w: Invalid Policy: Policy missing conditions", ErrInvalidPolicy)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(conds, &list); err != nil {
		return Policy{}, fmt.Errorf("%w: Invalid Policy: the conditions are not a list", ErrInvalidPolicy)
	}
	for _, c := range list {
		cond, err := parseCondition(c)
		if err != nil {
			return Policy{}, err
		}
		p.Conditions = append(p.Conditions, cond)
	}
	return p, nil
}

func parseCondition(raw json.RawMessage) (Condition, error) {
	text := clip(string(bytes.TrimSpace(raw)))
	bad := func(why string) error {
		return fmt.Errorf("%w: Invalid Policy: Invalid Condition %s: %s", ErrInvalidPolicy, text, why)
	}
	switch t := bytes.TrimSpace(raw); {
	case len(t) > 0 && t[0] == '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(t, &m); err != nil {
			return Condition{}, bad("not a JSON object")
		}
		if len(m) != 1 {
			return Condition{}, bad("an object condition names exactly one field")
		}
		for k, v := range m {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return Condition{}, bad("the value is not a string")
			}
			return Condition{Op: OpEq, Field: strings.ToLower(k), Value: s, raw: text}, nil
		}
	case len(t) > 0 && t[0] == '[':
		var a []json.RawMessage
		if err := json.Unmarshal(t, &a); err != nil {
			return Condition{}, bad("not a JSON list")
		}
		if len(a) != 3 {
			return Condition{}, bad("a list condition has three elements")
		}
		var op string
		if err := json.Unmarshal(a[0], &op); err != nil {
			return Condition{}, bad("the operator is not a string")
		}
		switch op = strings.ToLower(op); op {
		case OpEq, OpStartsWith:
			var field, value string
			if err := json.Unmarshal(a[1], &field); err != nil || !strings.HasPrefix(field, "$") || len(field) < 2 {
				return Condition{}, bad("the field is not a string starting with $")
			}
			if err := json.Unmarshal(a[2], &value); err != nil {
				return Condition{}, bad("the value is not a string")
			}
			return Condition{Op: op, Field: strings.ToLower(field[1:]), Value: value, raw: text}, nil
		case OpLengthRange:
			lo, err1 := jsonInt(a[1])
			hi, err2 := jsonInt(a[2])
			if err1 != nil || err2 != nil || lo < 0 || hi < lo {
				return Condition{}, bad("content-length-range takes two integers, 0 <= min <= max")
			}
			return Condition{Op: OpLengthRange, Min: lo, Max: hi, raw: text}, nil
		default:
			return Condition{}, bad("unknown operator")
		}
	}
	return Condition{}, bad("a condition is an object or a list")
}

// jsonInt reads a JSON integer, or a string holding one (S3 takes both).
func jsonInt(raw json.RawMessage) (int64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, err
	}
	return n.Int64()
}

// Exempt says whether a form field needs no condition: the file, the
// policy and the signature fields themselves, and x-ignore-* fields.
func Exempt(field string) bool {
	switch field {
	case "file", "policy", "x-amz-signature", "signature", "awsaccesskeyid":
		return true
	}
	return strings.HasPrefix(field, "x-ignore-")
}

// Check applies the policy to the form's fields (lower-case names; the
// caller adds the bucket, which S3 checks as if it were a field, and
// gives the key with ${filename} already substituted) at time now: the
// policy has not expired, every condition holds (an absent field is
// empty), and every field but the exempt ones is named by a condition.
// The file size is checked by the caller against LengthRange.
func (p Policy) Check(fields map[string]string, now time.Time) error {
	if !now.Before(p.Expiration) {
		return fmt.Errorf("%w: Invalid according to Policy: Policy expired", ErrPolicyDenied)
	}
	covered := map[string]bool{}
	for _, c := range p.Conditions {
		if c.Op == OpLengthRange {
			continue
		}
		covered[c.Field] = true
		v := fields[c.Field]
		ok := v == c.Value
		if c.Op == OpStartsWith {
			ok = strings.HasPrefix(v, c.Value)
		}
		if !ok {
			return fmt.Errorf("%w: Invalid according to Policy: Policy Condition failed: %s", ErrPolicyDenied, c.raw)
		}
	}
	var extra []string
	for name := range fields {
		if !covered[name] && !Exempt(name) {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("%w: Invalid according to Policy: Extra input fields: %s", ErrPolicyDenied, clip(strings.Join(extra, ", ")))
	}
	return nil
}

// LengthRange is the file size range the policy allows (the last
// content-length-range condition); ok is false when it sets none.
func (p Policy) LengthRange() (lo, hi int64, ok bool) {
	for _, c := range p.Conditions {
		if c.Op == OpLengthRange {
			lo, hi, ok = c.Min, c.Max, true
		}
	}
	return lo, hi, ok
}
