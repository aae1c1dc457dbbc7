package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The checks of a resource policy document when it is put: the shape of
// the IAM policy language as S3 Tables takes it, its s3tables: actions,
// and resources that name the table bucket or table it is put on. What
// the shape leaves open (condition operators and their values) is
// Options.PolicyCheck's to refuse.
//
// A resource is "*" or an ARN of the resource's own partition, service
// s3tables, its region and account (either may be "*"), and:
//
//   - in a table bucket's policy: bucket/NAME (the bucket), bucket/NAME/*
//     or bucket/NAME/table/ID (one or, with wildcards in ID, several of
//     its tables);
//   - in a table's policy: bucket/NAME/table/ID (the table) or
//     bucket/NAME/table/*.

// policyDoc is a policy document's top level.
type policyDoc struct {
	Version   string          `json:"Version"`
	ID        string          `json:"Id"`
	Statement json.RawMessage `json:"Statement"`
}

// policyStatement is one statement; the elements that may be a string or
// a list stay raw until checked.
type policyStatement struct {
	Sid          string          `json:"Sid"`
	Effect       string          `json:"Effect"`
	Principal    json.RawMessage `json:"Principal"`
	NotPrincipal json.RawMessage `json:"NotPrincipal"`
	Action       json.RawMessage `json:"Action"`
	NotAction    json.RawMessage `json:"NotAction"`
	Resource     json.RawMessage `json:"Resource"`
	NotResource  json.RawMessage `json:"NotResource"`
	Condition    json.RawMessage `json:"Condition"`
}

// malformed is the error of a policy document that is not valid.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: malformed resource policy: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

// checkPolicy validates doc as the resource policy of the warehouse's
// table bucket (id nil) or of table id, whose ARN is arn. Errors wrap
// ErrBadRequest.
func (s *Service) checkPolicy(wh string, id *Ident, arn, doc string) error {
	if id != nil {
		if err := validIdent(*id); err != nil {
			return err
		}
	}
	target, err := parsePolicyARN(arn, wh, id)
	if err != nil {
		return err
	}
	if err := checkPolicyDocument([]byte(doc), target); err != nil {
		return err
	}
	if s.opt.PolicyCheck != nil {
		if err := s.opt.PolicyCheck([]byte(doc)); err != nil {
			return malformed("%v", err)
		}
	}
	return nil
}

// policyARN is the ARN of the table bucket or table a resource policy is
// put on, split into the fields its resources are checked against.
type policyARN struct {
	Partition, Region, Account string
	// Bucket is "bucket/NAME"; Table is "table/ID" for a table, else "".
	Bucket, Table string
}

// parsePolicyARN checks that arn names warehouse wh (and a table when id
// is set): arn:PARTITION:s3tables:REGION:ACCOUNT:bucket/NAME[/table/ID].
func parsePolicyARN(arn, wh string, id *Ident) (policyARN, error) {
	f := strings.SplitN(arn, ":", 6)
	if len(f) != 6 || f[0] != "arn" || f[1] == "" || f[2] != "s3tables" {
		return policyARN{}, fmt.Errorf("%w: %q is not an S3 Tables ARN", ErrBadRequest, arn)
	}
	a := policyARN{Partition: f[1], Region: f[3], Account: f[4], Bucket: "bucket/" + wh}
	rest, ok := strings.CutPrefix(f[5], a.Bucket)
	switch {
	case !ok:
		return policyARN{}, fmt.Errorf("%w: ARN %q does not name table bucket %s", ErrBadRequest, arn, wh)
	case id == nil && rest != "":
		return policyARN{}, fmt.Errorf("%w: ARN %q is not a table bucket's", ErrBadRequest, arn)
	case id != nil:
		tid, ok := strings.CutPrefix(rest, "/table/")
		if !ok || tid == "" || strings.ContainsAny(tid, "/*?") {
			return policyARN{}, fmt.Errorf("%w: ARN %q is not a table's", ErrBadRequest, arn)
		}
		a.Table = "table/" + tid
	}
	return a, nil
}

// checkPolicyDocument validates doc as the resource policy of target (see
// the rules above). Errors wrap ErrBadRequest and say what is wrong.
func checkPolicyDocument(doc []byte, target policyARN) error {
	switch {
	case len(bytes.TrimSpace(doc)) == 0:
		return malformed("the document is empty")
	case len(doc) > MaxPolicySize:
		return malformed("the document is %d bytes; at most %d", len(doc), MaxPolicySize)
	}
	var d policyDoc
	if err := strictJSON(doc, &d); err != nil {
		return malformed("%v", err)
	}
	switch d.Version {
	case "", "2012-10-17", "2008-10-17":
	default:
		return malformed("Version %q: give 2012-10-17", d.Version)
	}
	var raws []json.RawMessage
	st := bytes.TrimSpace(d.Statement)
	switch {
	case len(st) == 0 || string(st) == "null":
		return malformed("no Statement")
	case st[0] == '{':
		raws = []json.RawMessage{st}
	default:
		if err := json.Unmarshal(st, &raws); err != nil {
			return malformed("Statement is neither a statement nor a list of them")
		}
	}
	if len(raws) == 0 {
		return malformed("no Statement")
	}
	sids := map[string]bool{}
	for i, raw := range raws {
		var st policyStatement
		if err := strictJSON(raw, &st); err != nil {
			return malformed("statement %d: %v", i, err)
		}
		if err := checkStatement(st, target); err != nil {
			return malformed("statement %d: %v", i, err)
		}
		if st.Sid != "" {
			if sids[st.Sid] {
				return malformed("statement %d: Sid %q is used twice", i, st.Sid)
			}
			sids[st.Sid] = true
		}
	}
	return nil
}

