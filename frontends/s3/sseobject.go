package s3

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"maps"
	"net/http"

	"github.com/cairnstore/cairn/frontends/s3/sse"
	"github.com/cairnstore/cairn/objstore"
)

// Object encryption: a write asked (or defaulted by its bucket) to be
// encrypted gets a fresh object key, sealed in the version's
// Attrs.Sys[sysSSE] record, and its body goes to the store as an sse
// stream; a read of an encrypted version opens the key (with the request's
// SSE-C key or the server's keys) and decrypts the packages of the range
// it serves. Every size the face shows goes through plainSize.

// sseWrite is one encrypted write: the object key and its record.
type sseWrite struct {
	req     sseRequest
	key     []byte
	rec     sse.Record
	release func() // the plaintext hash's, once wrapPut made one
}

// done releases what the write held; the request calls it when it ends.
func (e *sseWrite) done() {
	if e != nil && e.release != nil {
		e.release()
	}
}

// sseForWrite returns how the write req is to be encrypted, from its
// headers or the bucket's default; nil when it is not.
func (s *Server) sseForWrite(req *request) (*sseWrite, error) {
	r, err := parseSSEHeaders(req.Header)
	if err != nil {
		return nil, err
	}
	if r.kind == "" {
		if r, err = s.bucketDefaultSSE(req); err != nil {
			return nil, err
		}
	}
	return s.newSSEWrite(req, r)
}

func (s *Server) newSSEWrite(req *request, r sseRequest) (*sseWrite, error) {
	p := sse.Params{Kind: r.kind, CustomerKey: r.customerKey, Context: r.context}
	switch r.kind {
	case "":
		return nil, nil
	case sse.KindC:
		if !s.ssecTransportOK(req) {
			return nil, errSSECInsecure
		}
	case sse.KindKMS:
		p.KMSKey = kmsKeyName(r.kmsKeyID)
		if r.kmsKeyID == "" {
			p.KMSKey = s.opt.SSE.DefaultKMSKey()
			if p.KMSKey == "" {
				return nil, apiErr("KMS.NotFoundException", 400, "No default key: the server has no SSE-KMS key ring.")
			}
		}
		if !s.opt.SSE.HasKMSKey(p.KMSKey) {
			return nil, kmsNotFound(r.kmsKeyID)
		}
	}
	key, rec, err := s.opt.SSE.NewObjectKey(p)
	if err != nil {
		return nil, err
	}
	rec.BucketKey, rec.KMSKeyID = r.bucketKey, r.kmsKeyID
	if rec.Kind == sse.KindKMS && rec.KMSKeyID == "" {
		rec.KMSKeyID = p.KMSKey
	}
	return &sseWrite{req: r, key: key, rec: rec}, nil
}

// setAttrs records the encryption in a new version's (or upload's) attributes.
func (e *sseWrite) setAttrs(a *objstore.Attrs) {
	a.Sys = maps.Clone(a.Sys)
	setSys(a, sysSSE, e.rec.Encode())
}

// headers sets the response's encryption headers.
func (e *sseWrite) headers(h http.Header) {
	sseResponseHeaders(h, e.rec, e.req.keyMD5, true)
}

// encryptBody wraps a plaintext body of size bytes (checked against
// wantMD5 when set) into the stream the store receives, and gives the
// ETag the version (or part) is to have, which spares the store an MD5
// of the ciphertext: the plaintext's MD5 for SSE-S3, as AWS; for SSE-C
// and SSE-KMS an HMAC of it under the object key (sse.OpaqueETag), as
// opaque as AWS's ETags of those objects, and the same for a part sent
// again with the same bytes.
func (s *Server) encryptBody(key []byte, kind sse.Kind, body io.Reader, size int64, wantMD5 []byte) (io.Reader, int64, func() string, func(), error) {
	h, release := s.plainMD5(size)
	e, err := sse.NewEncrypter(body, size, key, h, wantMD5)
	if err != nil {
		release()
		return nil, 0, nil, nil, err
	}
	releaseHash := release
	release = func() {
		_ = e.Close() // its hashing is done before the hash goes back
		releaseHash()
	}
	etag := func() string { return hex.EncodeToString(sse.OpaqueETag(key, e.Sum())) }
	if kind == sse.KindS3 {
		etag = func() string { return hex.EncodeToString(e.Sum()) }
	}
	n := int64(-1) // a plaintext of unknown size (a POST's file)
	if size >= 0 {
		n = sse.EncryptedSize(size)
	}
	return e, n, etag, release, nil
}

// wrapPut turns a PUT's (or a POST's) options and body into an encrypted
// one; a negative size is a body read to its EOF.
func (s *Server) wrapPut(e *sseWrite, body io.Reader, size int64, opt *objstore.PutOptions) (io.Reader, int64, error) {
	enc, n, etag, release, err := s.encryptBody(e.key, e.rec.Kind, body, size, opt.ContentMD5)
	if err != nil {
		return nil, 0, err
	}
	e.release = release
	opt.ContentMD5, opt.ETag = nil, etag // checked on the plaintext instead
	e.setAttrs(&opt.Attrs)
	return enc, n, nil
}

