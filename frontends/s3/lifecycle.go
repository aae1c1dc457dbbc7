package s3

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// Bucket lifecycle configuration (Put/Get/DeleteBucketLifecycle) and the
// x-amz-expiration header.
//
// parseLifecycle validates a LifecycleConfiguration as S3 does and turns
// each rule into the objstore.LifecycleRule the store acts on (tag
// filters name sysTags, whose encoding, tagging.go's, the store reads as
// a URL query). Each rule also keeps its own Rule element, re-encoded
// (meta.LifecycleRule.Doc), so that GET returns each rule in the shape it
// was put in: the legacy Prefix or a Filter, and which filter. A rule
// without an ID gets a generated one, kept in that element.
//
// Cairn has one storage class, STANDARD: Transition and
// NoncurrentVersionTransition are refused (InvalidStorageClass), never
// accepted and ignored.

// S3's lifecycle limits.
const (
	maxLifecycleRules  = 1000
	maxRuleIDLen       = 255
	maxNewerNoncurrent = 100
)

type lifecycleConfiguration struct {
	XMLName xml.Name        `xml:"LifecycleConfiguration"`
	NS      string          `xml:"xmlns,attr,omitempty"`
	Rules   []lifecycleRule `xml:"Rule"`
}

type lifecycleRule struct {
	XMLName                        xml.Name                       `xml:"Rule"`
	ID                             string                         `xml:"ID,omitempty"`
	Prefix                         *string                        `xml:"Prefix"` // the legacy, filterless form
	Filter                         *lifecycleFilter               `xml:"Filter"`
	Status                         string                         `xml:"Status"`
	Expiration                     *lifecycleExpiration           `xml:"Expiration"`
	Transitions                    []lifecycleTransition          `xml:"Transition"`
	NoncurrentVersionTransitions   []lifecycleTransition          `xml:"NoncurrentVersionTransition"`
	NoncurrentVersionExpiration    *lifecycleNoncurrentExpiration `xml:"NoncurrentVersionExpiration"`
	AbortIncompleteMultipartUpload *lifecycleAbort                `xml:"AbortIncompleteMultipartUpload"`
}

type lifecycleFilter struct {
	Prefix                *string       `xml:"Prefix"`
	Tag                   *tag          `xml:"Tag"`
	ObjectSizeGreaterThan *int64        `xml:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *int64        `xml:"ObjectSizeLessThan"`
	And                   *lifecycleAnd `xml:"And"`
}

type lifecycleAnd struct {
	Prefix                *string `xml:"Prefix"`
	Tags                  []tag   `xml:"Tag"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan"`
}

type lifecycleExpiration struct {
	Days                      *int    `xml:"Days"`
	Date                      *string `xml:"Date"`
	ExpiredObjectDeleteMarker *bool   `xml:"ExpiredObjectDeleteMarker"`
}

type lifecycleTransition struct {
	Days           *int    `xml:"Days"`
	Date           *string `xml:"Date"`
	NoncurrentDays *int    `xml:"NoncurrentDays"`
	StorageClass   string  `xml:"StorageClass"`
}

type lifecycleNoncurrentExpiration struct {
	NoncurrentDays          *int `xml:"NoncurrentDays"`
	NewerNoncurrentVersions *int `xml:"NewerNoncurrentVersions"`
}

type lifecycleAbort struct {
	DaysAfterInitiation *int `xml:"DaysAfterInitiation"`
}

func errLifecycleArg(format string, args ...any) *APIError {
	return apiErr("InvalidArgument", http.StatusBadRequest, format, args...)
}

func errLifecycleRequest(format string, args ...any) *APIError {
	return apiErr("InvalidRequest", http.StatusBadRequest, format, args...)
}

func (s *Server) getBucketLifecycle(w *recorder, req *request) error {
	rules, err := s.store.Lifecycle(req.Context(), req.bucket)
	if err != nil {
		return err
	}
	if len(rules) == 0 {
		return apiErr("NoSuchLifecycleConfiguration", http.StatusNotFound, "The lifecycle configuration does not exist.")
	}
	res := lifecycleConfiguration{NS: s3NS}
	for _, r := range rules {
		res.Rules = append(res.Rules, renderRule(r))
	}
	return writeXML(w, res)
}

