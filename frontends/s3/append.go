package s3

import (
	"encoding/base64"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
	"github.com/cairnstore/cairn/objstore"
)

// hdrWriteOffset makes a PutObject an append (the S3 Express One Zone
// API): the body goes at that offset, which must be the object's size.
const hdrWriteOffset = "x-amz-write-offset-bytes"

// appendObject is PutObject with x-amz-write-offset-bytes: the store
// writes only the body and commits a version made of the object's data
// and it (objstore.Append). The object must be a plain one: appends are
// not encrypted (a request asking for encryption, or a bucket encrypting
// by default, is refused), and an object whose checksum cannot be
// extended (a composite one, or SHA) is refused too. A full-object CRC
// checksum is extended: the body's CRC in that algorithm is combined
// with the object's.
func (s *Server) appendObject(w *recorder, req *request, raw string) error {
	offset, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || offset < 0 {
		return apiErr("InvalidArgument", 400, "x-amz-write-offset-bytes must be a non-negative integer: the size of the object appended to (0 to create it).")
	}
	if req.Header.Get("If-None-Match") != "" {
		return apiErr("InvalidArgument", 400, "If-None-Match cannot be used with x-amz-write-offset-bytes: an append at offset 0 creates only a missing object already.")
	}
	if err := s.refuseEncryptedAppend(req); err != nil {
		return err
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
	attrs, err := s.newAttrs(req)
	if err != nil {
		return err
	}
	// The object's checksum algorithm, if it has one that extends: the
	// body is hashed in it on the way to the store.
	var algo string
	var crc hash.Hash
	if offset > 0 {
		cur, err := s.store.Head(req.Context(), req.bucket, req.key, objstore.GetOptions{})
		if err == nil {
			if algo, err = appendableChecksum(cur); err != nil {
				return err
			}
		}
		if algo != "" {
			crc, _ = sigv4.NewChecksum(algo)
			body = io.TeeReader(body, crc)
		}
	}
	final := s.finalChecksum(req)
	info, err := s.store.Append(req.Context(), req.bucket, req.key, offset, body, size, objstore.AppendOptions{
		IfMatch: req.Header.Get("If-Match"), ContentMD5: md5sum,
		ContentType: req.Header.Get("Content-Type"), Meta: meta, Attrs: attrs,
		Appending: func(prev *objstore.ObjectInfo, added int64, m map[string]string, a *objstore.Attrs) error {
			if prev == nil {
				if final != nil {
					final(m)
				}
				return nil
			}
			return extendChecksum(*prev, added, algo, crc, m, a)
		},
	})
	if err != nil {
		return err
	}
	w.Header().Set("ETag", quote(info.ETag))
	if info.VersionID != objstore.NullVersion {
		w.Header().Set("x-amz-version-id", info.VersionID)
	}
	s.expirationHeader(w.Header(), req, info)
	w.Header().Set("x-amz-object-size", strconv.FormatInt(info.Size, 10))
	for k, v := range info.Meta {
		if strings.HasPrefix(k, "x-amz-checksum-") {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// refuseEncryptedAppend refuses an append that would have to be
// encrypted: the request asks for it, or the bucket encrypts by default.
func (s *Server) refuseEncryptedAppend(req *request) error {
	r, err := parseSSEHeaders(req.Header)
	if err != nil {
		return err
	}
	if r.kind == "" {
		if r, err = s.bucketDefaultSSE(req); err != nil {
			return err
		}
	}
	if r.kind != "" {
		return apiErr("InvalidRequest", 400, "Appends (x-amz-write-offset-bytes) are not encrypted: send no server-side encryption headers, and append only in a bucket without default encryption.")
	}
	return nil
}

// appendableChecksum returns the algorithm of the object's checksum when
// an append can extend it ("" when it has none), or the error refusing
// the append when it cannot.
func appendableChecksum(info objstore.ObjectInfo) (string, error) {
	for k, v := range info.Meta {
		algo, ok := strings.CutPrefix(k, "x-amz-checksum-")
		if !ok || v == "" {
			continue
		}
		if checksumType(info) == checksumComposite || !sigv4.IsCRC(algo) {
			return "", apiErr("InvalidRequest", 400, "The object's %s checksum (%s) cannot be extended by an append: only a full-object CRC checksum can. Write the object whole with PutObject to append to it.", algo, checksumType(info))
		}
		return algo, nil
	}
	return "", nil
}

// extendChecksum gives the version made by appending added bytes to
// prev the checksum of the whole: prev's, in algo, combined with crc, the
// appended bytes'. It refuses the append when prev is not the object
// appendObject looked at (replaced meanwhile by one of the same size
// with another checksum).
func extendChecksum(prev objstore.ObjectInfo, added int64, algo string, crc hash.Hash, m map[string]string, a *objstore.Attrs) error {
	now, err := appendableChecksum(prev)
	if err != nil {
		return err
	}
	if now != algo {
		return fmt.Errorf("%w: the object was replaced while appending to it", objstore.ErrInvalidWriteOffset)
	}
	if algo == "" {
		return nil
	}
	key := "x-amz-checksum-" + algo
	old, err := base64.StdEncoding.DecodeString(prev.Meta[key])
	if err != nil {
		return fmt.Errorf("object's kept %s %q: %w", key, prev.Meta[key], err)
	}
	part := crc.Sum(nil)
	whole, err := sigv4.CombineChecksums(algo, old, part, added)
	if err != nil {
		return err
	}
	m[key] = sigv4.EncodeChecksum(whole)
	if sums := strings.Fields(a.Sys[sysPartSums]); len(sums) > 0 && len(sums) == len(prev.PartSizes) {
		setSys(a, sysPartSums, strings.Join(append(sums, sigv4.EncodeChecksum(part)), " "))
	}
	return nil
}
