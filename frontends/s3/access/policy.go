package access

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// AccountID is the one account every Cairn user belongs to.
const AccountID = "000000000000"

// UserARN is the IAM ARN of a user (access key); RootARN the account's.
func UserARN(accessKey string) string { return "arn:aws:iam::" + AccountID + ":user/" + accessKey }

// RootARN is the ARN of the account (its root user).
const RootARN = "arn:aws:iam::" + AccountID + ":root"

// ErrMalformed means a policy document is not valid.
var ErrMalformed = errors.New("access: malformed policy")

// Kind says which policy language a document is in.
type Kind int

const (
	// Identity is a user's policy: no Principal.
	Identity Kind = iota
	// Resource is a bucket policy: every statement names a Principal or
	// NotPrincipal.
	Resource
	// Tables is an S3 Tables resource policy (a table bucket's or a
	// table's): every statement names a Principal or NotPrincipal, its
	// actions are s3tables: ones and its resources S3 Tables ARNs
	// (arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME[/table/ID]).
	Tables
)

// Effect is a policy's answer for one request.
type Effect int8

const (
	None  Effect = iota // no statement matches
	Allow               // an Allow matches and no Deny
	Deny                // a Deny matches
)

// Policy is a parsed policy document.
type Policy struct {
	Version    string
	ID         string
	Statements []Statement
}

// Statement is one compiled statement.
type Statement struct {
	Sid          string
	Deny         bool
	Principal    *Principals // nil: absent
	NotPrincipal *Principals
	Action       []pattern // lower-cased
	NotAction    []pattern
	Resource     []pattern
	NotResource  []pattern
	Conditions   []Condition
}

// Principals are a statement's Principal element.
type Principals struct {
	Any       bool     // "*" or {"AWS": "*"}
	AWS       []string // ARNs or account IDs
	Canonical []string // canonical IDs (access keys)
	Service   []string // kept, never matched

	users   []pattern // AWS user ARNs, compiled
	account bool      // AWS names the account
}

