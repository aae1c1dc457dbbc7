package s3

import (
	"encoding/xml"
	"errors"
	"net/http"
	"strings"

	"github.com/cairnstore/cairn/frontends/s3/access"
	"github.com/cairnstore/cairn/objstore"
)

// ACLs: Get/PutBucketAcl, Get/PutObjectAcl, canned ACLs (x-amz-acl) and
// x-amz-grant-* headers on CreateBucket, PutObject, CopyObject,
// CreateMultipartUpload and PostObject.
//
// Records: a bucket's ACL is Config[cfgACL], an object version's
// Attrs.Sys[sysACL], both in access.EncodeGrants' form (one grant a line;
// absent means the owner's full control). Grantees are canonical IDs
// (access keys) and the groups; a grant by email address is resolved to
// the user's access key when it is set, as S3 does.

// grantHeaders are the x-amz-grant-* headers by permission.
var grantHeaders = []struct {
	header string
	perm   access.Perm
}{
	{"x-amz-grant-read", access.Read},
	{"x-amz-grant-write", access.Write},
	{"x-amz-grant-read-acp", access.ReadACP},
	{"x-amz-grant-write-acp", access.WriteACP},
	{"x-amz-grant-full-control", access.FullControl},
}

// headerACL is the ACL of the request's x-amz-acl or x-amz-grant-*
// headers for a resource of owner in a bucket of bucketOwner; ok is false
// when there is none.
func (s *Server) headerACL(req *request, owner, bucketOwner string) (acl access.ACL, ok bool, err error) {
	canned := req.Header.Get("x-amz-acl")
	var grants []access.Grant
	for _, gh := range grantHeaders {
		v := req.Header.Get(gh.header)
		if v == "" {
			continue
		}
		gs, err := parseGrantHeader(v)
		if err != nil {
			return acl, false, err
		}
		for _, g := range gs {
			g, err := s.resolveGrantee(g)
			if err != nil {
				return acl, false, err
			}
			g.Perm = gh.perm
			grants = append(grants, g)
		}
	}
	switch {
	case canned != "" && len(grants) > 0:
		return acl, false, errCannedAndGrants
	case canned != "":
		a, err := access.Canned(canned, owner, bucketOwner)
		if err != nil {
			return acl, false, apiErr("InvalidArgument", 400, "The canned ACL %q is not valid.", canned)
		}
		return a, true, nil
	case len(grants) > 0:
		return access.ACL{Grants: grants}, true, nil
	}
	return acl, false, nil
}

// parseGrantHeader reads an x-amz-grant-* value: a comma-separated list
// of id="...", uri="..." or emailAddress="..." (quotes optional).
func parseGrantHeader(v string) ([]access.Grant, error) {
	var out []access.Grant
	for _, part := range splitGrants(v) {
		part = strings.TrimSpace(part)
		k, val, ok := strings.Cut(part, "=")
		if !ok {
			return nil, apiErr("InvalidArgument", 400, "Invalid grant %q: want id=, uri= or emailAddress=.", part)
		}
		val = strings.TrimSpace(val)
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
		}
		if val == "" {
			return nil, apiErr("InvalidArgument", 400, "Invalid grant %q: empty grantee.", part)
		}
		switch strings.TrimSpace(strings.ToLower(k)) {
		case "id":
			out = append(out, access.Grant{ID: val})
		case "uri":
			out = append(out, access.Grant{Group: val})
		case "emailaddress":
			out = append(out, access.Grant{ID: "\x00" + val}) // resolved by resolveGrantee
		default:
			return nil, apiErr("InvalidArgument", 400, "Invalid grant %q: want id=, uri= or emailAddress=.", part)
		}
	}
	if len(out) == 0 {
		return nil, apiErr("InvalidArgument", 400, "Empty grant header.")
	}
	return out, nil
}

// splitGrants splits at commas outside double quotes.
func splitGrants(v string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, v[start:i])
				start = i + 1
			}
		}
	}
	return append(out, v[start:])
}

