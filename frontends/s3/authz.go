package s3

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/access"
	"github.com/cairnstore/cairn/objstore"
)

// Authorization: every request but the admin API and CORS preflights is
// decided by package access from the caller's policy (the user directory),
// the bucket's policy, ACL, public-access block and ownership controls,
// and for object reads the object's ACL (read only when the bucket-level
// documents do not already allow). The caller is anonymous when the
// request is unsigned (req.auth.AccessKey == "").
//
// Owner IDs: a user's canonical ID and display name are its access key; a
// bucket whose BucketInfo.Owner is "" (or the root's key) is the
// account's, owned by the root.

// authorize decides the request's own operation.
func (s *Server) authorize(req *request) error {
	if err := s.checkExpectedOwner(req); err != nil {
		return err
	}
	act := "s3:" + action(req.api)
	if req.api == "DeleteObjects" {
		return nil // each key is decided by the handler (s.may), as S3 does
	}
	if req.api == "CreateBucket" || req.bucket == "" {
		ok, err := s.allowed(req, act, "", "", nil)
		if err != nil || ok {
			return err
		}
		return errAccessDenied
	}
	ok, err := s.allowed(req, act, req.bucket, req.key, nil)
	if err != nil {
		return err
	}
	if !ok {
		return errAccessDenied
	}
	return nil
}

// isRoot reports whether the caller is the root user.
func (s *Server) isRoot(accessKey string) bool {
	return s.opt.Users != nil && accessKey != "" && s.opt.Users.IsRoot(accessKey)
}

// rootID is the root's canonical ID ("" without a user directory).
func (s *Server) rootID() string {
	if s.opt.Users == nil {
		return ""
	}
	return s.opt.Users.Root()
}

// ownerID is the canonical ID of a recorded owner ("" is the root).
func (s *Server) ownerID(owner string) string {
	if owner == "" {
		return s.rootID()
	}
	return owner
}

// accountOwned reports whether a bucket belongs to the account (the root).
func (s *Server) accountOwned(b objstore.BucketInfo) bool {
	return b.Owner == "" || b.Owner == s.rootID()
}

// checkExpectedOwner answers x-amz-expected-bucket-owner: a bucket owned
// by someone else is 403 AccessDenied.
func (s *Server) checkExpectedOwner(req *request) error {
	want := req.Header.Get("x-amz-expected-bucket-owner")
	if want == "" || req.bucket == "" || req.api == "CreateBucket" {
		return nil
	}
	b, err := s.bucketOf(req)
	if err != nil {
		return nil // the handler answers NoSuchBucket
	}
	if want != s.ownerID(b.Owner) && (!s.accountOwned(b) || want != access.AccountID) {
		return errAccessDenied
	}
	return nil
}

// allowed decides act on bucket/key for the request's caller. b is the
// bucket's record when the caller has it; nil reads it (the request's own
// bucket through bucketOf, another one from the store). Without a bucket
// only the caller's own policy is asked. The object is read (once) only
// when the decision needs it: its ACL, or a policy condition on
// s3:ExistingObjectTag. A GET or HEAD of a key that is not there answers
// NoSuchKey (the error) to a caller who may list the bucket, else
// AccessDenied, as S3 does.
func (s *Server) allowed(req *request, act, bucket, key string, b *objstore.BucketInfo) (bool, error) {
	principal := req.auth.AccessKey
	if s.isRoot(principal) && req.session == nil {
		return true, nil
	}
	obj := &objectRef{s: s, req: req, bucket: bucket, key: key}
	r := &access.Request{Principal: principal, Action: act, Resource: resource(bucket, key), Values: s.condValues(req, obj)}
	in := access.Input{Req: r, AccountBucket: true}
	if req.session != nil && req.session.Policy != nil {
		in.Session = req.session.Policy
	}
	switch {
	case principal == "":
	case s.isRoot(principal): // a session of the root's: only its policy limits it
		in.UserAll = true
	case s.opt.Users != nil:
		in.User, _ = s.opt.Users.UserPolicy(principal)
	case s.opt.Authorize != nil:
		in.UserAll = s.opt.Authorize(principal, act, r.Resource)
	default:
		in.UserAll = true
	}
	if bucket == "" {
		ok, _ := access.Decide(&in)
		return ok, nil
	}
	if b == nil {
		var err error
		var info objstore.BucketInfo
		if bucket == req.bucket {
			info, err = s.bucketOf(req)
		} else {
			info, err = s.store.HeadBucket(req.Context(), bucket)
		}
		switch {
		case errors.Is(err, objstore.ErrNoSuchBucket) || errors.Is(err, objstore.ErrInvalidBucketName):
			if principal == "" {
				return true, nil // the handler answers NoSuchBucket, as S3 does to anyone
			}
			ok, _ := access.Decide(&in)
			return ok, nil
		case err != nil:
			return false, err
		}
		b = &info
	}
	docs, err := s.bucketDocs(*b)
	if err != nil {
		return false, err
	}
	in.BucketOwner, in.AccountBucket = s.ownerID(b.Owner), s.accountOwned(*b)
	in.BucketPolicy, in.BucketACL, in.PAB, in.Enforced = docs.policy, docs.acl, docs.pab, docs.ownership == ownerEnforced
	ok, needObject := access.Decide(&in)
	if ok || !needObject || key == "" {
		return ok, obj.fault
	}
	info, err := obj.head()
	switch {
	case missingObject(err):
		in.NoObject = true // decided on the bucket alone
		if ok, _ = access.Decide(&in); !ok && s.readsObject(req, act, bucket, key) && isNoSuchKey(req, err) {
			// A caller who may list the bucket learns the key is not there.
			if lb, lerr := s.allowed(req, "s3:ListBucket", bucket, "", b); lerr == nil && lb {
				return false, objstore.ErrNoSuchKey
			}
		}
		return ok, obj.fault
	case err != nil:
		return false, err
	default:
		in.HasObject, in.ObjectOwner = true, s.objectOwner(info, *b)
		if in.ObjectACL, err = objectACL(info, in.ObjectOwner); err != nil {
			return false, err
		}
	}
	ok, _ = access.Decide(&in)
	return ok, obj.fault
}