// plainMD5 is the hash of a plaintext of size bytes (its ETag or its
// Content-MD5 check). Large plaintexts hashed while another is share
// md5-simd's server, which hashes up to 16 streams per core in SIMD
// lanes (the store's ETag policy, objstore.newMD5); the hash is released
// by the returned function, which the request calls when it is done.
func (s *Server) plainMD5(size int64) (hash.Hash, func()) {
	if size < 1<<20 {
		return md5.New(), func() {}
	}
	if s.largeSSE.Add(1) < 2 {
		return md5.New(), func() { s.largeSSE.Add(-1) }
	}
	h := s.md5srv().NewHash()
	return h, func() {
		h.Close()
		s.largeSSE.Add(-1)
	}
}

// sseRecord is the version's encryption record (ok false: not encrypted).
func sseRecord(a objstore.Attrs) (sse.Record, bool, error) {
	v, ok := a.Sys[sysSSE]
	if !ok {
		return sse.Record{}, false, nil
	}
	rec, err := sse.DecodeRecord(v)
	return rec, true, err
}

// PlainSize is the size the S3 face shows for a version: an encrypted
// one's plaintext size, the stored size of any other. The store's
// lifecycle filters compare it (objstore.Options.ShownSize).
func PlainSize(info objstore.ObjectInfo) int64 { return plainSize(info) }

// plainSize is the size the face shows for a version: its plaintext's.
// Every listing, HEAD, GET and attribute answer goes through it.
func plainSize(info objstore.ObjectInfo) int64 {
	if _, ok := info.Attrs.Sys[sysSSE]; !ok {
		return info.Size
	}
	l, err := sse.NewLayout(storedSizes(info))
	if err != nil {
		return info.Size // not a stream: shown as stored; a read fails clearly
	}
	return l.Size()
}

// plainPartSize is the plaintext size of an uploaded part of an
// encrypted upload.
func plainPartSize(stored int64) int64 {
	if n, ok := sse.PlainSize(stored); ok {
		return n
	}
	return stored
}

func storedSizes(info objstore.ObjectInfo) []int64 {
	if info.PartsCount > 0 {
		return info.PartSizes
	}
	return []int64{info.Size}
}

// sseRead is an open encrypted version: its key and layout.
type sseRead struct {
	rec    sse.Record
	key    []byte
	layout sse.Layout
	keyMD5 string
}

// sseForRead opens the encryption of the version info for a read whose
// SSE-C headers carry prefix ("" for GET/HEAD, "x-amz-copy-source-" for
// a copy's source); nil when the version is not encrypted.
func (s *Server) sseForRead(req *request, info objstore.ObjectInfo, prefix string) (*sseRead, error) {
	if prefix == "" {
		if err := noWriteSSEHeaders(req.Header); err != nil {
			return nil, err
		}
	}
	c, err := parseSSEC(req.Header, prefix)
	if err != nil {
		return nil, err
	}
	rec, ok, err := sseRecord(info.Attrs)
	if err != nil {
		return nil, err
	}
	if !ok {
		if c.kind != "" {
			return nil, errSSENotApplies
		}
		return nil, nil
	}
	switch {
	case rec.Kind == sse.KindC && c.kind == "":
		return nil, errSSEKeyNeeded
	case rec.Kind != sse.KindC && c.kind != "":
		return nil, errSSENotApplies
	case c.kind != "" && !s.ssecTransportOK(req):
		return nil, errSSECInsecure
	}
	key, err := s.opt.SSE.Open(rec, sse.Params{CustomerKey: c.customerKey})
	if err != nil {
		if !errors.Is(err, sse.ErrWrongKey) {
			s.opt.Logger.Error().Str("bucket", info.Bucket).Str("key", info.Key).Str("version", info.VersionID).
				Err(err).Msg("s3: cannot open an encrypted object's key")
		}
		return nil, err
	}
	l, err := sse.NewLayout(storedSizes(info))
	if err != nil {
		return nil, err
	}
	return &sseRead{rec: rec, key: key, layout: l, keyMD5: c.keyMD5}, nil
}

// view is info as the client sees it: plaintext size and part sizes.
func (r *sseRead) view(info objstore.ObjectInfo) objstore.ObjectInfo {
	info.Size = r.layout.Size()
	if info.PartsCount > 0 {
		info.PartSizes = r.layout.PartSizes()
	}
	return info
}

func (r *sseRead) headers(h http.Header) { sseResponseHeaders(h, r.rec, r.keyMD5, false) }

// reader decrypts plaintext bytes [off, off+n) from the stored data.
func (r *sseRead) reader(ra io.ReaderAt, off, n int64) (*sse.Reader, error) {
	return sse.NewReader(ra, r.key, r.layout, off, n)
}

