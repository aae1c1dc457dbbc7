package s3

import (
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// Object lock: the bucket's configuration, versions' retention and legal
// hold. The store enforces the lock (objstore/lock.go: no locked version
// is removed, no active retention shortened without bypass); this file
// reads and writes the S3 forms of it and checks what the store cannot
// know: which headers a request may carry and whether the requester may
// bypass GOVERNANCE retention (s3:BypassGovernanceRetention).
//
// The bucket's default retention is its document cfgObjectLock, in the
// compact form "MODE/Nd" or "MODE/Ny" (GOVERNANCE/30d, COMPLIANCE/1y);
// no document means no default retention. Whether lock is enabled at all
// is BucketInfo.ObjectLock.

var (
	errNoLockConfig       = apiErr("InvalidRequest", http.StatusBadRequest, "Bucket is missing Object Lock Configuration")
	errLockConfigNotFound = apiErr("ObjectLockConfigurationNotFoundError", http.StatusNotFound,
		"Object Lock configuration does not exist for this bucket")
	errNoObjectLock = apiErr("NoSuchObjectLockConfiguration", http.StatusNotFound,
		"The specified object does not have a ObjectLock configuration")
	errInvalidRetentionPeriod = apiErr("InvalidRetentionPeriod", http.StatusBadRequest,
		"Default retention period must be a positive integer value.")
	errPastRetention = apiErr("InvalidArgument", http.StatusBadRequest, "The retain until date must be in the future!")
	errLockChecksum  = apiErr("InvalidRequest", http.StatusBadRequest,
		"Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters")
)

// S3's bounds on a default retention period.
const (
	maxRetentionDays  = 36500
	maxRetentionYears = 100
)

type objectLockConfiguration struct {
	XMLName           xml.Name  `xml:"ObjectLockConfiguration"`
	NS                string    `xml:"xmlns,attr,omitempty"`
	ObjectLockEnabled string    `xml:"ObjectLockEnabled,omitempty"`
	Rule              *lockRule `xml:"Rule,omitempty"`
}

type lockRule struct {
	DefaultRetention *defaultRetention `xml:"DefaultRetention"`
}

type defaultRetention struct {
	Mode  string `xml:"Mode"`
	Days  *int   `xml:"Days,omitempty"`
	Years *int   `xml:"Years,omitempty"`
}

type retentionXML struct {
	XMLName         xml.Name `xml:"Retention"`
	NS              string   `xml:"xmlns,attr,omitempty"`
	Mode            string   `xml:"Mode,omitempty"`
	RetainUntilDate string   `xml:"RetainUntilDate,omitempty"`
}

type legalHoldXML struct {
	XMLName xml.Name `xml:"LegalHold"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	Status  string   `xml:"Status"`
}

// lockDefault is a bucket's default retention: Mode and a period of N
// days or years.
type lockDefault struct {
	Mode  string
	N     int
	Years bool
}

func (d lockDefault) encode() string {
	unit := "d"
	if d.Years {
		unit = "y"
	}
	return d.Mode + "/" + strconv.Itoa(d.N) + unit
}

// until is the retain-until date of a version written at t.
func (d lockDefault) until(t time.Time) time.Time {
	if d.Years {
		return t.AddDate(d.N, 0, 0)
	}
	return t.AddDate(0, 0, d.N)
}

// decodeLockDefault reads cfgObjectLock.
func decodeLockDefault(s string) (lockDefault, error) {
	mode, period, ok := strings.Cut(s, "/")
	if !ok || !validMode(mode) || len(period) < 2 {
		return lockDefault{}, fmt.Errorf("s3: bad object lock record %q", s)
	}
	unit := period[len(period)-1]
	n, err := strconv.Atoi(period[:len(period)-1])
	if err != nil || (unit != 'd' && unit != 'y') || n <= 0 ||
		(unit == 'd' && n > maxRetentionDays) || (unit == 'y' && n > maxRetentionYears) {
		return lockDefault{}, fmt.Errorf("s3: bad object lock record %q", s)
	}
	return lockDefault{Mode: mode, N: n, Years: unit == 'y'}, nil
}

func validMode(m string) bool {
	return m == objstore.RetentionGovernance || m == objstore.RetentionCompliance
}

// parseLockConfig reads an ObjectLockConfiguration body: its default
// retention, nil when it has no rule.
func parseLockConfig(raw []byte) (*lockDefault, error) {
	var c objectLockConfiguration
	if err := decodeXMLBytes(raw, &c); err != nil {
		return nil, err
	}
	return checkLockConfig(c)
}

func checkLockConfig(c objectLockConfiguration) (*lockDefault, error) {
	if c.ObjectLockEnabled != "Enabled" {
		return nil, errMalformedXML
	}
	if c.Rule == nil {
		return nil, nil
	}
	r := c.Rule.DefaultRetention
	if r == nil || !validMode(r.Mode) || (r.Days == nil) == (r.Years == nil) {
		return nil, errMalformedXML
	}
	d := lockDefault{Mode: r.Mode}
	if r.Days != nil {
		d.N = *r.Days
		if d.N <= 0 || d.N > maxRetentionDays {
			return nil, errInvalidRetentionPeriod
		}
	} else {
		d.N, d.Years = *r.Years, true
		if d.N <= 0 || d.N > maxRetentionYears {
			return nil, errInvalidRetentionPeriod
		}
	}
	return &d, nil
}

// parseRetention reads a Retention body. An empty one (no mode, no date)
// removes the retention. now bounds the date: it must be in the future.
func parseRetention(raw []byte, now time.Time) (objstore.Retention, error) {
	var r retentionXML
	if err := decodeXMLBytes(raw, &r); err != nil {
		return objstore.Retention{}, err
	}
	return checkRetention(r, now)
}

func checkRetention(r retentionXML, now time.Time) (objstore.Retention, error) {
	if r.Mode == "" && r.RetainUntilDate == "" {
		return objstore.Retention{}, nil
	}
	if !validMode(r.Mode) {
		return objstore.Retention{}, errMalformedXML
	}
	until, err := parseLockDate(r.RetainUntilDate)
	if err != nil {
		return objstore.Retention{}, errMalformedXML
	}
	if !until.After(now) {
		return objstore.Retention{}, errPastRetention
	}
	return objstore.Retention{Mode: r.Mode, Until: until}, nil
}

// parseLockDate reads an ISO 8601 date-time as S3 writes them.
func parseLockDate(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// lockDate is how S3 writes a retain-until date.
func lockDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// parseLegalHold reads a LegalHold body: ON or OFF.
func parseLegalHold(raw []byte) (bool, error) {
	var h legalHoldXML
	if err := decodeXMLBytes(raw, &h); err != nil {
		return false, err
	}
	return checkLegalHold(h)
}

func checkLegalHold(h legalHoldXML) (bool, error) {
	switch h.Status {
	case "ON":
		return true, nil
	case "OFF":
		return false, nil
	}
	return false, errMalformedXML
}

// bucketLockOption reads CreateBucket's x-amz-bucket-object-lock-enabled.
func bucketLockOption(req *request) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(req.Header.Get("x-amz-bucket-object-lock-enabled"))); v {
	case "":
		return false, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, apiErr("InvalidArgument", http.StatusBadRequest, "x-amz-bucket-object-lock-enabled must be true or false.")
}

// bypassGovernance reports whether req asks to bypass GOVERNANCE
// retention (x-amz-bypass-governance-retention: true) and its requester
// is allowed to on bucket/key (s3:BypassGovernanceRetention). Without the
// permission the header is ignored, and the store refuses what the
// retention forbids.
func (s *Server) bypassGovernance(req *request, key string) bool {
	if !strings.EqualFold(strings.TrimSpace(req.Header.Get("x-amz-bypass-governance-retention")), "true") {
		return false
	}
	ok, err := s.allowed(req, "s3:BypassGovernanceRetention", req.bucket, key, nil)
	return ok && err == nil
}

// lockBucket returns the request's bucket, which must have object lock.
func (s *Server) lockBucket(req *request) (objstore.BucketInfo, error) {
	b, err := s.bucketOf(req)
	if err != nil {
		return b, err
	}
	if !b.ObjectLock {
		return b, errNoLockConfig
	}
	return b, nil
}

func (s *Server) getObjectLockConfig(w *recorder, req *request) error {
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	if !b.ObjectLock {
		return errLockConfigNotFound
	}
	res := objectLockConfiguration{NS: s3NS, ObjectLockEnabled: "Enabled"}
	if doc, ok := b.Config[cfgObjectLock]; ok {
		d, err := decodeLockDefault(string(doc))
		if err != nil {
			return err
		}
		n := d.N
		r := &defaultRetention{Mode: d.Mode}
		if d.Years {
			r.Years = &n
		} else {
			r.Days = &n
		}
		res.Rule = &lockRule{DefaultRetention: r}
	}
	return writeXML(w, res)
}

func (s *Server) putObjectLockConfig(w *recorder, req *request) error {
	var c objectLockConfiguration
	if err := decodeXML(req, &c, false); err != nil {
		return err
	}
	d, err := checkLockConfig(c)
	if err != nil {
		return err
	}
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	if !b.ObjectLock {
		if err := s.store.SetObjectLock(req.Context(), req.bucket); err != nil {
			return err
		}
	}
	var doc []byte
	if d != nil {
		doc = []byte(d.encode())
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgObjectLock, doc); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// lockedVersion heads the addressed version of a bucket with object lock.
func (s *Server) lockedVersion(w *recorder, req *request) (objstore.ObjectInfo, error) {
	if _, err := s.lockBucket(req); err != nil {
		return objstore.ObjectInfo{}, err
	}
	info, err := s.store.Head(req.Context(), req.bucket, req.key, objstore.GetOptions{VersionID: req.URL.Query().Get("versionId")})
	if err != nil {
		return info, s.objectError(w, req, err)
	}
	return info, nil
}

func (s *Server) getObjectRetention(w *recorder, req *request) error {
	info, err := s.lockedVersion(w, req)
	if err != nil {
		return err
	}
	r := info.Attrs.Retention
	if r.Mode == "" {
		return errNoObjectLock
	}
	versionHeader(w, info)
	return writeXML(w, retentionXML{NS: s3NS, Mode: r.Mode, RetainUntilDate: lockDate(r.Until)})
}

func (s *Server) putObjectRetention(w *recorder, req *request) error {
	if _, err := s.lockBucket(req); err != nil {
		return err
	}
	var x retentionXML
	if err := decodeXML(req, &x, false); err != nil {
		return err
	}
	r, err := checkRetention(x, time.Now())
	if err != nil {
		return err
	}
	info, err := s.store.SetRetention(req.Context(), req.bucket, req.key, req.URL.Query().Get("versionId"), r,
		s.bypassGovernance(req, req.key))
	if err != nil {
		return s.objectError(w, req, err)
	}
	versionHeader(w, info)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) getObjectLegalHold(w *recorder, req *request) error {
	info, err := s.lockedVersion(w, req)
	if err != nil {
		return err
	}
	// The store keeps a legal hold as on or off: a version that never
	// had one answers OFF rather than NoSuchObjectLockConfiguration.
	status := "OFF"
	if info.Attrs.LegalHold {
		status = "ON"
	}
	versionHeader(w, info)
	return writeXML(w, legalHoldXML{NS: s3NS, Status: status})
}

func (s *Server) putObjectLegalHold(w *recorder, req *request) error {
	if _, err := s.lockBucket(req); err != nil {
		return err
	}
	var x legalHoldXML
	if err := decodeXML(req, &x, false); err != nil {
		return err
	}
	on, err := checkLegalHold(x)
	if err != nil {
		return err
	}
	info, err := s.store.SetLegalHold(req.Context(), req.bucket, req.key, req.URL.Query().Get("versionId"), on)
	if err != nil {
		return s.objectError(w, req, err)
	}
	versionHeader(w, info)
	w.WriteHeader(http.StatusOK)
	return nil
}

// lockHeaderValues are a write's x-amz-object-lock-* headers, parsed.
type lockHeaderValues struct {
	any          bool // some lock header was given
	retention    objstore.Retention
	hasRetention bool
	legalHold    bool
	hasHold      bool
}

// parseLockHeaders reads x-amz-object-lock-mode and -retain-until-date
// (both or neither) and x-amz-object-lock-legal-hold (ON or OFF).
func parseLockHeaders(h http.Header, now time.Time) (lockHeaderValues, error) {
	var v lockHeaderValues
	mode, until, hold := h.Get("x-amz-object-lock-mode"), h.Get("x-amz-object-lock-retain-until-date"), h.Get("x-amz-object-lock-legal-hold")
	v.any = mode != "" || until != "" || hold != ""
	switch {
	case mode == "" && until == "":
	case mode == "" || until == "":
		return v, apiErr("InvalidArgument", http.StatusBadRequest,
			"x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied")
	case !validMode(mode):
		return v, apiErr("InvalidArgument", http.StatusBadRequest, "Unknown wormMode directive.")
	default:
		t, err := parseLockDate(until)
		if err != nil {
			return v, apiErr("InvalidArgument", http.StatusBadRequest, "The retain until date is not a valid ISO 8601 date-time.")
		}
		if !t.After(now) {
			return v, errPastRetention
		}
		v.retention, v.hasRetention = objstore.Retention{Mode: mode, Until: t}, true
	}
	switch hold {
	case "":
	case "ON", "OFF":
		v.legalHold, v.hasHold = hold == "ON", true
	default:
		return v, apiErr("InvalidArgument", http.StatusBadRequest, "Legal Hold must be either of 'ON' or 'OFF'")
	}
	return v, nil
}

// hasChecksum reports whether a write carries an integrity check S3
// accepts for Object Lock parameters: Content-MD5, an x-amz-checksum-*
// value (header or trailer) or x-amz-sdk-checksum-algorithm. Cairn also
// takes a signed payload hash (x-amz-content-sha256 of the whole body,
// which the signature check verifies): aws-sdk-go-v2 sends no other
// checksum over plain HTTP.
func hasChecksum(h http.Header) bool {
	if h.Get("Content-MD5") != "" || h.Get("x-amz-sdk-checksum-algorithm") != "" || isSHA256Hex(h.Get("x-amz-content-sha256")) ||
		strings.Contains(strings.ToLower(h.Get("x-amz-trailer")), "x-amz-checksum-") {
		return true
	}
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-amz-checksum-") && !strings.EqualFold(k, "x-amz-checksum-type") {
			return true
		}
	}
	return false
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// lockAttrs keeps the retention and legal hold of a write's
// x-amz-object-lock-* headers or, without retention headers, the bucket's
// default retention. Lock headers need a bucket with object lock, and a
// PutObject carrying them, or given a default retention, a checksum (as
// AWS, which refuses such a PUT without Content-MD5 or x-amz-checksum-*).
func (s *Server) lockAttrs(req *request, a *objstore.Attrs) error {
	now := time.Now()
	v, err := parseLockHeaders(req.Header, now)
	if err != nil {
		return err
	}
	if !v.any {
		b, err := s.bucketOf(req)
		if err != nil || !b.ObjectLock {
			return nil // a missing bucket is the write's own error to report
		}
		if err := applyDefault(b, a, now); err != nil {
			return err
		}
		if a.Retention.Mode != "" && req.api == "PutObject" && !hasChecksum(req.Header) {
			return errLockChecksum
		}
		return nil
	}
	b, err := s.lockBucket(req)
	if err != nil {
		return err
	}
	if req.api == "PutObject" && !hasChecksum(req.Header) {
		return errLockChecksum
	}
	if v.hasHold {
		a.LegalHold = v.legalHold
	}
	if v.hasRetention {
		a.Retention = v.retention
		return nil
	}
	return applyDefault(b, a, now)
}

// applyDefault gives a new version of b its default retention, if any.
func applyDefault(b objstore.BucketInfo, a *objstore.Attrs, now time.Time) error {
	doc, ok := b.Config[cfgObjectLock]
	if !ok {
		return nil
	}
	d, err := decodeLockDefault(string(doc))
	if err != nil {
		return err
	}
	a.Retention = objstore.Retention{Mode: d.Mode, Until: d.until(now).UTC()}
	return nil
}

// lockHeaders sets the x-amz-object-lock-* headers.
func (s *Server) lockHeaders(h http.Header, info objstore.ObjectInfo) {
	if r := info.Attrs.Retention; r.Mode != "" {
		h.Set("x-amz-object-lock-mode", r.Mode)
		h.Set("x-amz-object-lock-retain-until-date", lockDate(r.Until))
	}
	if info.Attrs.LegalHold {
		h.Set("x-amz-object-lock-legal-hold", "ON")
	}
}
