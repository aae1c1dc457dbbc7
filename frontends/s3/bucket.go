package s3

import (
	"encoding/xml"
	"io"
	"net/http"

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

func (s *Server) owner(req *request) owner {
	return owner{ID: req.auth.AccessKey, DisplayName: req.auth.AccessKey}
}

func (s *Server) listBuckets(w *recorder, req *request) error {
	bs, err := s.store.ListBuckets(req.Context())
	if err != nil {
		return err
	}
	res := listAllMyBucketsResult{NS: s3NS, Owner: s.owner(req)}
	for _, b := range bs {
		if s.opt.Authorize != nil && !s.opt.Authorize(req.auth.AccessKey, "s3:ListBucket", resource(b.Name, "")) {
			continue
		}
		res.Buckets = append(res.Buckets, bucketItem{Name: b.Name, CreationDate: iso8601(b.Created)})
	}
	return writeXML(w, res)
}

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
	if err := s.store.CreateBucket(req.Context(), req.bucket, objstore.BucketOptions{Owner: req.auth.AccessKey, ObjectLock: lock}); err != nil {
		return err
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

func (s *Server) getBucketLifecycle(w *recorder, req *request) error {
	rules, err := s.store.Lifecycle(req.Context(), req.bucket)
	if err != nil {
		return err
	}
	if len(rules) == 0 {
		return apiErr("NoSuchLifecycleConfiguration", 404, "The lifecycle configuration does not exist.")
	}
	res := lifecycleConfiguration{NS: s3NS}
	for _, r := range rules {
		lr := lifecycleRule{ID: r.ID, Status: "Disabled"}
		if r.Enabled {
			lr.Status = "Enabled"
		}
		p := r.Prefix
		lr.Filter = &lifecycleFilter{Prefix: &p}
		if r.ExpirationDays > 0 {
			lr.Expiration = &struct {
				Days int `xml:"Days,omitempty"`
			}{r.ExpirationDays}
		}
		if r.AbortIncompleteDays > 0 {
			lr.AbortIncompleteMultipartUpload = &struct {
				DaysAfterInitiation int `xml:"DaysAfterInitiation"`
			}{r.AbortIncompleteDays}
		}
		res.Rules = append(res.Rules, lr)
	}
	return writeXML(w, res)
}

func (s *Server) putBucketLifecycle(w *recorder, req *request) error {
	var cfg lifecycleConfiguration
	if err := decodeXML(req, &cfg, false); err != nil {
		return err
	}
	if len(cfg.Rules) == 0 || len(cfg.Rules) > 1000 {
		return errMalformedXML
	}
	var rules []objstore.LifecycleRule
	for _, lr := range cfg.Rules {
		r, err := toRule(lr)
		if err != nil {
			return err
		}
		rules = append(rules, r)
	}
	if err := s.store.SetLifecycle(req.Context(), req.bucket, rules); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func toRule(lr lifecycleRule) (objstore.LifecycleRule, error) {
	r := objstore.LifecycleRule{ID: lr.ID}
	switch lr.Status {
	case "Enabled":
		r.Enabled = true
	case "Disabled":
	default:
		return r, errMalformedXML
	}
	switch {
	case lr.Filter != nil && lr.Filter.Prefix != nil:
		r.Prefix = *lr.Filter.Prefix
	case lr.Filter != nil && lr.Filter.And != nil:
		r.Prefix = lr.Filter.And.Prefix
	case lr.Prefix != nil:
		r.Prefix = *lr.Prefix
	}
	if lr.Expiration != nil {
		if lr.Expiration.Days <= 0 {
			return r, apiErr("InvalidArgument", 400, "'Days' for Expiration action must be a positive integer.")
		}
		r.ExpirationDays = lr.Expiration.Days
	}
	if lr.AbortIncompleteMultipartUpload != nil {
		if lr.AbortIncompleteMultipartUpload.DaysAfterInitiation <= 0 {
			return r, apiErr("InvalidArgument", 400, "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer.")
		}
		r.AbortIncompleteDays = lr.AbortIncompleteMultipartUpload.DaysAfterInitiation
	}
	if r.ExpirationDays == 0 && r.AbortIncompleteDays == 0 {
		return r, apiErr("InvalidRequest", 400, "At least one action needs to be specified in a rule.")
	}
	return r, nil
}

func (s *Server) deleteBucketLifecycle(w *recorder, req *request) error {
	if err := s.store.SetLifecycle(req.Context(), req.bucket, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
