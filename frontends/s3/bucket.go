package s3

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/frontends/s3/access"

	"github.com/cairnstore/cairn/objstore"
)

// maxXMLBody bounds request XML bodies (DeleteObjects with 1000 keys of
// 1 KiB each fits).
const maxXMLBody = 2 << 20

// decodeXML reads the request body into v; an empty body is allowed when
// optional.
func decodeXML(req *request, v any, optional bool) error {
	var r io.Reader = http.NoBody
	if req.body != nil {
		r = req.body
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxXMLBody+1))
	if err != nil {
		return err
	}
	if len(raw) > maxXMLBody {
		return apiErr("MalformedXML", 400, "The XML body is too large.")
	}
	if len(raw) == 0 {
		if optional {
			return nil
		}
		return apiErr("MissingRequestBodyError", 400, "Request Body is empty.")
	}
	return decodeXMLBytes(raw, v)
}

func decodeXMLBytes(raw []byte, v any) error {
	if err := xml.Unmarshal(raw, v); err != nil {
		return errMalformedXML
	}
	return nil
}

// owner is the caller as an S3 Owner element: the access key is both the
// canonical ID and the display name.
func (s *Server) owner(req *request) owner {
	return owner{ID: req.auth.AccessKey, DisplayName: req.auth.AccessKey}
}

type listBucketsResult struct {
	XMLName           xml.Name     `xml:"ListAllMyBucketsResult"`
	NS                string       `xml:"xmlns,attr"`
	Owner             owner        `xml:"Owner"`
	Buckets           []bucketItem `xml:"Buckets>Bucket"`
	ContinuationToken string       `xml:"ContinuationToken,omitempty"`
	Prefix            string       `xml:"Prefix,omitempty"`
}

// listBuckets lists the caller's buckets (the root's: all of them), in
// name order, paged by max-buckets and continuation-token (the last name
// of the previous page, base64url).
func (s *Server) listBuckets(w *recorder, req *request) error {
	q := req.URL.Query()
	limit := 10000
	if v := q.Get("max-buckets"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return apiErr("InvalidArgument", 400, "max-buckets must be an integer between 1 and 10000.")
		}
		limit = n
	}
	after := ""
	if t := q.Get("continuation-token"); t != "" {
		raw, err := base64.RawURLEncoding.DecodeString(t)
		if err != nil {
			return apiErr("InvalidArgument", 400, "The continuation token provided is incorrect.")
		}
		after = string(raw)
	}
	if r := q.Get("bucket-region"); r != "" && r != s.opt.Region {
		return writeXML(w, listBucketsResult{NS: s3NS, Owner: s.owner(req), Prefix: q.Get("prefix")})
	}
	bs, err := s.store.ListBuckets(req.Context())
	if err != nil {
		return err
	}
	root := s.isRoot(req.auth.AccessKey) || s.opt.Users == nil
	res := listBucketsResult{NS: s3NS, Owner: s.owner(req), Prefix: q.Get("prefix")}
	for _, b := range bs {
		if b.Name <= after || !strings.HasPrefix(b.Name, res.Prefix) {
			continue
		}
		if !root && b.Owner != req.auth.AccessKey {
			continue
		}
		if len(res.Buckets) == limit {
			res.ContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(res.Buckets[len(res.Buckets)-1].Name))
			break
		}
		res.Buckets = append(res.Buckets, bucketItem{Name: b.Name, CreationDate: iso8601(b.Created)})
	}
	return writeXML(w, res)
}