// objectRef reads the version a decision is about, at most once: for the
// object's ACL and for s3:ExistingObjectTag conditions. fault is a read
// error other than the object not being there (the decision then fails
// with it rather than answer on missing tags).
type objectRef struct {
	s           *Server
	req         *request
	bucket, key string

	done  bool
	info  objstore.ObjectInfo
	err   error
	fault error
}

func (o *objectRef) head() (objstore.ObjectInfo, error) {
	if !o.done {
		o.done = true
		if o.key == "" {
			o.err = objstore.ErrNoSuchKey
		} else {
			var vid string
			if src := o.req.Header.Get("x-amz-copy-source"); src != "" {
				if sb, sk, sv, err := copySource(src); err == nil && sb == o.bucket && sk == o.key {
					vid = sv // a copy's source version (only reads are decided on the object)
				}
			} else if o.bucket == o.req.bucket && o.key == o.req.key {
				vid = o.req.URL.Query().Get("versionId") // the request's own target
			}
			o.info, o.err = o.s.store.Head(o.req.Context(), o.bucket, o.key, objstore.GetOptions{VersionID: vid})
		}
		if o.err != nil && !missingObject(o.err) {
			o.fault = o.err
		}
	}
	return o.info, o.err
}

// tag is the value of the object's tag k (s3:ExistingObjectTag/<k>).
func (o *objectRef) tag(k string) ([]string, bool) {
	info, err := o.head()
	if err != nil {
		return nil, false
	}
	tags, err := objectTags(info)
	if err != nil {
		if o.fault == nil {
			o.fault = err
		}
		return nil, false
	}
	v, ok := tags[k]
	if !ok {
		return nil, false
	}
	return []string{v}, true
}

// missingObject reports whether a read failed because the key or version
// is not there.
func missingObject(err error) bool {
	return errors.Is(err, objstore.ErrNoSuchKey) || errors.Is(err, objstore.ErrNoSuchVersion) ||
		errors.Is(err, objstore.ErrDeleteMarker) || errors.Is(err, objstore.ErrInvalidKey)
}

// isNoSuchKey reports whether a read of the request's object answers
// NoSuchKey: the key is not there, or its current version is a delete
// marker (a named version that is not there is NoSuchVersion).
func isNoSuchKey(req *request, err error) bool {
	return errors.Is(err, objstore.ErrNoSuchKey) ||
		errors.Is(err, objstore.ErrDeleteMarker) && req.URL.Query().Get("versionId") == ""
}

// readsObject reports whether act on bucket/key is the request's own GET,
// HEAD or GetObjectAttributes: what the NoSuchKey-or-AccessDenied rule
// covers.
func (s *Server) readsObject(req *request, act, bucket, key string) bool {
	switch req.api {
	case "GetObject", "HeadObject", "GetObjectAttributes":
		return act == "s3:GetObject" && bucket == req.bucket && key == req.key
	}
	return false
}

// hideMissing is the handler's side of that rule: a caller allowed to read
// a key that is not there, but not to list the bucket, is answered
// AccessDenied instead of NoSuchKey. nil when err is to be answered as it
// is. Asked only when the read failed: the happy path pays nothing.
func (s *Server) hideMissing(req *request, err error) error {
	if !isNoSuchKey(req, err) || !s.readsObject(req, "s3:GetObject", req.bucket, req.key) {
		return nil
	}
	ok, aerr := s.allowed(req, "s3:ListBucket", req.bucket, "", nil)
	if aerr != nil {
		return aerr
	}
	if !ok {
		return errAccessDenied
	}
	return nil
}