// resolveGrantee checks a grantee: a known canonical ID, a known group,
// an email address of a user (replaced by the user's ID).
func (s *Server) resolveGrantee(g access.Grant) (access.Grant, error) {
	switch {
	case strings.HasPrefix(g.ID, "\x00"):
		email := g.ID[1:]
		if s.opt.Users == nil {
			return g, apiErr("UnresolvableGrantByEmailAddress", 400, "The email address you provided does not match any account on record.")
		}
		id, ok := s.opt.Users.ByEmail(email)
		if !ok {
			return g, apiErr("UnresolvableGrantByEmailAddress", 400, "The email address you provided does not match any account on record.")
		}
		g.ID = id
	case g.ID != "":
		if s.opt.Users != nil && !s.opt.Users.Exists(g.ID) {
			return g, apiErr("InvalidArgument", 400, "Invalid id: %s", g.ID)
		}
	default:
		switch g.Group {
		case access.AllUsers, access.AuthenticatedUsers, access.LogDelivery:
		default:
			return g, apiErr("InvalidArgument", 400, "Invalid group uri: %s", g.Group)
		}
	}
	return g, nil
}

// ownerOnly reports whether the ACL grants nothing to anyone but owner.
func ownerOnly(a access.ACL, owner string) bool {
	for _, g := range a.Grants {
		if g.ID != owner {
			return false
		}
	}
	return true
}

// checkNewACL refuses an ACL the bucket's settings do not allow: any
// but the owner's under BucketOwnerEnforced (bucket-owner-full-control
// only, for objects), a public one under BlockPublicAcls.
func checkNewACL(docs bucketDocsOf, a access.ACL, cannedBOFC bool, owner string) error {
	if docs.ownership == ownerEnforced && !cannedBOFC && !ownerOnly(a, owner) {
		return errACLNotSupported
	}
	if docs.pab.BlockPublicAcls && a.Public() {
		return errAccessDenied
	}
	return nil
}

// aclAttrs keeps the ACL a write's x-amz-acl or x-amz-grant-* headers give
// the new version, and sets its owner as the bucket's ownership controls
// say (the bucket owner under BucketOwnerEnforced, and under
// BucketOwnerPreferred with bucket-owner-full-control).
func (s *Server) aclAttrs(req *request, a *objstore.Attrs) error {
	b, err := s.bucketOf(req)
	if err != nil {
		if errors.Is(err, objstore.ErrNoSuchBucket) {
			return nil // the write answers NoSuchBucket
		}
		return err
	}
	docs, err := s.bucketDocs(b)
	if err != nil {
		return err
	}
	bucketOwner := s.ownerID(b.Owner)
	canned := req.Header.Get("x-amz-acl")
	bofc := canned == "bucket-owner-full-control"
	switch {
	case docs.ownership == ownerEnforced:
		a.Owner = bucketOwner
	case docs.ownership == ownerPreferred && bofc:
		a.Owner = bucketOwner
	case a.Owner == "":
		a.Owner = bucketOwner // an anonymous write (public-read-write)
	}
	aclOwner := a.Owner
	if s.accountOwned(b) {
		aclOwner = bucketOwner // see objectOwner
	}
	acl, ok, err := s.headerACL(req, aclOwner, bucketOwner)
	if err != nil || !ok {
		return err
	}
	if err := checkNewACL(docs, acl, bofc, aclOwner); err != nil {
		return err
	}
	if docs.ownership == ownerEnforced {
		return nil // ACLs are disabled: nothing to keep
	}
	if enc := access.EncodeGrants(acl, aclOwner); enc != "" {
		setSys(a, sysACL, enc)
	}
	return nil
}

// The AccessControlPolicy document.
type accessControlPolicy struct {
	XMLName xml.Name   `xml:"AccessControlPolicy"`
	NS      string     `xml:"xmlns,attr,omitempty"`
	Owner   *owner     `xml:"Owner"`
	Grants  []aclGrant `xml:"AccessControlList>Grant"`
}

