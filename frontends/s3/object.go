package s3

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairnstore/cairn/internal/httpx"
	"github.com/cairnstore/cairn/objstore"
)

func urlUnescape(s string) (string, error) { return url.PathUnescape(s) }

// maxObjectSize is S3's largest single PUT.
const maxObjectSize = 5 << 40

// smallBody is the largest GET body sent from one exact-size buffer;
// larger ones stream through pooled 1 MiB buffers.
const smallBody = 256 << 10

// exactBody reads exactly size bytes of the request body and then reads
// once more, so that the verifying sigv4 reader reaches its end (and
// checks payload hashes, chunk signatures and trailing checksums) before
// the store sees the last byte: a bad payload then fails the write before
// anything is committed.
type exactBody struct {
	r         io.Reader
	remaining int64
}

func (b *exactBody) Read(p []byte) (int, error) {
	if b.remaining <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.r.Read(p)
	b.remaining -= int64(n)
	if err == io.EOF {
		if b.remaining > 0 {
			return n, objstore.ErrIncompleteBody
		}
		return n, io.EOF
	}
	if err != nil {
		return n, err
	}
	if b.remaining == 0 {
		var one [1]byte
		m, err := b.r.Read(one[:])
		for m == 0 && err == nil {
			m, err = b.r.Read(one[:])
		}
		switch {
		case m > 0:
			return n, fmt.Errorf("%w: body longer than declared", objstore.ErrIncompleteBody)
		case err != io.EOF:
			return n, err
		}
		return n, io.EOF
	}
	return n, nil
}

// bodyOf returns the request body limited to its declared size.
func bodyOf(req *request) (io.Reader, int64, error) {
	if req.body == nil {
		return http.NoBody, 0, nil
	}
	size := req.body.Size()
	if size < 0 {
		if !chunkedTE(req.Request) {
			return nil, 0, errMissingLength
		}
		// Transfer-Encoding: chunked with no length: read to the end,
		// no further than the largest object.
		return &cappedBody{r: req.body, remaining: maxObjectSize}, -1, nil
	}
	if size > maxObjectSize {
		return nil, 0, errEntityTooLarge
	}
	return &exactBody{r: req.body, remaining: size}, size, nil
}

// chunkedTE reports whether the request body came with HTTP chunked
// transfer encoding (net/http moves the header to TransferEncoding).
func chunkedTE(r *http.Request) bool {
	for _, te := range r.TransferEncoding {
		if strings.EqualFold(te, "chunked") {
			return true
		}
	}
	return false
}

// cappedBody is a body of unknown length that fails once it passes
// remaining bytes.
type cappedBody struct {
	r         io.Reader
	remaining int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.remaining -= int64(n)
	if b.remaining < 0 {
		return n, errEntityTooLarge
	}
	return n, err
}

