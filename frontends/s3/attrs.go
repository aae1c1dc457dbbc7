package s3

import (
	"net/http"

	"github.com/cairnstore/cairn/objstore"
)

// The per-version attributes a write gives its new version come from the
// request's headers, each concern in its own file: the ACL (acl.go), the
// tags (tagging.go) and the object lock (objectlock.go). Each keeps its
// record in Attrs.Sys under its own key below; the store keeps them opaque.
const (
	sysACL  = "s3.acl"               // the version's ACL, in acl.go's encoding
	sysTags = "s3.tags"              // the version's tags, in tagging.go's encoding
	sysSSE  = objstore.SysEncryption // the version's encryption parameters (encryption.go); other faces refuse such versions
)

// Bucket documents the S3 face keeps with objstore.SetBucketConfig.
const (
	cfgACL        = "s3.acl"
	cfgPolicy     = "s3.policy"
	cfgCORS       = "s3.cors"
	cfgTagging    = "s3.tagging"
	cfgEncryption = "s3.encryption"
	cfgOwnership  = "s3.ownership"
	cfgPAB        = "s3.publicAccessBlock"
	cfgObjectLock = "s3.objectLock"
)

// attrsEditor adds one concern's part of a new version's attributes from
// the request (PUT, POST, CreateMultipartUpload) or refuses the request.
type attrsEditor func(req *request, a *objstore.Attrs) error

// newAttrs are the attributes of a version written by req.
func (s *Server) newAttrs(req *request) (objstore.Attrs, error) {
	a := objstore.Attrs{Owner: req.auth.AccessKey}
	for _, edit := range []attrsEditor{s.aclAttrs, s.tagAttrs, s.lockAttrs} {
		if err := edit(req, &a); err != nil {
			return objstore.Attrs{}, err
		}
	}
	return a, nil
}

// copyAttrs returns the function giving a copy's attributes from its
// source's: what the request's headers say, and for each concern what
// that concern's copy rule keeps from the source (tags unless
// x-amz-tagging-directive is REPLACE; never the ACL or the lock).
func (s *Server) copyAttrs(req *request) (func(src objstore.ObjectInfo) objstore.Attrs, error) {
	a, err := s.newAttrs(req)
	if err != nil {
		return nil, err
	}
	keepTags := s.copyKeepsTags(req)
	return func(src objstore.ObjectInfo) objstore.Attrs {
		out := a
		if keepTags {
			if t, ok := src.Attrs.Sys[sysTags]; ok {
				out.Sys = cloneWith(a.Sys, sysTags, t)
			}
		}
		return out
	}, nil
}

func cloneWith(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k0, v0 := range m {
		out[k0] = v0
	}
	out[k] = v
	return out
}

// setSys sets one Sys record, making the map when needed.
func setSys(a *objstore.Attrs, k, v string) {
	if a.Sys == nil {
		a.Sys = map[string]string{}
	}
	a.Sys[k] = v
}

// attrHeaders adds the response headers a version's attributes give a
// GET or HEAD (x-amz-tagging-count, the object-lock headers).
func (s *Server) attrHeaders(h http.Header, info objstore.ObjectInfo) {
	s.tagHeaders(h, info)
	s.lockHeaders(h, info)
}
