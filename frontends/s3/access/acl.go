package access

import (
	"errors"
	"fmt"
	"strings"
)

// Perm is a set of ACL permissions.
type Perm uint8

// The ACL permissions; FullControl is all four.
const (
	Read        Perm = 1
	Write       Perm = 2
	ReadACP     Perm = 4
	WriteACP    Perm = 8
	FullControl Perm = Read | Write | ReadACP | WriteACP
)

// PermNames are the S3 names of the permissions, FULL_CONTROL first.
var permNames = []struct {
	p    Perm
	name string
}{{FullControl, "FULL_CONTROL"}, {Read, "READ"}, {Write, "WRITE"}, {ReadACP, "READ_ACP"}, {WriteACP, "WRITE_ACP"}}

// ParsePerm reads an S3 permission name.
func ParsePerm(s string) (Perm, bool) {
	for _, n := range permNames {
		if n.name == s {
			return n.p, true
		}
	}
	return 0, false
}

// Names are the S3 names of p: FULL_CONTROL alone when p is all four.
func (p Perm) Names() []string {
	if p == FullControl {
		return []string{"FULL_CONTROL"}
	}
	var out []string
	for _, n := range permNames[1:] {
		if p&n.p != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// The groups a grant can name.
const (
	AllUsers           = "http://acs.amazonaws.com/groups/global/AllUsers"
	AuthenticatedUsers = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
	LogDelivery        = "http://acs.amazonaws.com/groups/s3/LogDelivery"
)

var groupCodes = map[string]string{AllUsers: "all", AuthenticatedUsers: "auth", LogDelivery: "log"}

// Grant gives Perm to a canonical user (ID, an access key) or to a group
// (Group, one of the group URIs).
type Grant struct {
	ID    string
	Group string
	Perm  Perm
}

// Public reports whether the grant is to AllUsers or AuthenticatedUsers.
func (g Grant) Public() bool { return g.Group == AllUsers || g.Group == AuthenticatedUsers }

// ACL is the grants of a bucket or an object; the owner is kept by the
// store (BucketInfo.Owner, Attrs.Owner), not here.
type ACL struct {
	Grants []Grant
}

// Default is the ACL of a resource no ACL was given: the owner's full
// control.
func Default(owner string) ACL { return ACL{Grants: []Grant{{ID: owner, Perm: FullControl}}} }

// ErrUnknownCanned is a canned ACL name S3 does not define.
var ErrUnknownCanned = errors.New("access: unknown canned ACL")

// Canned builds a canned ACL for a resource owned by owner in a bucket
// owned by bucketOwner.
func Canned(name, owner, bucketOwner string) (ACL, error) {
	a := Default(owner)
	add := func(g Grant) { a.Grants = append(a.Grants, g) }
	switch name {
	case "private", "aws-exec-read":
		// aws-exec-read's extra grant is to EC2, which is not here.
	case "public-read":
		add(Grant{Group: AllUsers, Perm: Read})
	case "public-read-write":
		add(Grant{Group: AllUsers, Perm: Read})
		add(Grant{Group: AllUsers, Perm: Write})
	case "authenticated-read":
		add(Grant{Group: AuthenticatedUsers, Perm: Read})
	case "bucket-owner-read":
		if bucketOwner != owner {
			add(Grant{ID: bucketOwner, Perm: Read})
		}
	case "bucket-owner-full-control":
		if bucketOwner != owner {
			add(Grant{ID: bucketOwner, Perm: FullControl})
		}
	case "log-delivery-write":
		add(Grant{Group: LogDelivery, Perm: Write})
		add(Grant{Group: LogDelivery, Perm: ReadACP})
	default:
		return ACL{}, fmt.Errorf("%w: %q", ErrUnknownCanned, name)
	}
	return a, nil
}

// Public reports whether any grant is public.
func (a ACL) Public() bool {
	for _, g := range a.Grants {
		if g.Public() {
			return true
		}
	}
	return false
}

// Perms are the permissions the ACL gives the request's caller; public
// grants count only when ignorePublic is false. The owner always has
// READ_ACP and WRITE_ACP.
func (a ACL) Perms(r *Request, owner string, ignorePublic bool) Perm {
	var p Perm
	anon := r.Anonymous()
	if !anon && r.Principal == owner {
		p |= ReadACP | WriteACP
	}
	for _, g := range a.Grants {
		switch {
		case g.ID != "":
			if !anon && g.ID == r.Principal {
				p |= g.Perm
			}
		case ignorePublic && g.Public():
		case g.Group == AllUsers, g.Group == AuthenticatedUsers && !anon:
			p |= g.Perm
		}
	}
	return p
}

// EncodeGrants is the ACL's stored form: one grant a line, "u" or "g",
// one hex digit of permissions, then the canonical ID or group code
// ("all", "auth", "log"). The default ACL of owner encodes as "".
func EncodeGrants(a ACL, owner string) string {
	if len(a.Grants) == 1 && a.Grants[0].ID == owner && a.Grants[0].Perm == FullControl {
		return ""
	}
	var b strings.Builder
	for i, g := range a.Grants {
		if i > 0 {
			b.WriteByte('\n')
		}
		if g.ID != "" {
			b.WriteByte('u')
			b.WriteByte("0123456789abcdef"[g.Perm&15])
			b.WriteString(g.ID)
			continue
		}
		b.WriteByte('g')
		b.WriteByte("0123456789abcdef"[g.Perm&15])
		b.WriteString(groupCodes[g.Group])
	}
	if len(a.Grants) == 0 {
		return "-" // no grant at all, not even the owner's
	}
	return b.String()
}

// ErrBadRecord is a stored ACL record that does not decode.
var ErrBadRecord = errors.New("access: bad ACL record")

// DecodeGrants reads EncodeGrants' form; "" is the default ACL of owner.
func DecodeGrants(s, owner string) (ACL, error) {
	switch s {
	case "":
		return Default(owner), nil
	case "-":
		return ACL{}, nil
	}
	var a ACL
	for _, line := range strings.Split(s, "\n") {
		if len(line) < 3 {
			return ACL{}, fmt.Errorf("%w: %q", ErrBadRecord, line)
		}
		p := strings.IndexByte("0123456789abcdef", line[1])
		if p <= 0 {
			return ACL{}, fmt.Errorf("%w: permission %q", ErrBadRecord, line[1])
		}
		g := Grant{Perm: Perm(p)}
		switch line[0] {
		case 'u':
			g.ID = line[2:]
		case 'g':
			for uri, code := range groupCodes {
				if code == line[2:] {
					g.Group = uri
				}
			}
			if g.Group == "" {
				return ACL{}, fmt.Errorf("%w: group %q", ErrBadRecord, line[2:])
			}
		default:
			return ACL{}, fmt.Errorf("%w: grantee kind %q", ErrBadRecord, line[0])
		}
		a.Grants = append(a.Grants, g)
	}
	return a, nil
}