func (s *Server) putObject(w *recorder, req *request) error {
	if off, ok := req.Header[http.CanonicalHeaderKey(hdrWriteOffset)]; ok {
		return s.appendObject(w, req, off[0])
	}
	body, size, err := bodyOf(req)
	if err != nil {
		return err
	}
	md5sum, err := contentMD5(req.Header)
	if err != nil {
		return err
	}
	meta, err := metaFromRequest(req.Header)
	if err != nil {
		return err
	}
	opt := objstore.PutOptions{
		ContentType: req.Header.Get("Content-Type"),
		Meta:        meta,
		IfMatch:     req.Header.Get("If-Match"),
		IfNoneMatch: req.Header.Get("If-None-Match"),
		ContentMD5:  md5sum,
		FinalMeta:   s.finalChecksum(req),
	}
	if opt.Attrs, err = s.newAttrs(req); err != nil {
		return err
	}
	enc, err := s.sseForWrite(req)
	if err != nil {
		return err
	}
	if enc != nil {
		if body, size, err = s.wrapPut(enc, body, size, &opt); err != nil {
			return err
		}
		defer enc.done()
	}
	info, err := s.store.Put(req.Context(), req.bucket, req.key, body, size, opt)
	if err != nil {
		return err
	}
	if enc != nil {
		enc.headers(w.Header())
	}
	w.Header().Set("ETag", quote(info.ETag))
	if info.VersionID != objstore.NullVersion {
		w.Header().Set("x-amz-version-id", info.VersionID)
	}
	s.expirationHeader(w.Header(), req, info)
	for k, v := range info.Meta {
		if strings.HasPrefix(k, "x-amz-checksum-") {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// finalChecksum stores the checksum the client sent (header or trailer),
// verified by the sigv4 reader, once the body has been read.
func (s *Server) finalChecksum(req *request) func(map[string]string) {
	if req.body == nil {
		return nil
	}
	return func(m map[string]string) {
		if algo, v, ok := req.body.Checksum(); ok {
			m["x-amz-checksum-"+algo] = v
		}
	}
}

func (s *Server) headObject(w *recorder, req *request) error {
	return s.serveObject(w, req, false)
}

func (s *Server) getObject(w *recorder, req *request) error {
	return s.serveObject(w, req, true)
}

func (s *Server) serveObject(w *recorder, req *request, withBody bool) error {
	q := req.URL.Query()
	r, err := s.store.Open(req.Context(), req.bucket, req.key, objstore.GetOptions{VersionID: q.Get("versionId")})
	if err != nil {
		if hidden := s.hideMissing(req, err); hidden != nil {
			return hidden
		}
		return s.objectError(w, req, err)
	}
	defer func() { _ = r.Close() }()
	info := r.Info()
	sr, err := s.sseForRead(req, info, "")
	if err != nil {
		return err
	}
	if sr != nil {
		info = sr.view(info)
	}
	if err := checkConditions(req.Request, info); err != nil {
		if errors.Is(err, errNotModified) {
			w.Header().Set("ETag", quote(info.ETag))
			w.Header().Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
		}
		return err
	}
	start, length, partial := int64(0), info.Size, false
	if pn := q.Get("partNumber"); pn != "" {
		n, err := strconv.Atoi(pn)
		if err != nil || n < 1 || n > objstore.MaxPartNumber {
			return apiErr("InvalidArgument", 400, "Part number must be an integer between 1 and 10000, inclusive.")
		}
		switch {
		case info.PartsCount == 0 && n == 1:
		case n > info.PartsCount:
			// AWS's answer (ceph's s3-tests expect 400 InvalidPart).
			return apiErr("InvalidPartNumber", http.StatusRequestedRangeNotSatisfiable, "The requested partnumber is not satisfiable")
		default:
			for _, sz := range info.PartSizes[:n-1] {
				start += sz
			}
			length, partial = info.PartSizes[n-1], true
		}
	} else if rng := req.Header.Get("Range"); rng != "" {
		st, ln, ok, err := parseRange(rng, info.Size)
		if err != nil {
			w.Header().Set("Content-Range", "bytes */"+fmtInt(info.Size))
			return err
		}
		if ok {
			start, length, partial = st, ln, true
		}
	}
	writeObjectHeaders(w, req.Request, info, start == 0 && length == info.Size)
	s.attrHeaders(w.Header(), info)
	s.expirationHeader(w.Header(), req, info)
	if sr != nil {
		sr.headers(w.Header())
	}
	sandboxHeaders(w.Header())
	w.Header().Set("Content-Length", fmtInt(length))
	status := http.StatusOK
	if partial {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, info.Size))
		status = http.StatusPartialContent
	}
	w.WriteHeader(status)
	if !withBody || length == 0 {
		return nil
	}
	if sr != nil {
		return s.serveSSEBody(req.Context(), w, sr, r, start, length)
	}
	if length <= smallBody {
		// One read, one write: no copy buffer to allocate.
		b := make([]byte, length)
		if n, err := r.ReadAt(b, start); err != nil && (!errors.Is(err, io.EOF) || int64(n) != length) {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	_, err = r.CopyRange(httpx.FileWriter{Recorder: w}, start, length, *bp)
	return err
}

// objectError adds the delete-marker headers S3 sends with 404/405: a read
// of a key whose current version is a delete marker answers 404 NoSuchKey
// with x-amz-delete-marker and the marker's x-amz-version-id; one naming a
// marker's version id answers 405 with them and its Last-Modified.
func (s *Server) objectError(w *recorder, req *request, err error) error {
	if !errors.Is(err, objstore.ErrDeleteMarker) {
		return err
	}
	w.Header().Set("x-amz-delete-marker", "true")
	vid := req.URL.Query().Get("versionId")
	if m, herr := s.store.Head(req.Context(), req.bucket, req.key, objstore.GetOptions{VersionID: vid}); m.DeleteMarker && errors.Is(herr, objstore.ErrDeleteMarker) {
		w.Header().Set("x-amz-version-id", m.VersionID)
		if vid != "" {
			w.Header().Set("Last-Modified", m.ModTime.UTC().Format(http.TimeFormat))
		}
	} else if vid != "" {
		w.Header().Set("x-amz-version-id", vid)
	}
	if vid == "" {
		return objstore.ErrNoSuchKey
	}
	return err
}

func (s *Server) deleteObject(w *recorder, req *request) error {
	res, err := s.store.Delete(req.Context(), req.bucket, req.key, objstore.DeleteOptions{
		VersionID:        req.URL.Query().Get("versionId"),
		IfMatch:          req.Header.Get("If-Match"),
		BypassGovernance: s.bypassGovernance(req, req.key),
	})
	if vid := req.URL.Query().Get("versionId"); vid != "" && errors.Is(err, objstore.ErrNoSuchVersion) {
		// S3 answers deleting a version that is not there (any more) as
		// done, as DeleteObjects does below: a retried delete succeeds.
		res, err = objstore.DeleteResult{VersionID: vid}, nil
	}
	if err != nil {
		return err
	}
	if res.DeleteMarker {
		w.Header().Set("x-amz-delete-marker", "true")
	}
	if res.VersionID != "" {
		w.Header().Set("x-amz-version-id", res.VersionID)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// keyError is the code and message of one key's failure in a
// DeleteObjects answer. The request's access log line has no error (the
// request succeeded), so an internal failure is logged here, under the
// request id its message names.
func (s *Server) keyError(req *request, key string, err error) (code, msg string) {
	api := toAPIError(err)
	if api.Status < http.StatusInternalServerError {
		return api.Code, api.Message
	}
	s.opt.Logger.Error().Str("rid", req.id).Str("api", req.api).Str("bucket", req.bucket).
		Str("key", key).Str("error", err.Error()).Msg("s3 key failed")
	return api.Code, withRequestID(api.Message, req.id)
}

func (s *Server) deleteObjects(w *recorder, req *request) error {
	var d deleteRequest
	if err := decodeXML(req, &d, false); err != nil {
		return err
	}
	if len(d.Objects) == 0 || len(d.Objects) > 1000 {
		return errMalformedXML
	}
	res := deleteResult{NS: s3NS}
	for _, o := range d.Objects {
		if err := s.may(req, "s3:DeleteObject", req.bucket, o.Key); err != nil {
			code, msg := s.keyError(req, o.Key, err)
			res.Errors = append(res.Errors, deleteError{Key: o.Key, VersionID: o.VersionID, Code: code, Message: msg})
			continue
		}
		r, err := s.store.Delete(req.Context(), req.bucket, o.Key, objstore.DeleteOptions{VersionID: o.VersionID, BypassGovernance: s.bypassGovernance(req, o.Key)})
		if err != nil {
			if errors.Is(err, objstore.ErrNoSuchVersion) && o.VersionID != "" {
				err = nil // S3 reports deleting an absent version as success
			}
		}
		if err != nil {
			code, msg := s.keyError(req, o.Key, err)
			res.Errors = append(res.Errors, deleteError{Key: o.Key, VersionID: o.VersionID, Code: code, Message: msg})
			continue
		}
		if d.Quiet {
			continue
		}
		item := deletedItem{Key: o.Key, VersionID: o.VersionID}
		if r.DeleteMarker {
			item.DeleteMarker = true
			if o.VersionID == "" {
				item.DeleteMarkerVersionID = r.VersionID
			}
		}
		res.Deleted = append(res.Deleted, item)
	}
	return writeXML(w, res)
}

func (s *Server) copyObject(w *recorder, req *request) error {
	sb, sk, sv, err := copySource(req.Header.Get("x-amz-copy-source"))
	if err != nil {
		return err
	}
	if err := s.may(req, "s3:GetObject", sb, sk); err != nil {
		return err
	}
	opt := objstore.CopyOptions{
		SrcVersionID:   sv,
		SrcIfMatch:     req.Header.Get("x-amz-copy-source-if-match"),
		SrcIfNoneMatch: req.Header.Get("x-amz-copy-source-if-none-match"),
		IfMatch:        req.Header.Get("If-Match"),
		IfNoneMatch:    req.Header.Get("If-None-Match"),
	}
	switch d := req.Header.Get("x-amz-metadata-directive"); d {
	case "", "COPY":
	case "REPLACE":
		meta, err := metaFromRequest(req.Header)
		if err != nil {
			return err
		}
		opt.ReplaceMeta, opt.ContentType, opt.Meta = true, req.Header.Get("Content-Type"), meta
	default:
		return apiErr("InvalidArgument", 400, "Unknown metadata directive %q.", d)
	}
	if opt.AttrsFor, err = s.copyAttrs(req); err != nil {
		return err
	}
	dst, err := s.sseForWrite(req)
	if err != nil {
		return err
	}
	if sb == req.bucket && sk == req.key && sv == "" && !opt.ReplaceMeta && (dst == nil || dst.req.fromDefault) {
		return apiErr("InvalidRequest", 400, "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.")
	}
	if err := s.checkCopySourceTimes(req, sb, sk, sv); err != nil {
		return err
	}
	info, handled, err := s.sseCopy(req, sb, sk, opt, dst)
	if !handled {
		info, err = s.store.Copy(req.Context(), sb, sk, req.bucket, req.key, opt)
	}
	if err != nil {
		if errors.Is(err, objstore.ErrDeleteMarker) {
			return objstore.ErrNoSuchKey
		}
		return err
	}
	if sv != "" {
		w.Header().Set("x-amz-copy-source-version-id", sv)
	}
	if info.VersionID != objstore.NullVersion {
		w.Header().Set("x-amz-version-id", info.VersionID)
	}
	s.expirationHeader(w.Header(), req, info)
	if dst != nil {
		dst.headers(w.Header())
	}
	return writeXML(w, copyObjectResult{NS: s3NS, LastModified: iso8601(info.ModTime), ETag: quote(info.ETag)})
}

// checkCopySourceTimes applies x-amz-copy-source-if-(un)modified-since;
// as S3, an ETag condition on the source takes precedence over the date
// paired with it.
func (s *Server) checkCopySourceTimes(req *request, bucket, key, version string) error {
	h := req.Header
	mod, unmod := h.Get("x-amz-copy-source-if-modified-since"), h.Get("x-amz-copy-source-if-unmodified-since")
	if h.Get("x-amz-copy-source-if-none-match") != "" {
		mod = ""
	}
	if h.Get("x-amz-copy-source-if-match") != "" {
		unmod = ""
	}
	return s.checkObjectConds(req, bucket, key, version, "", mod, unmod)
}

// checkObjectConds heads bucket/key (at version) when any condition is
// given, and fails with PreconditionFailed when its ETag matches
// ifNoneMatch, or it was not modified since ifModified, or it was modified
// since ifUnmodified (HTTP dates; unparsable ones are ignored).
func (s *Server) checkObjectConds(req *request, bucket, key, version, ifNoneMatch, ifModified, ifUnmodified string) error {
	ms, ok1 := httpTime(ifModified)
	us, ok2 := httpTime(ifUnmodified)
	if ifNoneMatch == "" && !ok1 && !ok2 {
		return nil
	}
	info, err := s.store.Head(req.Context(), bucket, key, objstore.GetOptions{VersionID: version})
	if err != nil {
		return err
	}
	mod := info.ModTime.Truncate(time.Second)
	if (ifNoneMatch != "" && etagMatches(ifNoneMatch, info.ETag)) || (ok1 && !mod.After(ms)) || (ok2 && mod.After(us)) {
		return objstore.ErrPreconditionFailed
	}
	return nil
}

// renameObject is S3 Express RenameObject: PUT /key?renameObject with
// x-amz-rename-source naming the source key in the same bucket. It is the
// store's atomic rename: no byte moves.
func (s *Server) renameObject(w *recorder, req *request) error {
	src := req.Header.Get("x-amz-rename-source")
	if src == "" {
		return apiErr("InvalidArgument", 400, "x-amz-rename-source is required.")
	}
	src, err := urlUnescape(strings.TrimPrefix(src, "/"))
	if err != nil {
		return apiErr("InvalidArgument", 400, "x-amz-rename-source is not valid.")
	}
	if b, k, ok := strings.Cut(src, "/"); ok && b == req.bucket {
		src = k
	}
	if strings.HasSuffix(src, "/") || strings.HasSuffix(req.key, "/") {
		return apiErr("InvalidRequest", 400, "RenameObject does not rename keys that end with a slash.")
	}
	if err := s.checkRenameTimes(req, src); err != nil {
		return err
	}
	err = s.store.Rename(req.Context(), req.bucket, src, req.key, objstore.RenameOptions{
		IfMatch:     req.Header.Get("x-amz-rename-source-if-match"),
		IfNoneMatch: req.Header.Get("If-None-Match"),
		DestIfMatch: req.Header.Get("If-Match"),
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// checkRenameTimes applies RenameObject's source ETag exclusion and the
// time conditions on source and destination (the ETag matches are checked
// atomically by the store).
func (s *Server) checkRenameTimes(req *request, src string) error {
	h := req.Header
	if err := s.checkObjectConds(req, req.bucket, src, "", h.Get("x-amz-rename-source-if-none-match"),
		h.Get("x-amz-rename-source-if-modified-since"), h.Get("x-amz-rename-source-if-unmodified-since")); err != nil {
		return err
	}
	return s.checkObjectConds(req, req.bucket, req.key, "", "", h.Get("If-Modified-Since"), h.Get("If-Unmodified-Since"))
}

func (s *Server) getObjectAttributes(w *recorder, req *request) error {
	info, err := s.store.Head(req.Context(), req.bucket, req.key, objstore.GetOptions{VersionID: req.URL.Query().Get("versionId")})
	if err != nil {
		if hidden := s.hideMissing(req, err); hidden != nil {
			return hidden
		}
		return s.objectError(w, req, err)
	}
	if _, err := s.sseForRead(req, info, ""); err != nil { // an SSE-C object's attributes need its key, as GET and HEAD
		return err
	}
	want := map[string]bool{}
	for _, v := range req.Header.Values("x-amz-object-attributes") { // one line or several
		for _, a := range strings.Split(v, ",") {
			want[strings.TrimSpace(a)] = true
		}
	}
	res := getObjectAttributesResponse{NS: s3NS}
	if want["ETag"] {
		res.ETag = info.ETag
	}
	if want["ObjectSize"] {
		res.ObjectSize = ptr(plainSize(info))
	}
	if want["StorageClass"] {
		res.StorageClass = "STANDARD"
	}
	if want["Checksum"] {
		res.Checksum = objectChecksum(info)
	}
	if want["ObjectParts"] && info.PartsCount > 0 {
		parts, err := objectPartsOf(req, info)
		if err != nil {
			return err
		}
		res.ObjectParts = parts
	}
	w.Header().Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
	if info.VersionID != objstore.NullVersion {
		w.Header().Set("x-amz-version-id", info.VersionID)
	}
	return writeXML(w, res)
}