// sseAheadBufs and sseAheadChunk are the plaintext buffers of one
// encrypted GET: sseAheadBufs of the server's 1 MiB buffers (s.bufs),
// each cut into chunks of sseAheadChunk bytes, which the decrypting
// goroutine fills while the handler writes the one before to the socket
// (sse.WriteAhead). A GET holds these and one more 1 MiB buffer,
// CopyRange's, whatever its size: 3 MiB. Two whole buffers cost no more
// CPU a byte than decrypting and writing in turn; four of 256 KiB cost
// about a tenth more (twice the hand-overs between the goroutines, four
// times the writes; BenchmarkServe in package sse).
const (
	sseAheadBufs  = 2
	sseAheadChunk = 1 << 20
)

// serveSSEBody writes plaintext bytes [start, start+length) of an open
// encrypted version to w: per stream, its header, then its packages
// holding the range through the store's CopyRange (which serves them
// from the block cache when it has them) into a decrypting writer. The
// decryption runs on a goroutine of its own, a few buffers ahead of the
// writes to w; it has ended when serveSSEBody returns, so obj may be
// closed then. An error once the body has started truncates it (the
// caller logs it and the connection is closed), as a plain GET's.
func (s *Server) serveSSEBody(ctx context.Context, w *recorder, r *sseRead, obj *objstore.ObjectReader, start, length int64) error {
	pieces, err := r.layout.Pieces(start, length)
	if err != nil {
		return err
	}
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	var chunks [][]byte
	for range sseAheadBufs {
		cp := s.bufs.Get().(*[]byte)
		defer s.bufs.Put(cp)
		for b := *cp; len(b) >= sseAheadChunk; b = b[sseAheadChunk:] {
			chunks = append(chunks, b[:sseAheadChunk:sseAheadChunk])
		}
	}
	return sse.WriteAhead(ctx, w, chunks, func(a *sse.Ahead) error {
		var hdr [sse.HeaderSize]byte
		for _, p := range pieces {
			if _, err := obj.ReadAt(hdr[:], p.HeaderOff); err != nil {
				return err
			}
			pw, err := a.PieceWriter(r.key, hdr[:], p)
			if err != nil {
				return err
			}
			if _, err := obj.CopyRange(pw, p.COff, p.CLen, *bp); err != nil {
				return err
			}
			if err := pw.Close(); err != nil {
				return err
			}
		}
		return nil
	})
}

// sseNeedsStreamCopy says whether a copy must stream (decrypt the
// source, encrypt the destination) rather than share the source's data.
func sseNeedsStreamCopy(src objstore.ObjectInfo, dst *sseWrite) bool {
	_, enc := src.Attrs.Sys[sysSSE]
	return enc || dst != nil
}

// sseCopyObject copies an encrypted source, or to an encrypted
// destination, by streaming: the source's packages are decrypted as the
// destination's are sealed, never the whole object in memory.
func (s *Server) sseCopyObject(req *request, sb, sk string, opt objstore.CopyOptions, dst *sseWrite) (objstore.ObjectInfo, *sseRead, error) {
	r, err := s.store.Open(req.Context(), sb, sk, objstore.GetOptions{VersionID: opt.SrcVersionID})
	if err != nil {
		if errors.Is(err, objstore.ErrDeleteMarker) {
			err = objstore.ErrNoSuchKey
		}
		return objstore.ObjectInfo{}, nil, err
	}
	defer func() { _ = r.Close() }()
	info := r.Info()
	if opt.SrcIfMatch != "" && !etagMatches(opt.SrcIfMatch, info.ETag) {
		return objstore.ObjectInfo{}, nil, objstore.ErrPreconditionFailed
	}
	if opt.SrcIfNoneMatch != "" && etagMatches(opt.SrcIfNoneMatch, info.ETag) {
		return objstore.ObjectInfo{}, nil, objstore.ErrPreconditionFailed
	}
	src, err := s.sseForRead(req, info, copySourcePfx)
	if err != nil {
		return objstore.ObjectInfo{}, nil, err
	}
	var body io.Reader = io.NewSectionReader(r, 0, info.Size)
	size := info.Size
	if src != nil {
		size = src.layout.Size()
		if body, err = src.reader(r, 0, size); err != nil {
			return objstore.ObjectInfo{}, nil, err
		}
	}
	popt := objstore.PutOptions{ContentType: info.ContentType, Meta: info.Meta, IfMatch: opt.IfMatch, IfNoneMatch: opt.IfNoneMatch}
	if opt.ReplaceMeta {
		popt.ContentType, popt.Meta = opt.ContentType, opt.Meta
	}
	if opt.AttrsFor != nil {
		popt.Attrs = opt.AttrsFor(info)
	}
	popt.Attrs.Sys = maps.Clone(popt.Attrs.Sys)
	delete(popt.Attrs.Sys, sysSSE)
	if dst != nil {
		if body, size, err = s.wrapPut(dst, body, size, &popt); err != nil {
			return objstore.ObjectInfo{}, nil, err
		}
		defer dst.done()
	}
	out, err := s.store.Put(req.Context(), req.bucket, req.key, body, size, popt)
	return out, src, err
}