// objectOwner is the canonical ID of a version's owner for its ACL: the
// bucket's when it has none recorded, and in the account's buckets the
// account (the root), as S3 has an account, not its IAM user, own what
// the user writes. Attrs.Owner still names the writer.
func (s *Server) objectOwner(info objstore.ObjectInfo, b objstore.BucketInfo) string {
	if info.Attrs.Owner == "" || s.accountOwned(b) {
		return s.ownerID(b.Owner)
	}
	return info.Attrs.Owner
}

// objectACL is a version's ACL (nil: the default).
func objectACL(info objstore.ObjectInfo, owner string) (*access.ACL, error) {
	raw := info.Attrs.Sys[sysACL]
	if raw == "" {
		return nil, nil
	}
	a, err := access.DecodeGrants(raw, owner)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// bucketDocsOf are a bucket's access-control documents, parsed.
type bucketDocsOf struct {
	policy    *access.Policy
	acl       *access.ACL
	pab       access.PAB
	ownership string
}

// bucketDocs parses (through the cache) a bucket's access documents.
// requestDocs returns the request's bucket and its parsed documents.
func (s *Server) requestDocs(req *request) (objstore.BucketInfo, bucketDocsOf, error) {
	b, err := s.bucketOf(req)
	if err != nil {
		return b, bucketDocsOf{}, err
	}
	docs, err := s.bucketDocs(b)
	return b, docs, err
}

func (s *Server) bucketDocs(b objstore.BucketInfo) (bucketDocsOf, error) {
	var d bucketDocsOf
	var err error
	if d.policy, err = s.access.Policy(b.Name, b.Config[cfgPolicy]); err != nil {
		return d, err
	}
	if raw := b.Config[cfgACL]; len(raw) > 0 {
		if d.acl, err = s.access.ACL(b.Name, string(raw), s.ownerID(b.Owner)); err != nil {
			return d, err
		}
	}
	d.pab = decodePAB(b.Config[cfgPAB])
	d.ownership = string(b.Config[cfgOwnership])
	return d, nil
}

// condValues looks up the request's condition keys (lower-cased);
// s3:ExistingObjectTag/<key> reads obj's tags, only when a condition asks.
func (s *Server) condValues(req *request, obj *objectRef) func(string) ([]string, bool) {
	var q url.Values
	query := func() url.Values {
		if q == nil {
			q = req.URL.Query()
		}
		return q
	}
	one := func(v string) ([]string, bool) { return []string{v}, true }
	fromQuery := func(name string) ([]string, bool) {
		v, ok := query()[name]
		if !ok || len(v) == 0 {
			return nil, false
		}
		return v[:1], true
	}
	return func(key string) ([]string, bool) {
		switch key {
		case "aws:sourceip":
			host, _, err := net.SplitHostPort(req.RemoteAddr)
			if err != nil {
				host = req.RemoteAddr
			}
			return one(host)
		case "aws:securetransport":
			return one(strconv.FormatBool(req.TLS != nil))
		case "aws:currenttime":
			return one(time.Now().UTC().Format(time.RFC3339))
		case "aws:epochtime":
			return one(strconv.FormatInt(time.Now().Unix(), 10))
		case "aws:referer":
			return nonEmpty(req.Header.Get("Referer"))
		case "aws:useragent":
			return nonEmpty(req.Header.Get("User-Agent"))
		case "s3:prefix":
			return fromQuery("prefix")
		case "s3:delimiter":
			return fromQuery("delimiter")
		case "s3:max-keys":
			return fromQuery("max-keys")
		case "s3:versionid":
			return fromQuery("versionId")
		case "s3:signatureversion":
			if req.auth.AccessKey == "" {
				return nil, false
			}
			return one("AWS4-HMAC-SHA256")
		case "s3:requestobjecttagkeys":
			tags, _ := requestTags(req) // a malformed header is refused by the write itself
			if len(tags) == 0 {
				return nil, false
			}
			keys := make([]string, 0, len(tags))
			for k := range tags {
				keys = append(keys, k)
			}
			return keys, true
		}
		if k, ok := strings.CutPrefix(key, "s3:requestobjecttag/"); ok {
			tags, _ := requestTags(req)
			v, ok := tags[k]
			return []string{v}, ok
		}
		if k, ok := strings.CutPrefix(key, "s3:existingobjecttag/"); ok {
			return obj.tag(k)
		}
		if h, ok := strings.CutPrefix(key, "s3:"); ok && strings.HasPrefix(h, "x-amz-") {
			return nonEmpty(req.Header.Get(h))
		}
		return nil, false // keys Cairn does not know
	}
}

func nonEmpty(v string) ([]string, bool) {
	if v == "" {
		return nil, false
	}
	return []string{v}, true
}

// may is allowed for the checks handlers make beyond the request's own
// operation (a copy's source, each key of DeleteObjects): nil, or
// AccessDenied.
func (s *Server) may(req *request, act, bucket, key string) error {
	ok, err := s.allowed(req, act, bucket, key, nil)
	if err != nil {
		return err
	}
	if !ok {
		return errAccessDenied
	}
	return nil
}