// strictJSON decodes one JSON object into v, refusing unknown fields and
// anything after it.
func strictJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the document")
	}
	return nil
}

// checkStatement checks one statement's elements.
func checkStatement(st policyStatement, target policyARN) error {
	if st.Effect != "Allow" && st.Effect != "Deny" {
		return fmt.Errorf("the Effect %q is neither Allow nor Deny", st.Effect)
	}
	hasP, hasNP := st.Principal != nil, st.NotPrincipal != nil
	switch {
	case hasP == hasNP:
		return errors.New("give exactly one of Principal and NotPrincipal")
	case hasNP && st.Effect == "Allow":
		return errors.New("NotPrincipal goes with Effect Deny only")
	case hasP:
		if err := checkPrincipal(st.Principal); err != nil {
			return err
		}
	default:
		if err := checkPrincipal(st.NotPrincipal); err != nil {
			return err
		}
	}
	if (st.Action != nil) == (st.NotAction != nil) {
		return errors.New("give exactly one of Action and NotAction")
	}
	actions, err := stringOrList("the Action", orRaw(st.Action, st.NotAction))
	if err != nil {
		return err
	}
	for _, a := range actions {
		if a != "*" && !strings.HasPrefix(strings.ToLower(a), "s3tables:") {
			return fmt.Errorf("action %q is not an S3 Tables action (s3tables:...)", a)
		}
	}
	if (st.Resource != nil) == (st.NotResource != nil) {
		return errors.New("give exactly one of Resource and NotResource")
	}
	resources, err := stringOrList("the Resource", orRaw(st.Resource, st.NotResource))
	if err != nil {
		return err
	}
	for _, r := range resources {
		if !target.names(r) {
			return fmt.Errorf("invalid resource %q (it is not this %s): name %s", r, target.kind(), target.forms())
		}
	}
	if st.Condition != nil {
		var c map[string]map[string]json.RawMessage
		if err := json.Unmarshal(st.Condition, &c); err != nil {
			return errors.New(`the Condition is not {"Operator": {"key": value}}`)
		}
	}
	return nil
}

func orRaw(a, b json.RawMessage) json.RawMessage {
	if a != nil {
		return a
	}
	return b
}

// checkPrincipal checks a Principal or NotPrincipal: "*", or an object
// of principal types (AWS: "*", the account or user ARNs; CanonicalUser:
// access keys; Service, Federated) each with a string or a list.
func checkPrincipal(raw json.RawMessage) error {
	var star string
	if json.Unmarshal(raw, &star) == nil {
		if star != "*" {
			return fmt.Errorf(`the Principal %q is neither "*" nor {"AWS": ...}`, star)
		}
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) == 0 {
		return errors.New(`the Principal is neither "*" nor an object of principals`)
	}
	for typ, v := range m {
		names, err := stringOrList("the Principal's "+typ, v)
		if err != nil {
			return err
		}
		switch typ {
		case "AWS":
			for _, n := range names {
				if n != "*" && !strings.HasPrefix(n, "arn:aws:iam::") && !isAccountID(n) {
					return fmt.Errorf("principal %q: give \"*\", an account id or an arn:aws:iam:: ARN", n)
				}
			}
		case "CanonicalUser", "Service", "Federated":
		default:
			return fmt.Errorf("unknown principal type %q: give AWS or CanonicalUser", typ)
		}
	}
	return nil
}

// isAccountID says whether s is a 12-digit account id.
func isAccountID(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// stringOrList decodes an element that is a string or a non-empty list
// of non-empty strings.
func stringOrList(name string, raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, fmt.Errorf("%s is empty", name)
		}
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%s is neither a string nor a list of strings", name)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s is an empty list", name)
	}
	for _, s := range list {
		if s == "" {
			return nil, fmt.Errorf("%s holds an empty string", name)
		}
	}
	return list, nil
}

// names says whether resource r may stand in a policy of a.
func (a policyARN) names(r string) bool {
	if r == "*" {
		return true
	}
	f := strings.SplitN(r, ":", 6)
	if len(f) != 6 || f[0] != "arn" || f[1] != a.Partition || f[2] != "s3tables" ||
		f[3] != a.Region && f[3] != "*" || f[4] != a.Account && f[4] != "*" {
		return false
	}
	res := f[5]
	if a.Table != "" {
		return res == a.Bucket+"/"+a.Table || res == a.Bucket+"/table/*"
	}
	if res == a.Bucket || res == a.Bucket+"/*" {
		return true
	}
	id, ok := strings.CutPrefix(res, a.Bucket+"/table/")
	return ok && id != "" && !strings.Contains(id, "/")
}

// kind names what a policy of a is on.
func (a policyARN) kind() string {
	if a.Table != "" {
		return "table"
	}
	return "table bucket"
}

// forms says which resources a policy of a may name, for messages.
func (a policyARN) forms() string {
	arn := "arn:" + a.Partition + ":s3tables:" + a.Region + ":" + a.Account + ":" + a.Bucket
	if a.Table != "" {
		return arn + "/" + a.Table + " (this table)"
	}
	return arn + " (this table bucket) or " + arn + "/table/* (its tables)"
}