// createBucket creates a bucket owned by the caller (the root's are the
// account's: Owner ""), with the ACL of x-amz-acl or x-amz-grant-* and the
// ownership of x-amz-object-ownership. A bucket that exists is answered
// by recreate.
func (s *Server) createBucket(w *recorder, req *request) error {
	var cfg createBucketConfiguration
	if err := decodeXML(req, &cfg, true); err != nil {
		return err
	}
	if cfg.LocationConstraint != "" && cfg.LocationConstraint != s.opt.Region {
		return apiErr("InvalidLocationConstraint", 400, "The specified location-constraint %q is not valid; this server is %s.", cfg.LocationConstraint, s.opt.Region)
	}
	lock, err := bucketLockOption(req)
	if err != nil {
		return err
	}
	creator := req.auth.AccessKey
	if s.isRoot(creator) {
		creator = ""
	}
	ownership := req.Header.Get("x-amz-object-ownership")
	switch ownership {
	case "", ownerObjectWriter, ownerPreferred, ownerEnforced:
	default:
		return apiErr("InvalidArgument", 400, "Invalid x-amz-object-ownership header: %s", ownership)
	}
	acl, hasACL, err := s.headerACL(req, s.ownerID(creator), s.ownerID(creator))
	if err != nil {
		return err
	}
	if hasACL && ownership == ownerEnforced && !ownerOnly(acl, s.ownerID(creator)) {
		return apiErr("InvalidBucketAclWithObjectOwnership", 400, "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting")
	}
	if err := s.store.CreateBucket(req.Context(), req.bucket, objstore.BucketOptions{Owner: creator, ObjectLock: lock}); err != nil {
		if errors.Is(err, objstore.ErrBucketExists) {
			return s.recreate(w, req, creator, acl, hasACL)
		}
		return err
	}
	if hasACL {
		if enc := access.EncodeGrants(acl, s.ownerID(creator)); enc != "" {
			if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgACL, []byte(enc)); err != nil {
				return err
			}
		}
	}
	if ownership != "" {
		if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgOwnership, []byte(ownership)); err != nil {
			return err
		}
	}
	w.Header().Set("Location", "/"+req.bucket)
	w.WriteHeader(http.StatusOK)
	return nil
}

// legacyRegion is the region where S3 answers a CreateBucket of a bucket
// the caller already owns 200 OK (North Virginia).
const legacyRegion = "us-east-1"

// recreate answers CreateBucket of a bucket that exists, as S3 documents
// it (BucketAlreadyOwnedByYou): 409 BucketAlreadyExists to anyone but its
// owner; to its owner 409 BucketAlreadyOwnedByYou, but in us-east-1 200
// OK with the bucket's ACL reset, for legacy compatibility: to the
// request's x-amz-acl or x-amz-grant-* (the owner's full control without
// them), as a PutBucketAcl would set it. Nothing else of the bucket
// changes (its objects, versioning, ownership controls, object lock).
func (s *Server) recreate(w *recorder, req *request, creator string, acl access.ACL, hasACL bool) error {
	b, err := s.store.HeadBucket(req.Context(), req.bucket)
	if err != nil {
		return err // deleted meanwhile: NoSuchBucket, the client may retry
	}
	owner := s.ownerID(b.Owner)
	switch {
	case owner != s.ownerID(creator):
		return errBucketExists
	case s.opt.Region != legacyRegion:
		return errBucketOwnedByYou
	}
	if err := s.may(req, "s3:PutBucketAcl", req.bucket, ""); err != nil {
		return err
	}
	docs, err := s.bucketDocs(b)
	if err != nil {
		return err
	}
	if !hasACL {
		acl = access.Default(owner)
	}
	if err := checkNewACL(docs, acl, false, owner); err != nil {
		return err
	}
	if docs.ownership != ownerEnforced {
		if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgACL, []byte(access.EncodeGrants(acl, owner))); err != nil {
			return err
		}
	}
	w.Header().Set("Location", "/"+req.bucket)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) headBucket(w *recorder, req *request) error {
	if _, err := s.store.HeadBucket(req.Context(), req.bucket); err != nil {
		return err
	}
	w.Header().Set("x-amz-bucket-region", s.opt.Region)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucket(w *recorder, req *request) error {
	if err := s.store.DeleteBucket(req.Context(), req.bucket); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) getBucketLocation(w *recorder, req *request) error {
	if _, err := s.store.HeadBucket(req.Context(), req.bucket); err != nil {
		return err
	}
	region := s.opt.Region
	if region == "us-east-1" {
		region = "" // S3 answers an empty constraint for us-east-1
	}
	return writeXML(w, locationConstraint{NS: s3NS, Region: region})
}

func (s *Server) getBucketVersioning(w *recorder, req *request) error {
	b, err := s.store.HeadBucket(req.Context(), req.bucket)
	if err != nil {
		return err
	}
	return writeXML(w, versioningConfiguration{NS: s3NS, Status: b.Versioning})
}

func (s *Server) putBucketVersioning(w *recorder, req *request) error {
	var cfg versioningConfiguration
	if err := decodeXML(req, &cfg, false); err != nil {
		return err
	}
	if cfg.MfaDelete == "Enabled" {
		return apiErr("NotImplemented", 501, "MFA delete is not supported.")
	}
	if cfg.Status != objstore.VersioningEnabled && cfg.Status != objstore.VersioningSuspended {
		return errMalformedXML
	}
	if err := s.store.SetVersioning(req.Context(), req.bucket, cfg.Status); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
