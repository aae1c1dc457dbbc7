package s3

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/objstore"
)

func (s *Server) createMultipartUpload(w *recorder, req *request) error {
	meta, err := metaFromRequest(req.Header)
	if err != nil {
		return err
	}
	attrs, err := s.newAttrs(req)
	if err != nil {
		return err
	}
	sum, err := parseUploadChecksum(req.Header)
	if err != nil {
		return err
	}
	if sum.algo != "" {
		setSys(&attrs, sysChecksum, sum.String())
	}
	enc, err := s.sseForWrite(req)
	if err != nil {
		return err
	}
	if enc != nil {
		enc.setAttrs(&attrs)
	}
	id, err := s.store.CreateMultipartUpload(req.Context(), req.bucket, req.key, objstore.PutOptions{
		ContentType: req.Header.Get("Content-Type"), Meta: meta, Attrs: attrs})
	if err != nil {
		return err
	}
	checksumHeaders(w.Header(), sum)
	if enc != nil {
		enc.headers(w.Header())
	}
	return writeXML(w, initiateMultipartUploadResult{NS: s3NS, Bucket: req.bucket, Key: req.key, UploadID: id})
}

func partNumber(req *request) (int, error) {
	n, err := strconv.Atoi(req.URL.Query().Get("partNumber"))
	if err != nil {
		return 0, objstore.ErrInvalidPartNumber
	}
	return n, nil
}