type aclGrant struct {
	Grantee    aclGrantee `xml:"Grantee"`
	Permission string     `xml:"Permission"`
}

// aclGrantee is written with an xsi:type attribute; read with type in
// any namespace.
type aclGrantee struct {
	XSI          string `xml:"xmlns:xsi,attr,omitempty"`
	Type         string `xml:"xsi:type,attr,omitempty"`
	ReadType     string `xml:"type,attr,omitempty"`
	ID           string `xml:"ID,omitempty"`
	DisplayName  string `xml:"DisplayName,omitempty"`
	EmailAddress string `xml:"EmailAddress,omitempty"`
	URI          string `xml:"URI,omitempty"`
}

const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

// aclDocument is the AccessControlPolicy of an ACL of ownerID: the
// grants to groups first, then those to canonical users, each in the
// ACL's order (a canned ACL's: the owner's first). S3 documents no order;
// this is the one the ceph s3-tests compare, grant by grant, and clients
// index (the bucket owner's grant of a public-read-write bucket is the
// third).
func aclDocument(a access.ACL, ownerID string) accessControlPolicy {
	doc := accessControlPolicy{NS: s3NS, Owner: &owner{ID: ownerID, DisplayName: ownerID}}
	doc.Grants = []aclGrant{}
	for _, groups := range []bool{true, false} {
		for _, g := range a.Grants {
			if (g.ID == "") != groups {
				continue
			}
			ge := aclGrantee{XSI: xsiNS, Type: "CanonicalUser", ID: g.ID, DisplayName: g.ID}
			if g.ID == "" {
				ge = aclGrantee{XSI: xsiNS, Type: "Group", URI: g.Group}
			}
			for _, name := range g.Perm.Names() {
				doc.Grants = append(doc.Grants, aclGrant{Grantee: ge, Permission: name})
			}
		}
	}
	return doc
}