// ParsePolicy decodes and validates a policy document of kind k. Unknown
// fields, a missing Effect, Action or Resource, a Principal where it has
// no place (or none where one is needed), unknown condition operators and
// actions outside s3: (and admin: in identity policies; s3tables: alone
// in Tables policies) are ErrMalformed.
func ParsePolicy(raw []byte, k Kind) (*Policy, error) {
	var doc struct {
		Version   string          `json:"Version"`
		ID        string          `json:"Id"`
		Statement json.RawMessage `json:"Statement"`
	}
	if err := strictDecode(raw, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	switch doc.Version {
	case "", "2012-10-17", "2008-10-17":
	default:
		return nil, fmt.Errorf("%w: Version %q is not 2012-10-17 or 2008-10-17", ErrMalformed, doc.Version)
	}
	var raws []json.RawMessage
	if st := bytes.TrimSpace(doc.Statement); len(st) > 0 && st[0] == '{' {
		raws = []json.RawMessage{st}
	} else if err := json.Unmarshal(doc.Statement, &raws); err != nil {
		return nil, fmt.Errorf("%w: Statement: %v", ErrMalformed, err)
	}
	if len(raws) == 0 {
		return nil, fmt.Errorf("%w: no statement", ErrMalformed)
	}
	p := &Policy{Version: doc.Version, ID: doc.ID}
	sids := map[string]bool{}
	for i, r := range raws {
		st, err := parseStatement(r, k)
		if err != nil {
			return nil, fmt.Errorf("%w: statement %d: %v", ErrMalformed, i, err)
		}
		if st.Sid != "" {
			if sids[st.Sid] {
				return nil, fmt.Errorf("%w: statement %d: duplicate Sid %q", ErrMalformed, i, st.Sid)
			}
			sids[st.Sid] = true
		}
		p.Statements = append(p.Statements, st)
	}
	return p, nil
}

func strictDecode(raw []byte, v any) error {
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

func parseStatement(raw []byte, k Kind) (Statement, error) {
	var in struct {
		Sid          string                                `json:"Sid"`
		Effect       string                                `json:"Effect"`
		Principal    json.RawMessage                       `json:"Principal"`
		NotPrincipal json.RawMessage                       `json:"NotPrincipal"`
		Action       stringSet                             `json:"Action"`
		NotAction    stringSet                             `json:"NotAction"`
		Resource     stringSet                             `json:"Resource"`
		NotResource  stringSet                             `json:"NotResource"`
		Condition    map[string]map[string]json.RawMessage `json:"Condition"`
	}
	if err := strictDecode(raw, &in); err != nil {
		return Statement{}, err
	}
	st := Statement{Sid: in.Sid}
	switch in.Effect {
	case "Allow":
	case "Deny":
		st.Deny = true
	default:
		return st, errors.New("Effect must be Allow or Deny")
	}
	hasP, hasNP := in.Principal != nil, in.NotPrincipal != nil
	switch {
	case k == Identity && (hasP || hasNP):
		return st, errors.New("a user policy has no Principal")
	case k != Identity && hasP == hasNP:
		return st, errors.New("exactly one of Principal and NotPrincipal is required")
	case hasP:
		p, err := parsePrincipals(in.Principal)
		if err != nil {
			return st, err
		}
		st.Principal = p
	case hasNP && !st.Deny:
		// IAM: "NotPrincipal must be used with "Effect":"Deny". Using
		// it with "Effect":"Allow" is not supported."
		return st, errors.New("NotPrincipal must be used with Effect Deny")
	case hasNP:
		p, err := parsePrincipals(in.NotPrincipal)
		if err != nil {
			return st, err
		}
		st.NotPrincipal = p
	}
	if (in.Action != nil) == (in.NotAction != nil) {
		return st, errors.New("exactly one of Action and NotAction is required")
	}
	if (in.Resource != nil) == (in.NotResource != nil) {
		return st, errors.New("exactly one of Resource and NotResource is required")
	}
	var err error
	if st.Action, err = actions(in.Action, k); err != nil {
		return st, err
	}
	if st.NotAction, err = actions(in.NotAction, k); err != nil {
		return st, err
	}
	if st.Resource, err = resources(in.Resource, k); err != nil {
		return st, err
	}
	if st.NotResource, err = resources(in.NotResource, k); err != nil {
		return st, err
	}
	for op, keys := range in.Condition {
		for key, vals := range keys {
			c, err := parseCondition(op, key, vals)
			if err != nil {
				return st, err
			}
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st, nil
}

func actions(in stringSet, k Kind) ([]pattern, error) {
	if in == nil {
		return nil, nil
	}
	if len(in) == 0 {
		return nil, errors.New("empty Action")
	}
	out := make([]pattern, 0, len(in))
	for _, a := range in {
		la := strings.ToLower(a)
		if k == Tables {
			if la != "*" && !strings.HasPrefix(la, "s3tables:") || len(la) > 256 {
				return nil, fmt.Errorf("action %q is not an s3tables: action", a)
			}
			out = append(out, compile(la))
			continue
		}
		ok := la == "*" || strings.HasPrefix(la, "s3:") ||
			k == Identity && (strings.HasPrefix(la, "admin:") || strings.HasPrefix(la, "iam:"))
		if !ok || len(la) > 256 {
			return nil, fmt.Errorf("action %q is not an s3: action", a)
		}
		out = append(out, compile(la))
	}
	return out, nil
}

// resources compiles Resource or NotResource: S3 ARNs, and in a user's
// policy IAM ones too (the user-policy API's own actions name users); S3
// Tables ARNs alone in a Tables policy.
func resources(in stringSet, k Kind) ([]pattern, error) {
	if in == nil {
		return nil, nil
	}
	if len(in) == 0 {
		return nil, errors.New("empty Resource")
	}
	out := make([]pattern, 0, len(in))
	for _, r := range in {
		if k == Tables {
			if r != "*" && !strings.HasPrefix(r, "arn:aws:s3tables:") {
				return nil, fmt.Errorf("resource %q is not an S3 Tables ARN", r)
			}
			out = append(out, compile(r))
			continue
		}
		if r != "*" && !strings.HasPrefix(r, "arn:aws:s3:::") && (k != Identity || !strings.HasPrefix(r, "arn:aws:iam::")) {
			return nil, fmt.Errorf("resource %q is not an S3 ARN", r)
		}
		out = append(out, compile(r))
	}
	return out, nil
}

func parsePrincipals(raw json.RawMessage) (*Principals, error) {
	var star string
	if err := json.Unmarshal(raw, &star); err == nil {
		if star != "*" {
			return nil, fmt.Errorf("principal %q: want \"*\" or an object", star)
		}
		return &Principals{Any: true}, nil
	}
	var m map[string]stringSet
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("principal: %v", err)
	}
	if len(m) == 0 {
		return nil, errors.New("empty Principal")
	}
	p := &Principals{}
	for typ, vals := range m {
		switch typ {
		case "AWS":
			for _, v := range vals {
				if v == "*" {
					p.Any = true
					continue
				}
				if v != AccountID && !strings.HasPrefix(v, "arn:aws:iam::") {
					return nil, fmt.Errorf("invalid principal %q", v)
				}
				p.AWS = append(p.AWS, v)
				if v == AccountID || v == RootARN {
					p.account = true
				} else {
					// An ARN without account (arn:aws:iam:::user/x, as
					// single-account servers such as RGW write) is ours.
					if rest, ok := strings.CutPrefix(v, "arn:aws:iam:::"); ok {
						v = "arn:aws:iam::" + AccountID + ":" + rest
					}
					p.users = append(p.users, compile(v))
				}
			}
		case "CanonicalUser":
			p.Canonical = append(p.Canonical, vals...)
		case "Service", "Federated":
			p.Service = append(p.Service, vals...)
		default:
			return nil, fmt.Errorf("unknown principal type %q", typ)
		}
	}
	return p, nil
}

// matches reports whether the principals name the request's caller.
func (p *Principals) matches(r *Request) bool {
	if p.Any {
		return true
	}
	if r.Anonymous() {
		return false
	}
	if p.account {
		return true // the account: every one of its principals
	}
	if !r.Root && len(p.users) > 0 && matchAny(p.users, r.userARN()) {
		return true
	}
	for _, c := range p.Canonical {
		if c == r.Principal {
			return true
		}
	}
	return false
}

// public reports whether the principals include everyone.
func (p *Principals) public() bool { return p != nil && p.Any }

// stringSet is a policy's "string or list of strings".
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
	if many == nil {
		many = []string{}
	}
	*s = many
	return nil
}

// Eval is the policy's effect for the request: Deny when a matching
// statement denies, Allow when one allows, else None.
func (p *Policy) Eval(r *Request) Effect {
	if p == nil {
		return None
	}
	eff := None
	for i := range p.Statements {
		st := &p.Statements[i]
		if eff == Allow && !st.Deny {
			continue // another Allow changes nothing
		}
		if !st.applies(r) {
			continue
		}
		if st.Deny {
			return Deny
		}
		eff = Allow
	}
	return eff
}

func (st *Statement) applies(r *Request) bool {
	if st.Principal != nil && !st.Principal.matches(r) {
		return false
	}
	if st.NotPrincipal != nil && st.NotPrincipal.matches(r) {
		return false
	}
	act := r.action()
	if st.Action != nil && !matchAny(st.Action, act) {
		return false
	}
	if st.NotAction != nil && matchAny(st.NotAction, act) {
		return false
	}
	if st.Resource != nil && !matchAny(st.Resource, r.Resource) {
		return false
	}
	if st.NotResource != nil && matchAny(st.NotResource, r.Resource) {
		return false
	}
	for i := range st.Conditions {
		if !st.Conditions[i].eval(r) {
			return false
		}
	}
	return true
}

// Within reports whether every Resource of the policy can name bucket or
// one of its objects (AWS refuses a bucket policy with one that cannot:
// "Policy has invalid resource"). A wildcard counts when some name of the
// bucket or its objects matches it: "*", "arn:aws:s3:::*" and
// "arn:aws:s3:::*/*" are within every bucket, as AWS has them.
func (p *Policy) Within(bucket string) bool {
	arn := "arn:aws:s3:::" + bucket
	ok := func(ps []pattern) bool {
		for _, r := range ps {
			if !r.match(arn) && !extends(r.s, arn+"/") {
				return false
			}
		}
		return true
	}
	for _, st := range p.Statements {
		if !ok(st.Resource) || !ok(st.NotResource) {
			return false
		}
	}
	return true
}

// Public reports whether the policy grants access to everyone, as AWS
// defines it for a bucket policy: an Allow with Principal "*" (or a
// NotPrincipal) not narrowed by a condition on a fixed value of
// aws:SourceIp (a /8 or narrower block), aws:SourceArn, aws:SourceVpc,
// aws:SourceVpce, aws:SourceAccount, aws:SourceOwner, aws:PrincipalOrgID,
// aws:PrincipalAccount, aws:PrincipalArn, aws:userid or s3:DataAccessPointArn.
func (p *Policy) Public() bool {
	if p == nil {
		return false
	}
	for _, st := range p.Statements {
		if st.Deny || (!st.Principal.public() && st.NotPrincipal == nil) {
			continue
		}
		narrowed := false
		for _, c := range st.Conditions {
			if c.narrows() {
				narrowed = true
				break
			}
		}
		if !narrowed {
			return true
		}
	}
	return false
}