func (s *Server) uploadPart(w *recorder, req *request) error {
	n, err := partNumber(req)
	if err != nil {
		return err
	}
	body, size, err := bodyOf(req)
	if err != nil {
		return err
	}
	if size > 5<<30 {
		return errEntityTooLarge
	}
	md5sum, err := contentMD5(req.Header)
	if err != nil {
		return err
	}
	up, err := s.store.Upload(req.Context(), req.bucket, req.key, req.URL.Query().Get("uploadId"))
	if err != nil {
		return err
	}
	// The checksum is of the plaintext: taken before any encryption.
	body, sum, err := partChecksum(req, body, decodeUploadChecksum(up.Attrs.Sys))
	if err != nil {
		return err
	}
	part, err := s.sseForPart(req, up.Attrs)
	if err != nil {
		return err
	}
	if part != nil {
		if body, size, err = s.wrapPart(part, body, size, md5sum); err != nil {
			return err
		}
		defer part.done()
		md5sum = nil
		part.headers(w.Header())
	}
	p, err := s.store.PutPart(req.Context(), req.bucket, req.key, up.UploadID, n, body, size,
		objstore.PartOptions{ContentMD5: md5sum, Checksum: sum, ETag: part.partETag()})
	if err != nil {
		return err
	}
	w.Header().Set("ETag", quote(p.ETag))
	if algo, v := splitPartSum(p.Checksum); v != "" {
		w.Header().Set("x-amz-checksum-"+algo, v)
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) uploadPartCopy(w *recorder, req *request) error {
	n, err := partNumber(req)
	if err != nil {
		return err
	}
	sb, sk, sv, err := copySource(req.Header.Get("x-amz-copy-source"))
	if err != nil {
		return err
	}
	if err := s.may(req, "s3:GetObject", sb, sk); err != nil {
		return err
	}
	start, length := int64(0), int64(-1)
	if rng := req.Header.Get("x-amz-copy-source-range"); rng != "" {
		if start, length, err = sourceRange(rng); err != nil {
			return err
		}
	}
	if im := req.Header.Get("x-amz-copy-source-if-match"); im != "" || req.Header.Get("x-amz-copy-source-if-none-match") != "" {
		info, err := s.store.Head(req.Context(), sb, sk, objstore.GetOptions{VersionID: sv})
		if err != nil {
			return err
		}
		if im != "" && !etagMatches(im, info.ETag) {
			return objstore.ErrPreconditionFailed
		}
		if inm := req.Header.Get("x-amz-copy-source-if-none-match"); inm != "" && etagMatches(inm, info.ETag) {
			return objstore.ErrPreconditionFailed
		}
	}
	if err := s.checkCopySourceTimes(req, sb, sk, sv); err != nil {
		return err
	}
	p, handled, err := s.sseUploadPartCopy(w, req, n, sb, sk, sv, start, length)
	if !handled {
		p, err = s.store.CopyPart(req.Context(), req.bucket, req.key, req.URL.Query().Get("uploadId"), n, sb, sk, sv, start, length)
	}
	if err != nil {
		return err
	}
	if sv != "" {
		w.Header().Set("x-amz-copy-source-version-id", sv)
	}
	return writeXML(w, copyPartResult{NS: s3NS, LastModified: iso8601(p.ModTime), ETag: quote(p.ETag)})
}

func (s *Server) completeMultipartUpload(w *recorder, req *request) error {
	// An x-amz-checksum-* header here is the client's checksum of the
	// whole object (over its parts), not of the XML body: it is checked
	// against the one computed from the parts' when the upload has one.
	algo, objSum, hasSum := req.body.DetachHeaderChecksum()
	var c completeMultipartUpload
	if err := decodeXML(req, &c, true); err != nil {
		return err
	}
	if len(c.Parts) == 0 {
		// S3 answers a complete without parts (or without a body) so.
		return apiErr("MalformedXML", 400, "The XML you provided was not well-formed or did not validate against our published schema: name the parts to complete.")
	}
	uploadID := req.URL.Query().Get("uploadId")
	up, err := s.store.Upload(req.Context(), req.bucket, req.key, uploadID)
	switch {
	case errors.Is(err, objstore.ErrNoSuchUpload):
		// Perhaps a retried complete of an upload that is done: the
		// store answers it again (or NoSuchUpload), with nothing to
		// compute from the upload's attributes.
	case err != nil:
		return err
	}
	usum := decodeUploadChecksum(up.Attrs.Sys)
	if err := checkCompleteType(req.Header, usum); err != nil {
		return err
	}
	parts := make([]objstore.CompletePart, 0, len(c.Parts))
	for _, p := range c.Parts {
		cp := objstore.CompletePart{Number: p.PartNumber, ETag: p.ETag}
		if a, v := p.checksum(); v != "" {
			cp.Checksum = a + ":" + v
		}
		parts = append(parts, cp)
	}
	parts = lastOfEachNumber(parts)
	var value string
	info, err := s.store.CompleteMultipartUpload(req.Context(), req.bucket, req.key, uploadID, parts,
		objstore.PutOptions{IfMatch: req.Header.Get("If-Match"), IfNoneMatch: req.Header.Get("If-None-Match"),
			Completing: completeChecksum(usum, ssePartSizer(up.Attrs), algo, objSum, &value)})
	if err != nil {
		return err
	}
	if info.VersionID != objstore.NullVersion {
		w.Header().Set("x-amz-version-id", info.VersionID)
	}
	s.expirationHeader(w.Header(), req, info)
	res := completeMultipartUploadResult{NS: s3NS, Location: "http://" + req.Host + "/" + req.bucket + "/" + req.key,
		Bucket: req.bucket, Key: req.key, ETag: quote(info.ETag)}
	switch {
	case value != "":
		res.setChecksum(usum.algo, value)
		res.ChecksumType = usum.typ
	case hasSum:
		w.Header().Set("x-amz-checksum-"+algo, objSum)
	}
	sseCompleteHeaders(w.Header(), req, info)
	return writeXML(w, res)
}

// lastOfEachNumber keeps, of a run of entries naming the same part
// number, the last: a client that re-sent a part lists each answer it got,
// in the order it got them, and the part the store keeps is the upload
// that finished last (ceph s3-tests test_multipart_resend_first_finishes_last).
// The list must still ascend; the store answers InvalidPartOrder when it
// does not, and InvalidPart when the kept entry's ETag is not the part's.
func lastOfEachNumber(parts []objstore.CompletePart) []objstore.CompletePart {
	out := parts[:0]
	for _, p := range parts {
		if n := len(out); n > 0 && out[n-1].Number == p.Number {
			out[n-1] = p
			continue
		}
		out = append(out, p)
	}
	return out
}

// uploadParties are the Initiator and Owner of an upload: the user who
// started it (its writer, Attrs.Owner; the bucket's owner when the bucket
// took ownership of what is written in it or the writer was anonymous)
// and who will own the object (objectOwner: in the account's buckets,
// the account).
func (s *Server) uploadParties(u objstore.UploadInfo, b objstore.BucketInfo) (initiator, own owner) {
	id := u.Attrs.Owner
	if id == "" {
		id = s.ownerID(b.Owner)
	}
	o := s.objectOwner(objstore.ObjectInfo{Attrs: u.Attrs}, b)
	return owner{ID: id, DisplayName: id}, owner{ID: o, DisplayName: o}
}

func (s *Server) abortMultipartUpload(w *recorder, req *request) error {
	if err := s.store.AbortMultipartUpload(req.Context(), req.bucket, req.key, req.URL.Query().Get("uploadId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listParts(w *recorder, req *request) error {
	q := req.URL.Query()
	max, err := maxKeysParam(q.Get("max-parts"))
	if err != nil {
		return err
	}
	marker := 0
	if v := q.Get("part-number-marker"); v != "" {
		if marker, err = strconv.Atoi(v); err != nil || marker < 0 {
			return apiErr("InvalidArgument", 400, "Provided part-number-marker not an integer or within integer range.")
		}
	}
	res := listPartsResult{NS: s3NS, Bucket: req.bucket, Key: req.key, UploadID: q.Get("uploadId"),
		StorageClass: "STANDARD", PartNumberMarker: marker, MaxParts: max}
	if max == 0 {
		max = 1 // S3 answers max-parts=0 with an empty, truncated page; keep it simple
	}
	up, err := s.store.Upload(req.Context(), req.bucket, req.key, q.Get("uploadId"))
	if err != nil {
		return err
	}
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	res.Initiator, res.Owner = s.uploadParties(up, b)
	if c := decodeUploadChecksum(up.Attrs.Sys); c.algo != "" {
		res.ChecksumAlgorithm, res.ChecksumType = strings.ToUpper(c.algo), c.typ
	}
	partSize := ssePartSizer(up.Attrs)
	parts, truncated, err := s.store.ListParts(req.Context(), req.bucket, req.key, q.Get("uploadId"), marker, max)
	if err != nil {
		return err
	}
	res.IsTruncated = truncated
	for _, p := range parts {
		it := partItem{PartNumber: p.Number, LastModified: iso8601(p.ModTime), ETag: quote(p.ETag), Size: partSize(p.Size)}
		it.setChecksum(splitPartSum(p.Checksum))
		res.Parts = append(res.Parts, it)
		res.NextPartNumberMarker = p.Number
	}
	return writeXML(w, res)
}

// listMultipartUploads lists uploads by key and upload id, rolling keys up
// to the delimiter into common prefixes.
func (s *Server) listMultipartUploads(w *recorder, req *request) error {
	q, max, e, err := listParams(req, "max-uploads")
	if err != nil {
		return err
	}
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	res := listMultipartUploadsResult{NS: s3NS, Bucket: req.bucket, KeyMarker: e.enc(q.Get("key-marker")),
		UploadIDMarker: q.Get("upload-id-marker"), Prefix: e.enc(prefix), Delimiter: e.enc(delim), MaxUploads: max, EncodingType: e.name()}
	opt := objstore.ListUploadsOptions{Prefix: prefix, KeyMarker: q.Get("key-marker"), UploadIDMarker: q.Get("upload-id-marker"), MaxUploads: maxList}
	if opt.UploadIDMarker != "" && opt.KeyMarker == "" {
		opt.UploadIDMarker = ""
	}
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	lastCP := ""
	count := 0
	for {
		ups, truncated, err := s.store.ListMultipartUploads(req.Context(), req.bucket, opt)
		if err != nil {
			return err
		}
		for _, u := range ups {
			if delim != "" {
				if i := strings.Index(u.Key[len(prefix):], delim); i >= 0 {
					cp := u.Key[:len(prefix)+i+len(delim)]
					if cp == lastCP || cp <= q.Get("key-marker") && strings.HasPrefix(q.Get("key-marker"), cp) {
						continue
					}
					if count == max {
						res.IsTruncated = true
						return writeXML(w, res)
					}
					lastCP = cp
					res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: e.enc(cp)})
					res.NextKeyMarker, res.NextUploadIDMarker = e.enc(cp), ""
					count++
					continue
				}
			}
			if count == max {
				res.IsTruncated = true
				return writeXML(w, res)
			}
			initiator, own := s.uploadParties(u, b)
			res.Uploads = append(res.Uploads, uploadItem{Key: e.enc(u.Key), UploadID: u.UploadID, Initiator: initiator, Owner: own,
				StorageClass: "STANDARD", Initiated: iso8601(u.Initiated)})
			res.NextKeyMarker, res.NextUploadIDMarker = e.enc(u.Key), u.UploadID
			count++
		}
		if !truncated || len(ups) == 0 {
			break
		}
		last := ups[len(ups)-1]
		opt.KeyMarker, opt.UploadIDMarker = last.Key, last.UploadID
	}
	if !res.IsTruncated {
		res.NextKeyMarker, res.NextUploadIDMarker = "", ""
	}
	return writeXML(w, res)
}
