package s3

import (
	"encoding/xml"
	"io"
	"net/http"

	"github.com/cairnstore/cairn/frontends/s3/access"
)

// Bucket policies, their status, ownership controls and the public-access
// block.
//
// Records: Config[cfgPolicy] is the policy JSON as the client sent it
// (validated by access.ParsePolicy, parsed again only through the
// server's cache); Config[cfgOwnership] the ObjectOwnership value;
// Config[cfgPAB] four characters "t" or "f" for BlockPublicAcls,
// IgnorePublicAcls, BlockPublicPolicy and RestrictPublicBuckets.

// maxPolicy is S3's bucket policy size limit.
const maxPolicy = 20 << 10

// The ObjectOwnership values.
const (
	ownerObjectWriter = "ObjectWriter"
	ownerPreferred    = "BucketOwnerPreferred"
	ownerEnforced     = "BucketOwnerEnforced"
)

// readBody reads the request body up to limit bytes.
func readBody(req *request, limit int64) ([]byte, error) {
	if req.body == nil {
		return nil, nil
	}
	raw, err := io.ReadAll(io.LimitReader(req.body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, apiErr("EntityTooLarge", 400, "The document exceeds %d bytes.", limit)
	}
	return raw, nil
}

func (s *Server) getBucketPolicy(w *recorder, req *request) error {
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	raw := b.Config[cfgPolicy]
	if len(raw) == 0 {
		return errNoSuchPolicy
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(raw)
	return err
}

func (s *Server) putBucketPolicy(w *recorder, req *request) error {
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	raw, err := readBody(req, maxPolicy)
	if err != nil {
		return err
	}
	p, err := access.ParsePolicy(raw, access.Resource)
	if err != nil {
		return apiErr("MalformedPolicy", 400, "%v", err)
	}
	if !p.Within(req.bucket) {
		return apiErr("MalformedPolicy", 400, "Policy has invalid resource")
	}
	docs, err := s.bucketDocs(b)
	if err != nil {
		return err
	}
	if docs.pab.BlockPublicPolicy && p.Public() {
		return errAccessDenied
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgPolicy, raw); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteBucketPolicy(w *recorder, req *request) error {
	if _, err := s.bucketOf(req); err != nil {
		return err
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgPolicy, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type policyStatus struct {
	XMLName  xml.Name `xml:"PolicyStatus"`
	NS       string   `xml:"xmlns,attr"`
	IsPublic bool     `xml:"IsPublic"`
}

// getBucketPolicyStatus says whether the bucket is public: its policy is
// (access.Policy.Public), or, as Ceph does, its ACL grants to everyone
// (unless IgnorePublicAcls).
func (s *Server) getBucketPolicyStatus(w *recorder, req *request) error {
	_, docs, err := s.requestDocs(req)
	if err != nil {
		return err
	}
	public := docs.policy.Public() && !docs.pab.RestrictPublicBuckets ||
		docs.acl != nil && docs.acl.Public() && !docs.pab.IgnorePublicAcls && docs.ownership != ownerEnforced
	return writeXML(w, policyStatus{NS: s3NS, IsPublic: public})
}

type ownershipControls struct {
	XMLName xml.Name `xml:"OwnershipControls"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	Rules   []struct {
		ObjectOwnership string `xml:"ObjectOwnership"`
	} `xml:"Rule"`
}

func (s *Server) getOwnershipControls(w *recorder, req *request) error {
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	v := string(b.Config[cfgOwnership])
	if v == "" {
		return errNoSuchOwnership
	}
	res := ownershipControls{NS: s3NS}
	res.Rules = append(res.Rules, struct {
		ObjectOwnership string `xml:"ObjectOwnership"`
	}{v})
	return writeXML(w, res)
}

func (s *Server) putOwnershipControls(w *recorder, req *request) error {
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	var doc ownershipControls
	if err := decodeXML(req, &doc, false); err != nil {
		return err
	}
	if len(doc.Rules) != 1 {
		return errMalformedXML
	}
	v := doc.Rules[0].ObjectOwnership
	switch v {
	case ownerObjectWriter, ownerPreferred, ownerEnforced:
	default:
		return errMalformedXML
	}
	if v == ownerEnforced {
		docs, err := s.bucketDocs(b)
		if err != nil {
			return err
		}
		if docs.acl != nil && !ownerOnly(*docs.acl, s.ownerID(b.Owner)) {
			return apiErr("InvalidBucketAclWithObjectOwnership", 400, "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting")
		}
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgOwnership, []byte(v)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteOwnershipControls(w *recorder, req *request) error {
	if _, err := s.bucketOf(req); err != nil {
		return err
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgOwnership, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type publicAccessBlock struct {
	XMLName               xml.Name `xml:"PublicAccessBlockConfiguration"`
	NS                    string   `xml:"xmlns,attr,omitempty"`
	BlockPublicAcls       bool     `xml:"BlockPublicAcls"`
	IgnorePublicAcls      bool     `xml:"IgnorePublicAcls"`
	BlockPublicPolicy     bool     `xml:"BlockPublicPolicy"`
	RestrictPublicBuckets bool     `xml:"RestrictPublicBuckets"`
}

// encodePAB is Config[cfgPAB]'s form.
func encodePAB(p access.PAB) []byte {
	b := []byte("ffff")
	for i, on := range []bool{p.BlockPublicAcls, p.IgnorePublicAcls, p.BlockPublicPolicy, p.RestrictPublicBuckets} {
		if on {
			b[i] = 't'
		}
	}
	return b
}

// decodePAB reads encodePAB's form; anything else is no block.
func decodePAB(raw []byte) access.PAB {
	if len(raw) != 4 {
		return access.PAB{}
	}
	return access.PAB{BlockPublicAcls: raw[0] == 't', IgnorePublicAcls: raw[1] == 't', BlockPublicPolicy: raw[2] == 't', RestrictPublicBuckets: raw[3] == 't'}
}

func (s *Server) getPublicAccessBlock(w *recorder, req *request) error {
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	raw := b.Config[cfgPAB]
	if len(raw) == 0 {
		return errNoSuchPAB
	}
	p := decodePAB(raw)
	return writeXML(w, publicAccessBlock{NS: s3NS, BlockPublicAcls: p.BlockPublicAcls, IgnorePublicAcls: p.IgnorePublicAcls,
		BlockPublicPolicy: p.BlockPublicPolicy, RestrictPublicBuckets: p.RestrictPublicBuckets})
}

func (s *Server) putPublicAccessBlock(w *recorder, req *request) error {
	if _, err := s.bucketOf(req); err != nil {
		return err
	}
	var doc publicAccessBlock
	if err := decodeXML(req, &doc, false); err != nil {
		return err
	}
	p := access.PAB{BlockPublicAcls: doc.BlockPublicAcls, IgnorePublicAcls: doc.IgnorePublicAcls,
		BlockPublicPolicy: doc.BlockPublicPolicy, RestrictPublicBuckets: doc.RestrictPublicBuckets}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgPAB, encodePAB(p)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deletePublicAccessBlock(w *recorder, req *request) error {
	if _, err := s.bucketOf(req); err != nil {
		return err
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgPAB, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
