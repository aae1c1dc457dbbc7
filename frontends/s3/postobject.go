package s3

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/postform"
	"github.com/cairnstore/cairn/objstore"
)

// Browser uploads: POST object, a multipart/form-data form to the bucket
// with a policy document and its signature. Package postform parses the
// form and the policy and checks the signature; this file authorizes the
// upload, turns the form's fields into the headers a PUT would carry and
// streams the file part into the store.

const (
	// maxFormFields bounds the fields before the file part (S3 takes a
	// policy of up to 20 KB; 64 KiB leaves room for the other fields).
	maxFormFields = 64 << 10
	// maxPostObject is the largest file a POST takes (S3's 5 GB).
	maxPostObject = 5 << 30
)

// postResponse is the body of success_action_status 201.
type postResponse struct {
	XMLName  xml.Name `xml:"PostResponse"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

func (s *Server) postObject(w *recorder, req *request) error {
	var body io.Reader = req.Body
	if req.body != nil {
		body = req.body
	}
	if body == nil {
		body = http.NoBody
	}
	form, err := postform.Read(body, req.Header.Get("Content-Type"), maxFormFields)
	if err != nil {
		return err
	}
	auth, err := postform.Authenticate(form.Fields, s.opt.Secret)
	if err != nil {
		return err
	}
	key, err := form.Key()
	if err != nil {
		return err
	}
	req.key = key // for the access log and error responses
	lo, hi := int64(0), int64(maxPostObject)
	if auth.Version != 0 {
		policy, err := postform.ParsePolicy(form.Fields["policy"])
		if err != nil {
			return err
		}
		// S3 checks the bucket as if it were a field, and the key as
		// ${filename} made it.
		fields := maps.Clone(form.Fields)
		fields["bucket"], fields["key"] = req.bucket, key
		policyFields(policy, fields)
		if err := policy.Check(fields, time.Now()); err != nil {
			return err
		}
		if l, h, ok := policy.LengthRange(); ok {
			lo, hi = l, min(h, hi)
		}
	}
	req.auth.AccessKey = auth.AccessKey
	if err := s.applySession(req, form.Fields["x-amz-security-token"]); err != nil {
		return err
	}
	sub, err := formRequest(req, form.Fields)
	if err != nil {
		return err
	}
	// serve could not see the form's signer: the same decision a PUT gets
	// is taken here, on the form's fields as headers (x-amz-acl...).
	if err := s.may(sub, "s3:"+action("PostObject"), req.bucket, key); err != nil {
		return err
	}
	meta, err := metaFromRequest(sub.Header)
	if err != nil {
		return err
	}
	sum, err := parseFormChecksum(form.Fields)
	if err != nil {
		return err
	}
	opt := objstore.PutOptions{ContentType: sub.Header.Get("Content-Type"), Meta: meta, FinalMeta: sum.meta()}
	if opt.Attrs, err = s.newAttrs(sub); err != nil {
		return err
	}
	// The checksum is of the plaintext: checked before any encryption.
	file := sum.verify(&rangedBody{r: form.File, min: lo, max: hi})
	size := int64(-1)
	// The form's encryption fields, or the bucket's default, as on PUT.
	enc, err := s.sseForWrite(sub)
	if err != nil {
		return err
	}
	if enc != nil {
		if file, size, err = s.wrapPut(enc, file, size, &opt); err != nil {
			return err
		}
		defer enc.done()
	}
	info, err := s.store.Put(req.Context(), req.bucket, key, file, size, opt)
	if err != nil {
		return err
	}
	if enc != nil {
		enc.headers(w.Header())
	}
	return s.postResult(w, req, form.Fields, key, info)
}

// formHeader maps a form field to the header a PUT carries for it.
var formHeader = map[string]string{
	"acl":                 "X-Amz-Acl",
	"content-type":        "Content-Type",
	"cache-control":       "Cache-Control",
	"content-disposition": "Content-Disposition",
	"content-encoding":    "Content-Encoding",
	"content-language":    "Content-Language",
	"expires":             "Expires",
}

// notHeaders are the x-amz-* fields that sign the form rather than
// describe the object.
var notHeaders = map[string]bool{
	"x-amz-algorithm": true, "x-amz-credential": true, "x-amz-date": true,
	"x-amz-signature": true, "x-amz-security-token": true,
}

// formRequest returns req with its headers replaced by those a PUT of the
// same object would carry, built from the form's fields: acl becomes
// x-amz-acl, tagging (Tagging XML) becomes x-amz-tagging (URL-encoded),
// Content-Type and the stored standard headers keep their names, and so
// does every x-amz-* field (x-amz-meta-*, storage class, encryption,
// object lock). So the code that reads a PUT's headers - metaFromRequest
// here, and through newAttrs the ACL, tagging and object-lock editors,
// owned by their concerns - applies to a POST unchanged, with no
// form-specific branch in it.
func formRequest(req *request, fields map[string]string) (*request, error) {
	h := http.Header{}
	for name, v := range fields {
		switch hn, ok := formHeader[name]; {
		case ok:
			h.Set(hn, v)
		case name == "tagging":
			q, err := postform.TaggingQuery(v)
			if err != nil {
				return nil, err
			}
			h.Set("X-Amz-Tagging", q)
		case strings.HasPrefix(name, "x-amz-") && !notHeaders[name]:
			h.Set(name, v)
		}
	}
	sub := *req
	sub.Request = req.WithContext(req.Context())
	sub.Header = h
	return &sub, nil
}

// postResult answers a stored upload: a 303 to success_action_redirect
// (or redirect) with bucket, key and etag added to its query; otherwise
// success_action_status 200, 201 (with a PostResponse) or 204, the
// default, for anything else.
func (s *Server) postResult(w *recorder, req *request, fields map[string]string, key string, info objstore.ObjectInfo) error {
	etag := quote(info.ETag)
	loc := objectLocation(req, key)
	w.Header().Set("ETag", etag)
	w.Header().Set("Location", loc)
	if info.VersionID != objstore.NullVersion {
		w.Header().Set("x-amz-version-id", info.VersionID)
	}
	redirect := fields["success_action_redirect"]
	if redirect == "" {
		redirect = fields["redirect"]
	}
	if u, err := url.Parse(redirect); redirect != "" && err == nil && u.Scheme != "" && u.Host != "" {
		sep := "?"
		if u.RawQuery != "" {
			sep = "&"
		} else if strings.HasSuffix(redirect, "?") {
			sep = ""
		}
		w.Header().Set("Location", redirect+sep+"bucket="+url.QueryEscape(req.bucket)+
			"&key="+url.QueryEscape(key)+"&etag="+url.QueryEscape(etag))
		w.WriteHeader(http.StatusSeeOther)
		return nil
	}
	switch fields["success_action_status"] {
	case "200":
		w.WriteHeader(http.StatusOK)
	case "201":
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusCreated)
		if _, err := w.Write([]byte(xml.Header)); err != nil {
			return err
		}
		return xml.NewEncoder(w).Encode(postResponse{Location: loc, Bucket: req.bucket, Key: key, ETag: etag})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

// objectLocation is the URL of the uploaded object, in the addressing
// style the request used.
func objectLocation(req *request, key string) string {
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	path := "/" + (&url.URL{Path: key}).EscapedPath()
	if strings.Trim(req.URL.Path, "/") == req.bucket {
		path = "/" + req.bucket + path
	}
	return scheme + "://" + req.Host + path
}

// rangedBody streams the file part into the store and fails it, so that
// nothing is committed, when the file is outside the policy's
// content-length-range or the form ends inside it.
type rangedBody struct {
	r        io.Reader
	n        int64
	min, max int64
}

var (
	errPostTooLarge = &APIError{"EntityTooLarge", http.StatusBadRequest, "Your proposed upload exceeds the maximum allowed size"}
	errPostTooSmall = &APIError{"EntityTooSmall", http.StatusBadRequest, "Your proposed upload is smaller than the minimum allowed size"}
)

func (b *rangedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	switch {
	case b.n > b.max:
		return n, errPostTooLarge
	case errors.Is(err, io.EOF) && b.n < b.min:
		return n, errPostTooSmall
	case err != nil && !errors.Is(err, io.EOF):
		return n, fmt.Errorf("%w: the form ends inside the file: %v", objstore.ErrIncompleteBody, err)
	}
	return n, err
}
