package s3

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/cairnstore/cairn/objstore"
)

// Object and bucket tagging.
//
// A version's tags are kept in Attrs.Sys[sysTags] and a bucket's in its
// document cfgTagging, both in the encoding of the x-amz-tagging header:
// URL-encoded key=value pairs joined by "&", sorted by key (as RGW and
// the ceph s3-tests expect GetObjectTagging to list them). An empty tag
// set is no record at all. decodeTags reads it back (fuzzed: the record
// is ours, but a bad one must fail cleanly, not panic).

// S3's tagging limits.
const (
	maxObjectTags  = 10
	maxBucketTags  = 50
	maxTagKeyLen   = 128 // Unicode characters
	maxTagValueLen = 256
)

// tag is one key-value pair.
type tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// tagging is the XML body of Get/PutObjectTagging and Get/PutBucketTagging.
type tagging struct {
	XMLName xml.Name `xml:"Tagging"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	TagSet  *struct {
		Tags []tag `xml:"Tag"`
	} `xml:"TagSet"`
}

func errInvalidTag(format string, args ...any) *APIError {
	return apiErr("InvalidTag", http.StatusBadRequest, format, args...)
}

var errBadTaggingHeader = apiErr("InvalidArgument", http.StatusBadRequest,
	"The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.")

// validateTags applies S3's rules to a tag set: at most max tags, unique
// keys of 1 to 128 characters, values of up to 256, no "aws:" prefix and
// only letters, digits, spaces and + - = . _ : / @. It sorts tags by key.
func validateTags(tags []tag, max int) error {
	if len(tags) > max {
		if max == maxObjectTags {
			return errInvalidTag("Object tags cannot be greater than %d", max)
		}
		return errInvalidTag("Bucket tag count cannot be greater than %d", max)
	}
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		switch {
		case t.Key == "" || len([]rune(t.Key)) > maxTagKeyLen || !validTagText(t.Key):
			return errInvalidTag("The TagKey you have provided is invalid")
		case len([]rune(t.Value)) > maxTagValueLen || !validTagText(t.Value):
			return errInvalidTag("The TagValue you have provided is invalid")
		case strings.HasPrefix(strings.ToLower(t.Key), "aws:"):
			return errInvalidTag("Your TagKey cannot be prefixed with aws:")
		case seen[t.Key]:
			return errInvalidTag("Cannot provide multiple Tags with the same key")
		}
		seen[t.Key] = true
	}
	slices.SortFunc(tags, func(a, b tag) int { return strings.Compare(a.Key, b.Key) })
	return nil
}

// validTagText reports whether s holds only the characters S3 allows in
// tags: Unicode letters, digits and spaces, and + - = . _ : / @.
func validTagText(s string) bool {
	for _, r := range s {
		switch {
		case r == '+', r == '-', r == '=', r == '.', r == '_', r == ':', r == '/', r == '@':
		case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsSpace(r), unicode.IsMark(r):
		default:
			return false
		}
	}
	return true
}

// encodeTags is the record of a (validated) tag set; "" for none.
func encodeTags(tags []tag) string {
	var b strings.Builder
	for i, t := range tags {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(t.Key))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(t.Value))
	}
	return b.String()
}

// decodeTags parses the query form (a record, or the x-amz-tagging
// header) keeping the pairs' order; "k" alone is k with an empty value.
func decodeTags(s string) ([]tag, error) {
	if s == "" {
		return nil, nil
	}
	var out []tag
	for _, pair := range strings.Split(s, "&") {
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return nil, err
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, err
		}
		out = append(out, tag{key, val})
	}
	return out, nil
}

// parseTaggingHeader reads x-amz-tagging: malformed encoding or a key
// given twice is InvalidArgument, a tag breaking the rules InvalidTag.
func parseTaggingHeader(h string) ([]tag, error) {
	tags, err := decodeTags(h)
	if err != nil {
		return nil, errBadTaggingHeader
	}
	seen := map[string]bool{}
	for _, t := range tags {
		if seen[t.Key] {
			return nil, errBadTaggingHeader
		}
		seen[t.Key] = true
	}
	if err := validateTags(tags, maxObjectTags); err != nil {
		return nil, err
	}
	return tags, nil
}

// parseTaggingXML reads a Tagging body holding at most max tags.
func parseTaggingXML(raw []byte, max int) ([]tag, error) {
	var t tagging
	if err := decodeXMLBytes(raw, &t); err != nil {
		return nil, err
	}
	return checkTagging(t, max)
}

// checkTagging validates a decoded Tagging body.
func checkTagging(t tagging, max int) ([]tag, error) {
	if t.TagSet == nil {
		return nil, errMalformedXML
	}
	tags := t.TagSet.Tags
	if err := validateTags(tags, max); err != nil {
		return nil, err
	}
	return tags, nil
}

// readTagging reads the request's Tagging body.
func readTagging(req *request, max int) ([]tag, error) {
	var t tagging
	if err := decodeXML(req, &t, false); err != nil {
		return nil, err
	}
	return checkTagging(t, max)
}

func taggingResponse(tags []tag) tagging {
	res := tagging{NS: s3NS}
	res.TagSet = &struct {
		Tags []tag `xml:"Tag"`
	}{Tags: tags}
	return res
}

// versionHeader sets x-amz-version-id for a version of a versioned bucket.
func versionHeader(w http.ResponseWriter, info objstore.ObjectInfo) {
	if info.VersionID != "" && info.VersionID != objstore.NullVersion {
		w.Header().Set("x-amz-version-id", info.VersionID)
	}
}

func (s *Server) getObjectTagging(w *recorder, req *request) error {
	info, err := s.store.Head(req.Context(), req.bucket, req.key, objstore.GetOptions{VersionID: req.URL.Query().Get("versionId")})
	if err != nil {
		return s.objectError(w, req, err)
	}
	tags, err := decodeTags(info.Attrs.Sys[sysTags])
	if err != nil {
		return err
	}
	versionHeader(w, info)
	return writeXML(w, taggingResponse(tags))
}

func (s *Server) putObjectTagging(w *recorder, req *request) error {
	tags, err := readTagging(req, maxObjectTags)
	if err != nil {
		return err
	}
	return s.setObjectTags(w, req, tags, http.StatusOK)
}

func (s *Server) deleteObjectTagging(w *recorder, req *request) error {
	return s.setObjectTags(w, req, nil, http.StatusNoContent)
}

// setObjectTags replaces the tags of the addressed version.
func (s *Server) setObjectTags(w *recorder, req *request, tags []tag, status int) error {
	rec := encodeTags(tags)
	info, err := s.store.SetAttrs(req.Context(), req.bucket, req.key, req.URL.Query().Get("versionId"),
		func(_ objstore.ObjectInfo, a *objstore.Attrs) error {
			if rec == "" {
				delete(a.Sys, sysTags)
			} else {
				setSys(a, sysTags, rec)
			}
			return nil
		})
	if err != nil {
		return s.objectError(w, req, err)
	}
	versionHeader(w, info)
	w.WriteHeader(status)
	return nil
}

var errNoSuchTagSet = apiErr("NoSuchTagSet", http.StatusNotFound, "The TagSet does not exist")

func (s *Server) getBucketTagging(w *recorder, req *request) error {
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	doc, ok := b.Config[cfgTagging]
	if !ok {
		return errNoSuchTagSet
	}
	tags, err := decodeTags(string(doc))
	if err != nil {
		return err
	}
	return writeXML(w, taggingResponse(tags))
}

func (s *Server) putBucketTagging(w *recorder, req *request) error {
	tags, err := readTagging(req, maxBucketTags)
	if err != nil {
		return err
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgTagging, []byte(encodeTags(tags))); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteBucketTagging(w *recorder, req *request) error {
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgTagging, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// isCopy reports whether req copies an object (CopyObject): its tags
// follow x-amz-tagging-directive.
func isCopy(req *request) bool { return req.Header.Get("x-amz-copy-source") != "" }

// tagAttrs keeps the tags of a write's x-amz-tagging header (PUT, POST,
// CreateMultipartUpload, and a copy with x-amz-tagging-directive REPLACE;
// a copy without it keeps its source's tags, see copyAttrs).
func (s *Server) tagAttrs(req *request, a *objstore.Attrs) error {
	if isCopy(req) {
		switch d := req.Header.Get("x-amz-tagging-directive"); d {
		case "", "COPY":
			return nil
		case "REPLACE":
		default:
			return apiErr("InvalidArgument", http.StatusBadRequest, "Unknown tagging directive.")
		}
	}
	h := req.Header.Get("x-amz-tagging")
	if h == "" {
		return nil
	}
	tags, err := parseTaggingHeader(h)
	if err != nil {
		return err
	}
	if rec := encodeTags(tags); rec != "" {
		setSys(a, sysTags, rec)
	}
	return nil
}

// copyKeepsTags reports whether a copy keeps its source's tags
// (x-amz-tagging-directive COPY, the default; tagAttrs refuses other
// values than COPY and REPLACE).
func (s *Server) copyKeepsTags(req *request) bool {
	return req.Header.Get("x-amz-tagging-directive") != "REPLACE"
}

// tagHeaders sets x-amz-tagging-count.
func (s *Server) tagHeaders(h http.Header, info objstore.ObjectInfo) {
	if rec := info.Attrs.Sys[sysTags]; rec != "" {
		h.Set("x-amz-tagging-count", strconv.Itoa(strings.Count(rec, "&")+1))
	}
}

// objectTags are the tags of a version, for a policy's
// s3:ExistingObjectTag/<key> condition.
func objectTags(info objstore.ObjectInfo) (map[string]string, error) {
	return tagMap(decodeTags(info.Attrs.Sys[sysTags]))
}

// requestTags are the tags a write's x-amz-tagging header asks for, for a
// policy's s3:RequestObjectTag/<key> condition (empty without the header;
// an error when it is not valid).
func requestTags(req *request) (map[string]string, error) {
	h := req.Header.Get("x-amz-tagging")
	if h == "" {
		return map[string]string{}, nil
	}
	return tagMap(parseTaggingHeader(h))
}

func tagMap(tags []tag, err error) (map[string]string, error) {
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	return m, nil
}
