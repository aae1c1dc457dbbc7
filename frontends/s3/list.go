package s3

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/objstore"
)

// maxList is the most entries one listing page returns, as S3.
const maxList = 1000

func maxKeysParam(v string) (int, error) {
	if v == "" {
		return maxList, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, apiErr("InvalidArgument", 400, "Provided max-keys not an integer or within integer range.")
	}
	return min(n, maxList), nil
}

// encoder applies encoding-type=url to keys in a listing.
type encoder bool

func newEncoder(v string) (encoder, error) {
	switch v {
	case "":
		return false, nil
	case "url":
		return true, nil
	}
	return false, apiErr("InvalidArgument", 400, "Invalid Encoding Method specified in Request.")
}

func (e encoder) enc(s string) string {
	if !e {
		return s
	}
	// S3 encodes like a query value but keeps '/' readable and writes a
	// space as %20 (QueryEscape's '+' is a space only; a '+' is %2B).
	return strings.NewReplacer("%2F", "/", "+", "%20").Replace(url.QueryEscape(s))
}

func (e encoder) name() string {
	if e {
		return "url"
	}
	return ""
}

// listParams reads the query, its page size (under maxName) and its
// encoding-type, which every listing takes.
func listParams(req *request, maxName string) (url.Values, int, encoder, error) {
	q := req.URL.Query()
	max, err := maxKeysParam(q.Get(maxName))
	if err != nil {
		return nil, 0, false, err
	}
	e, err := newEncoder(q.Get("encoding-type"))
	return q, max, e, err
}

// listPage runs one store listing; MaxKeys 0 answers an empty page.
func (s *Server) listPage(req *request, opt objstore.ListOptions) (objstore.ListPage, error) {
	if opt.MaxKeys == 0 {
		_, err := s.store.HeadBucket(req.Context(), req.bucket)
		return objstore.ListPage{}, err
	}
	return s.store.List(req.Context(), req.bucket, opt)
}

func (s *Server) listObjectsV1(w *recorder, req *request) error {
	q, max, e, err := listParams(req, "max-keys")
	if err != nil {
		return err
	}
	marker := q.Get("marker")
	page, err := s.listPage(req, objstore.ListOptions{Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), After: marker, MaxKeys: max})
	if err != nil {
		return err
	}
	own := s.owner(req)
	// ListObjects (v1) sends its Prefix as given, encoding-type or not:
	// the SDKs decode only Delimiter, Marker, NextMarker and the keys.
	res := listBucketResult{NS: s3NS, Name: req.bucket, Prefix: q.Get("prefix"), Marker: ptr(e.enc(marker)),
		MaxKeys: max, Delimiter: e.enc(q.Get("delimiter")), EncodingType: e.name(), IsTruncated: page.IsTruncated}
	if page.IsTruncated && q.Get("delimiter") != "" {
		res.NextMarker = e.enc(page.NextMarker)
	}
	fillList(&res, page, e, &own)
	return writeXML(w, res)
}

func (s *Server) listObjectsV2(w *recorder, req *request) error {
	q, max, e, err := listParams(req, "max-keys")
	if err != nil {
		return err
	}
	after := q.Get("start-after")
	token := q.Get("continuation-token")
	if token != "" { // an empty token is a first page, as in S3
		raw, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil {
			return apiErr("InvalidArgument", 400, "The continuation token provided is incorrect.")
		}
		if string(raw) > after {
			after = string(raw)
		}
	}
	page, err := s.listPage(req, objstore.ListOptions{Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), After: after, MaxKeys: max})
	if err != nil {
		return err
	}
	n := len(page.Objects) + len(page.CommonPrefixes)
	res := listBucketResult{NS: s3NS, Name: req.bucket, Prefix: e.enc(q.Get("prefix")), StartAfter: e.enc(q.Get("start-after")),
		KeyCount: &n, MaxKeys: max, Delimiter: e.enc(q.Get("delimiter")),
		EncodingType: e.name(), IsTruncated: page.IsTruncated}
	if _, ok := q["continuation-token"]; ok {
		res.ContinuationToken = &token
	}
	if page.IsTruncated {
		res.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(page.NextMarker))
	}
	var own *owner
	if q.Get("fetch-owner") == "true" {
		o := s.owner(req)
		own = &o
	}
	fillList(&res, page, e, own)
	return writeXML(w, res)
}

func fillList(res *listBucketResult, page objstore.ListPage, e encoder, own *owner) {
	for _, o := range page.Objects {
		res.Contents = append(res.Contents, objectItem{Key: e.enc(o.Key), LastModified: iso8601(o.ModTime),
			ETag: quote(o.ETag), Size: plainSize(o), Owner: own, StorageClass: "STANDARD"})
	}
	for _, p := range page.CommonPrefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: e.enc(p)})
	}
}

func ptr[T any](v T) *T { return &v }

func (s *Server) listObjectVersions(w *recorder, req *request) error {
	q, max, e, err := listParams(req, "max-keys")
	if err != nil {
		return err
	}
	res := listVersionsResult{NS: s3NS, Name: req.bucket, Prefix: e.enc(q.Get("prefix")), KeyMarker: e.enc(q.Get("key-marker")),
		VersionIDMarker: q.Get("version-id-marker"), MaxKeys: max, Delimiter: e.enc(q.Get("delimiter")), EncodingType: e.name()}
	if max == 0 {
		if _, err := s.store.HeadBucket(req.Context(), req.bucket); err != nil {
			return err
		}
		return writeXML(w, res)
	}
	page, err := s.store.ListVersions(req.Context(), req.bucket, objstore.ListVersionsOptions{
		Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), KeyMarker: q.Get("key-marker"),
		VersionIDMarker: q.Get("version-id-marker"), MaxKeys: max})
	if err != nil {
		return err
	}
	res.IsTruncated = page.IsTruncated
	res.NextKeyMarker, res.NextVersionIDMarker = e.enc(page.NextKeyMarker), page.NextVersionIDMarker
	own := s.owner(req)
	for _, v := range page.Versions {
		it := versionItem{Key: e.enc(v.Key), VersionID: v.VersionID, IsLatest: v.IsLatest, LastModified: iso8601(v.ModTime), Owner: own}
		if v.DeleteMarker {
			it.XMLName.Local = "DeleteMarker"
		} else {
			it.XMLName.Local = "Version"
			it.ETag, it.Size, it.StorageClass = quote(v.ETag), ptr(plainSize(v)), "STANDARD"
		}
		res.Versions = append(res.Versions, it)
	}
	for _, p := range page.CommonPrefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: e.enc(p)})
	}
	return writeXML(w, res)
}
