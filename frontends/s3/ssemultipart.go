package s3

import (
	"errors"
	"io"
	"net/http"

	"github.com/cairnstore/cairn/frontends/s3/sse"
	"github.com/cairnstore/cairn/objstore"
)

// Encrypted multipart uploads: CreateMultipartUpload seals one object key
// in the upload's attributes (which the completed version inherits);
// every part is its own sse stream under that key (each stream has a
// fresh salt and so its own stream key). SSE-C uploads need the same
// customer key on every UploadPart.

var (
	errSSEPartKeyNeeded = apiErr("InvalidRequest", 400, "The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.")
	errSSEPartWrongKey  = apiErr("InvalidArgument", 400, "The provided encryption parameters did not match the ones used originally.")
)

// ssePart is an encrypted upload's opened key, for its parts.
type ssePart struct {
	rec     sse.Record
	key     []byte
	keyMD5  string
	etag    func() string // the part's ETag, once wrapPart made it
	release func()
}

// sseForPart opens the encryption of req's upload (nil: not encrypted).
func (s *Server) sseForPart(req *request, a objstore.Attrs) (*ssePart, error) {
	c, err := parseSSEC(req.Header, "")
	if err != nil {
		return nil, err
	}
	rec, ok, err := sseRecord(a)
	switch {
	case err != nil:
		return nil, err
	case !ok && c.kind != "":
		return nil, errSSENotApplies
	case !ok:
		return nil, nil
	case rec.Kind == sse.KindC && c.kind == "":
		return nil, errSSEPartKeyNeeded
	case rec.Kind != sse.KindC && c.kind != "":
		return nil, errSSENotApplies
	case c.kind != "" && !s.ssecTransportOK(req):
		return nil, errSSECInsecure
	}
	key, err := s.opt.SSE.Open(rec, sse.Params{CustomerKey: c.customerKey})
	if errors.Is(err, sse.ErrWrongKey) {
		return nil, errSSEPartWrongKey
	}
	if err != nil {
		return nil, err
	}
	return &ssePart{rec: rec, key: key, keyMD5: c.keyMD5}, nil
}

// wrap encrypts a part's body; the Content-MD5 is checked on the
// plaintext, so the store gets none, and the part's ETag is the
// encryption's (partETag).
func (s *Server) wrapPart(p *ssePart, body io.Reader, size int64, wantMD5 []byte) (io.Reader, int64, error) {
	enc, n, etag, release, err := s.encryptBody(p.key, p.rec.Kind, body, size, wantMD5)
	p.etag, p.release = etag, release
	return enc, n, err
}

// partETag is PartOptions.ETag of a part (nil: not encrypted, the
// store's MD5).
func (p *ssePart) partETag() func() string {
	if p == nil {
		return nil
	}
	return p.etag
}

// done releases what the part held; the request calls it when it ends.
func (p *ssePart) done() {
	if p != nil && p.release != nil {
		p.release()
	}
}

func (p *ssePart) headers(h http.Header) { sseResponseHeaders(h, p.rec, p.keyMD5, false) }

// sseUploadPartCopy copies a range of a source into a part by streaming
// when the source or the upload is encrypted (handled false otherwise:
// the store shares the source's data).
func (s *Server) sseUploadPartCopy(w *recorder, req *request, n int, sb, sk, sv string, start, length int64) (objstore.PartInfo, bool, error) {
	up, err := s.store.Upload(req.Context(), req.bucket, req.key, req.URL.Query().Get("uploadId"))
	if err != nil {
		return objstore.PartInfo{}, true, err
	}
	part, err := s.sseForPart(req, up.Attrs)
	if err != nil {
		return objstore.PartInfo{}, true, err
	}
	r, err := s.store.Open(req.Context(), sb, sk, objstore.GetOptions{VersionID: sv})
	if err != nil {
		if errors.Is(err, objstore.ErrDeleteMarker) {
			err = objstore.ErrNoSuchKey
		}
		return objstore.PartInfo{}, true, err
	}
	defer func() { _ = r.Close() }()
	info := r.Info()
	src, err := s.sseForRead(req, info, copySourcePfx)
	if err != nil {
		return objstore.PartInfo{}, true, err
	}
	if src == nil && part == nil {
		return objstore.PartInfo{}, false, nil
	}
	size := info.Size
	if src != nil {
		size = src.layout.Size()
	}
	if length < 0 {
		length = size - start
	}
	if start < 0 || length < 0 || start+length > size {
		return objstore.PartInfo{}, true, objstore.ErrInvalidRange
	}
	var body io.Reader = io.NewSectionReader(r, start, length)
	if src != nil {
		if body, err = src.reader(r, start, length); err != nil {
			return objstore.PartInfo{}, true, err
		}
	}
	body, sum, err := partChecksum(req, body, decodeUploadChecksum(up.Attrs.Sys))
	if err != nil {
		return objstore.PartInfo{}, true, err
	}
	stored := length
	if part != nil {
		if body, stored, err = s.wrapPart(part, body, length, nil); err != nil {
			return objstore.PartInfo{}, true, err
		}
		defer part.done()
	}
	p, err := s.store.PutPart(req.Context(), req.bucket, req.key, up.UploadID, n, body, stored, objstore.PartOptions{Checksum: sum, ETag: part.partETag()})
	if err != nil {
		return objstore.PartInfo{}, true, err
	}
	if part != nil {
		part.headers(w.Header())
	}
	return p, true, nil
}

// sseCompleteHeaders adds a completed upload's encryption headers.
func sseCompleteHeaders(h http.Header, req *request, info objstore.ObjectInfo) {
	if rec, ok, err := sseRecord(info.Attrs); ok && err == nil {
		sseResponseHeaders(h, rec, req.Header.Get(hdrSSECKeyMD5), false)
	}
}

// ssePartSizer gives the size shown for a part of an upload with
// attributes a: the plaintext's.
func ssePartSizer(a objstore.Attrs) func(int64) int64 {
	if _, ok := a.Sys[sysSSE]; ok {
		return plainPartSize
	}
	return func(n int64) int64 { return n }
}

// sseCopy copies by streaming when the source is encrypted or the
// destination is to be (handled false: the store copies by reference).
func (s *Server) sseCopy(req *request, sb, sk string, opt objstore.CopyOptions, dst *sseWrite) (objstore.ObjectInfo, bool, error) {
	if dst == nil {
		h, err := s.store.Head(req.Context(), sb, sk, objstore.GetOptions{VersionID: opt.SrcVersionID})
		if err != nil {
			return objstore.ObjectInfo{}, false, nil // the store's copy reports it
		}
		if !sseNeedsStreamCopy(h, nil) {
			c, err := parseSSEC(req.Header, copySourcePfx)
			if err == nil && c.kind != "" {
				err = errSSENotApplies
			}
			return objstore.ObjectInfo{}, err != nil, err
		}
	}
	info, _, err := s.sseCopyObject(req, sb, sk, opt, dst)
	return info, true, err
}