func (s *Server) putBucketLifecycle(w *recorder, req *request) error {
	var cfg lifecycleConfiguration
	if err := decodeXML(req, &cfg, false); err != nil {
		return err
	}
	rules, err := lifecycleRules(cfg)
	if err != nil {
		return err
	}
	if err := s.store.SetLifecycle(req.Context(), req.bucket, rules); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucketLifecycle(w *recorder, req *request) error {
	if err := s.store.SetLifecycle(req.Context(), req.bucket, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// parseLifecycle reads and validates a LifecycleConfiguration document.
func parseLifecycle(raw []byte) ([]objstore.LifecycleRule, error) {
	var cfg lifecycleConfiguration
	if err := decodeXMLBytes(raw, &cfg); err != nil {
		return nil, err
	}
	return lifecycleRules(cfg)
}

// lifecycleRules validates a parsed configuration: every rule, then that
// IDs are unique (a rule without one gets a fresh one).
func lifecycleRules(cfg lifecycleConfiguration) ([]objstore.LifecycleRule, error) {
	if len(cfg.Rules) == 0 || len(cfg.Rules) > maxLifecycleRules {
		return nil, errMalformedXML
	}
	ids := map[string]bool{}
	out := make([]objstore.LifecycleRule, 0, len(cfg.Rules))
	for _, lr := range cfg.Rules {
		r, err := toRule(lr)
		if err != nil {
			return nil, err
		}
		if ids[lr.ID] && lr.ID != "" {
			return nil, errLifecycleArg("Rule ID must be unique. Found same ID for more than one rule")
		}
		ids[lr.ID] = true
		out = append(out, r)
	}
	for i := range out {
		if out[i].ID != "" {
			continue
		}
		for out[i].ID == "" || ids[out[i].ID] {
			out[i].ID = newRuleID()
		}
		ids[out[i].ID] = true
		lr := cfg.Rules[i]
		lr.ID = out[i].ID
		out[i].Doc = encodeRule(lr)
	}
	return out, nil
}

// newRuleID makes an ID for a rule put without one, as S3 does.
func newRuleID() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}

func encodeRule(lr lifecycleRule) []byte {
	lr.XMLName = xml.Name{Local: "Rule"}
	raw, err := xml.Marshal(lr)
	if err != nil {
		return nil // the types marshal; renderRule falls back on the fields
	}
	return raw
}

// toRule validates one rule and makes the store's rule of it.
func toRule(lr lifecycleRule) (objstore.LifecycleRule, error) {
	r := objstore.LifecycleRule{ID: lr.ID}
	if len(lr.ID) > maxRuleIDLen {
		return r, errLifecycleArg("ID length should not exceed allowed limit of %d", maxRuleIDLen)
	}
	switch lr.Status {
	case "Enabled":
		r.Enabled = true
	case "Disabled":
	default:
		return r, errMalformedXML
	}
	if err := ruleFilter(lr, &r); err != nil {
		return r, err
	}
	filtered := len(r.Tags) > 0 || r.SizeGreaterThan != nil || r.SizeLessThan != nil
	actions := 0
	if e := lr.Expiration; e != nil {
		actions++
		if err := ruleExpiration(e, filtered, &r); err != nil {
			return r, err
		}
	}
	if len(lr.Transitions) > 0 || len(lr.NoncurrentVersionTransitions) > 0 {
		if err := checkTransitions(lr); err != nil {
			return r, err
		}
	}
	if n := lr.NoncurrentVersionExpiration; n != nil {
		actions++
		if n.NoncurrentDays == nil || *n.NoncurrentDays <= 0 {
			return r, errLifecycleArg("'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer")
		}
		r.NoncurrentDays = *n.NoncurrentDays
		if v := n.NewerNoncurrentVersions; v != nil {
			if *v <= 0 || *v > maxNewerNoncurrent {
				return r, errLifecycleArg("'NewerNoncurrentVersions' for NoncurrentVersionExpiration action must be a positive integer up to %d", maxNewerNoncurrent)
			}
			r.NewerNoncurrent = *v
		}
	}
	if a := lr.AbortIncompleteMultipartUpload; a != nil {
		actions++
		if filtered {
			return r, errLifecycleRequest("AbortIncompleteMultipartUpload cannot be specified with Tags or object size filters")
		}
		if a.DaysAfterInitiation == nil || *a.DaysAfterInitiation <= 0 {
			return r, errLifecycleArg("'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer")
		}
		r.AbortIncompleteDays = *a.DaysAfterInitiation
	}
	if actions == 0 {
		return r, errLifecycleRequest("At least one action needs to be specified in a rule")
	}
	r.Doc = encodeRule(lr)
	return r, nil
}

// ruleFilter reads the rule's scope: the legacy Prefix or a Filter of
// exactly one of Prefix, Tag, ObjectSizeGreaterThan, ObjectSizeLessThan
// and And, or none (the whole bucket).
func ruleFilter(lr lifecycleRule, r *objstore.LifecycleRule) error {
	switch {
	case lr.Prefix != nil && lr.Filter != nil, lr.Prefix == nil && lr.Filter == nil:
		return errMalformedXML
	case lr.Prefix != nil:
		r.Prefix = *lr.Prefix
		return nil
	}
	f := lr.Filter
	n := 0
	for _, set := range []bool{f.Prefix != nil, f.Tag != nil, f.ObjectSizeGreaterThan != nil, f.ObjectSizeLessThan != nil, f.And != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		return errMalformedXML
	}
	prefix, tags, gt, lt := f.Prefix, []tag(nil), f.ObjectSizeGreaterThan, f.ObjectSizeLessThan
	if f.Tag != nil {
		tags = []tag{*f.Tag}
	}
	if a := f.And; a != nil {
		if a.Prefix == nil && len(a.Tags) == 0 && a.ObjectSizeGreaterThan == nil && a.ObjectSizeLessThan == nil {
			return errMalformedXML
		}
		prefix, tags, gt, lt = a.Prefix, a.Tags, a.ObjectSizeGreaterThan, a.ObjectSizeLessThan
	}
	if prefix != nil {
		r.Prefix = *prefix
	}
	if len(tags) > 0 {
		if err := validateTags(slices.Clone(tags), maxObjectTags); err != nil {
			return err
		}
		for _, t := range tags {
			r.Tags = append(r.Tags, objstore.Tag{Key: t.Key, Value: t.Value})
		}
		r.TagRecord = sysTags
	}
	switch {
	case gt != nil && *gt < 0, lt != nil && *lt <= 0:
		return errLifecycleArg("'ObjectSizeGreaterThan' must not be negative and 'ObjectSizeLessThan' must be positive")
	case gt != nil && lt != nil && *gt >= *lt:
		return errLifecycleArg("'ObjectSizeGreaterThan' must be less than 'ObjectSizeLessThan'")
	}
	r.SizeGreaterThan, r.SizeLessThan = gt, lt
	return nil
}

// ruleExpiration reads an Expiration action: exactly one of Days (a
// positive integer), Date (midnight UTC in ISO 8601) and
// ExpiredObjectDeleteMarker, the last not with tag or size filters.
func ruleExpiration(e *lifecycleExpiration, filtered bool, r *objstore.LifecycleRule) error {
	n := 0
	for _, set := range []bool{e.Days != nil, e.Date != nil, e.ExpiredObjectDeleteMarker != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errMalformedXML
	}
	switch {
	case e.Days != nil:
		if *e.Days <= 0 {
			return errLifecycleArg("'Days' for Expiration action must be a positive integer")
		}
		r.ExpirationDays = *e.Days
	case e.Date != nil:
		d, err := parseLifecycleDate(*e.Date)
		if err != nil {
			return err
		}
		r.ExpirationDate = d
	default:
		if *e.ExpiredObjectDeleteMarker && filtered {
			return errLifecycleRequest("ExpiredObjectDeleteMarker cannot be specified with Tags or object size filters")
		}
		r.ExpiredDeleteMarker = *e.ExpiredObjectDeleteMarker
	}
	return nil
}

// parseLifecycleDate reads an action's Date: ISO 8601 at midnight UTC.
func parseLifecycleDate(v string) (time.Time, error) {
	d, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	if err != nil {
		return time.Time{}, errLifecycleArg("Invalid date: 'Date' must be in ISO 8601 format")
	}
	if d = d.UTC(); !d.Equal(d.Truncate(24 * time.Hour)) {
		return time.Time{}, errLifecycleArg("'Date' must be at midnight GMT")
	}
	return d, nil
}

// checkTransitions refuses transitions with the error their shape
// deserves first (a bad date or count is InvalidArgument, as S3 says),
// then because Cairn has no storage class to move objects to.
func checkTransitions(lr lifecycleRule) error {
	for _, t := range slices.Concat(lr.Transitions, lr.NoncurrentVersionTransitions) {
		if t.Date != nil {
			if _, err := parseLifecycleDate(*t.Date); err != nil {
				return err
			}
		}
		for _, d := range []*int{t.Days, t.NoncurrentDays} {
			if d != nil && *d < 0 {
				return errLifecycleArg("'Days' for Transition action must be a non-negative integer")
			}
		}
	}
	return apiErr("InvalidStorageClass", http.StatusBadRequest,
		"Lifecycle transitions are not supported: this server has one storage class, STANDARD")
}

// renderRule returns the Rule element of a stored rule: the one it was
// put with, or, for a rule stored without it, one made of its fields.
func renderRule(r objstore.LifecycleRule) lifecycleRule {
	var lr lifecycleRule
	if len(r.Doc) > 0 && xml.Unmarshal(r.Doc, &lr) == nil {
		return lr
	}
	lr = lifecycleRule{ID: r.ID, Status: "Disabled"}
	if r.Enabled {
		lr.Status = "Enabled"
	}
	p := r.Prefix
	lr.Filter = &lifecycleFilter{Prefix: &p}
	if r.ExpirationDays > 0 {
		d := r.ExpirationDays
		lr.Expiration = &lifecycleExpiration{Days: &d}
	}
	if r.AbortIncompleteDays > 0 {
		d := r.AbortIncompleteDays
		lr.AbortIncompleteMultipartUpload = &lifecycleAbort{DaysAfterInitiation: &d}
	}
	return lr
}

// expirationHeader sets x-amz-expiration on a response about info when
// a lifecycle rule of the request's bucket expires it.
func (s *Server) expirationHeader(h http.Header, req *request, info objstore.ObjectInfo) {
	if !info.IsLatest {
		return // a noncurrent version is not the Expiration action's
	}
	b, err := s.bucketOf(req)
	if err != nil || len(b.Lifecycle) == 0 {
		return
	}
	if at, id, ok := s.store.Expiration(b.Lifecycle, info); ok {
		h.Set("x-amz-expiration", fmt.Sprintf(`expiry-date="%s", rule-id="%s"`,
			at.Format(http.TimeFormat), url.PathEscape(id)))
	}
}