// bodyACL reads an AccessControlPolicy body.
func (s *Server) bodyACL(raw []byte) (access.ACL, error) {
	var doc struct {
		XMLName xml.Name `xml:"AccessControlPolicy"`
		Grants  []struct {
			Grantee struct {
				Type         string `xml:"type,attr"`
				ID           string `xml:"ID"`
				EmailAddress string `xml:"EmailAddress"`
				URI          string `xml:"URI"`
			} `xml:"Grantee"`
			Permission string `xml:"Permission"`
		} `xml:"AccessControlList>Grant"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		return access.ACL{}, errMalformedACL
	}
	var a access.ACL
	for _, g := range doc.Grants {
		p, ok := access.ParsePerm(g.Permission)
		if !ok {
			return access.ACL{}, errMalformedACL
		}
		var gr access.Grant
		switch ge := g.Grantee; ge.Type {
		case "CanonicalUser":
			if ge.ID == "" {
				return access.ACL{}, errMalformedACL
			}
			gr.ID = ge.ID
		case "AmazonCustomerByEmail":
			if ge.EmailAddress == "" {
				return access.ACL{}, errMalformedACL
			}
			gr.ID = "\x00" + ge.EmailAddress
		case "Group":
			if ge.URI == "" {
				return access.ACL{}, errMalformedACL
			}
			gr.Group = ge.URI
		default:
			return access.ACL{}, errMalformedACL
		}
		gr, err := s.resolveGrantee(gr)
		if err != nil {
			return access.ACL{}, err
		}
		gr.Perm = p
		a.Grants = mergeGrant(a.Grants, gr)
	}
	return a, nil
}

// mergeGrant adds g, or its permission to a grant to the same grantee.
func mergeGrant(gs []access.Grant, g access.Grant) []access.Grant {
	for i := range gs {
		if gs[i].ID == g.ID && gs[i].Group == g.Group {
			gs[i].Perm |= g.Perm
			return gs
		}
	}
	return append(gs, g)
}

// putACL reads the ACL of a PutBucketAcl or PutObjectAcl: the headers or
// the body, not both.
func (s *Server) putACL(req *request, owner, bucketOwner string) (acl access.ACL, bofc bool, err error) {
	acl, fromHeaders, err := s.headerACL(req, owner, bucketOwner)
	if err != nil {
		return acl, false, err
	}
	raw, err := readBody(req, maxXMLBody)
	if err != nil {
		return acl, false, err
	}
	switch {
	case fromHeaders && len(raw) > 0:
		return acl, false, errUnexpectedContent
	case fromHeaders:
		return acl, req.Header.Get("x-amz-acl") == "bucket-owner-full-control", nil
	case len(raw) == 0:
		return acl, false, apiErr("MissingSecurityHeader", 400, "Your request was missing a required header: x-amz-acl, x-amz-grant-* or an AccessControlPolicy body.")
	}
	acl, err = s.bodyACL(raw)
	return acl, false, err
}

func (s *Server) getBucketACL(w *recorder, req *request) error {
	b, docs, err := s.requestDocs(req)
	if err != nil {
		return err
	}
	owner := s.ownerID(b.Owner)
	acl := access.Default(owner)
	if docs.acl != nil && docs.ownership != ownerEnforced {
		acl = *docs.acl
	}
	return writeXML(w, aclDocument(acl, owner))
}

func (s *Server) putBucketACL(w *recorder, req *request) error {
	b, docs, err := s.requestDocs(req)
	if err != nil {
		return err
	}
	owner := s.ownerID(b.Owner)
	acl, bofc, err := s.putACL(req, owner, owner)
	if err != nil {
		return err
	}
	if err := checkNewACL(docs, acl, bofc, owner); err != nil {
		return err
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgACL, []byte(access.EncodeGrants(acl, owner))); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) getObjectACL(w *recorder, req *request) error {
	b, docs, err := s.requestDocs(req)
	if err != nil {
		return err
	}
	info, err := s.store.Head(req.Context(), req.bucket, req.key, objstore.GetOptions{VersionID: req.URL.Query().Get("versionId")})
	if err != nil {
		return s.objectError(w, req, err)
	}
	owner := s.objectOwner(info, b)
	acl := access.Default(owner)
	if docs.ownership == ownerEnforced {
		owner = s.ownerID(b.Owner)
		acl = access.Default(owner)
	} else if a, err := objectACL(info, owner); err != nil {
		return err
	} else if a != nil {
		acl = *a
	}
	if info.VersionID != objstore.NullVersion {
		w.Header().Set("x-amz-version-id", info.VersionID)
	}
	return writeXML(w, aclDocument(acl, owner))
}

func (s *Server) putObjectACL(w *recorder, req *request) error {
	b, docs, err := s.requestDocs(req)
	if err != nil {
		return err
	}
	bucketOwner := s.ownerID(b.Owner)
	cur, err := s.store.Head(req.Context(), req.bucket, req.key, objstore.GetOptions{VersionID: req.URL.Query().Get("versionId")})
	if err != nil {
		return s.objectError(w, req, err)
	}
	owner := s.objectOwner(cur, b)
	acl, bofc, err := s.putACL(req, owner, bucketOwner)
	if err != nil {
		return err
	}
	if err := checkNewACL(docs, acl, bofc, owner); err != nil {
		return err
	}
	enc := access.EncodeGrants(acl, owner)
	info, err := s.store.SetAttrs(req.Context(), req.bucket, req.key, cur.VersionID, func(_ objstore.ObjectInfo, a *objstore.Attrs) error {
		if enc == "" {
			delete(a.Sys, sysACL)
			return nil
		}
		setSys(a, sysACL, enc)
		return nil
	})
	if err != nil {
		return s.objectError(w, req, err)
	}
	if info.VersionID != objstore.NullVersion {
		w.Header().Set("x-amz-version-id", info.VersionID)
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
