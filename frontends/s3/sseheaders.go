package s3

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"strings"

	"github.com/cairnstore/cairn/frontends/s3/sse"
)

// The encryption headers of S3 requests and responses.
const (
	hdrSSE          = "x-amz-server-side-encryption"
	hdrSSEKMSKey    = "x-amz-server-side-encryption-aws-kms-key-id"
	hdrSSEContext   = "x-amz-server-side-encryption-context"
	hdrSSEBucketKey = "x-amz-server-side-encryption-bucket-key-enabled"
	hdrSSECAlgo     = "x-amz-server-side-encryption-customer-algorithm"
	hdrSSECKey      = "x-amz-server-side-encryption-customer-key"
	hdrSSECKeyMD5   = "x-amz-server-side-encryption-customer-key-MD5"
	copySourcePfx   = "x-amz-copy-source-"
)

// sseRequest is what a request's encryption headers ask for.
type sseRequest struct {
	kind        sse.Kind // "" for none
	customerKey []byte   // SSE-C
	keyMD5      string   // SSE-C: the key's MD5 as sent (base64)
	kmsKeyID    string   // SSE-KMS: as sent ("" for the ring's default)
	context     string   // SSE-KMS encryption context as sent (base64 JSON)
	bucketKey   bool
	fromDefault bool // from the bucket's default encryption, not headers
}

// The errors of bad encryption headers, as AWS words them.
var (
	errSSECAlgorithm = &APIError{"InvalidEncryptionAlgorithmError", 400, "The encryption request you specified is not valid. The valid value is AES256."}
	errSSECNoAlgo    = apiErr("InvalidArgument", 400, "Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.")
	errSSECNoKey     = apiErr("InvalidArgument", 400, "Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.")
	errSSECBadKey    = apiErr("InvalidArgument", 400, "The secret key was invalid for the specified algorithm.")
	errSSECNoMD5     = apiErr("InvalidArgument", 400, "Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.")
	errSSECBadMD5    = apiErr("InvalidArgument", 400, "The calculated MD5 hash of the key did not match the hash that was provided.")
	errSSEMethod     = apiErr("InvalidArgument", 400, "The encryption method specified is not supported.")
	errSSEBoth       = apiErr("InvalidArgument", 400, "Server Side Encryption with Customer provided key is incompatible with the encryption method specified.")
	errSSEKMSHeaders = apiErr("InvalidArgument", 400, "Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms.")
	errSSEContext    = apiErr("InvalidArgument", 400, "The encryption context must be base64-encoded UTF-8 JSON of string pairs.")
	errSSECInsecure  = apiErr("InvalidRequest", 400, "Requests specifying Server Side Encryption with Customer provided keys must be made over a secure connection.")
	errSSEKeyNeeded  = apiErr("InvalidRequest", 400, "The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")
	errSSENotApplies = apiErr("InvalidRequest", 400, "The encryption parameters are not applicable to this object.")
	errSSEOnRead     = apiErr("InvalidArgument", 400, "x-amz-server-side-encryption header is not supported for this operation.")
)

// noWriteSSEHeaders refuses the write-only encryption headers
// (x-amz-server-side-encryption, its KMS key id and context) on a read
// (GET, HEAD, GetObjectAttributes): AWS answers them 400 whatever the
// object's encryption, since SSE-S3 and SSE-KMS objects are read without
// naming their keys (SSE-C headers are the read's own, parseSSEC).
func noWriteSSEHeaders(h http.Header) error {
	for _, name := range []string{hdrSSE, hdrSSEKMSKey, hdrSSEContext} {
		if _, ok := h[http.CanonicalHeaderKey(name)]; ok {
			return errSSEOnRead
		}
	}
	return nil
}

func kmsNotFound(id string) *APIError {
	return apiErr("KMS.NotFoundException", 400, "Invalid keyId %s", id)
}

// kmsKeyName is the key ring name a KMS key id names: the part after
// "key/" or "alias/" of an ARN or alias, the id itself otherwise.
func kmsKeyName(id string) string {
	for _, p := range []string{"key/", "alias/"} {
		if i := strings.LastIndex(id, p); i >= 0 && (i == 0 || id[i-1] == ':' || p == "key/") {
			return id[i+len(p):]
		}
	}
	return id
}

// parseSSEC reads the SSE-C headers (prefix "" or "x-amz-copy-source-").
func parseSSEC(h http.Header, prefix string) (sseRequest, error) {
	name := func(hd string) string { return prefix + strings.TrimPrefix(hd, "x-amz-") }
	if prefix == "" {
		name = func(hd string) string { return hd }
	}
	algo, key, sum := h.Get(name(hdrSSECAlgo)), h.Get(name(hdrSSECKey)), h.Get(name(hdrSSECKeyMD5))
	if algo == "" && key == "" && sum == "" {
		return sseRequest{}, nil
	}
	switch {
	case algo == "":
		return sseRequest{}, errSSECNoAlgo
	case algo != "AES256":
		return sseRequest{}, errSSECAlgorithm
	case key == "":
		return sseRequest{}, errSSECNoKey
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != sse.KeySize {
		return sseRequest{}, errSSECBadKey
	}
	if sum == "" {
		return sseRequest{}, errSSECNoMD5
	}
	want := md5.Sum(raw)
	got, err := base64.StdEncoding.DecodeString(sum)
	if err != nil || subtle.ConstantTimeCompare(got, want[:]) != 1 {
		return sseRequest{}, errSSECBadMD5
	}
	return sseRequest{kind: sse.KindC, customerKey: raw, keyMD5: sum}, nil
}

// parseSSEHeaders reads a write's (or a read's) encryption headers.
func parseSSEHeaders(h http.Header) (sseRequest, error) {
	c, err := parseSSEC(h, "")
	if err != nil {
		return c, err
	}
	method := h.Get(hdrSSE)
	kmsID, ctx := h.Get(hdrSSEKMSKey), h.Get(hdrSSEContext)
	if c.kind != "" {
		if method != "" || kmsID != "" || ctx != "" {
			return sseRequest{}, errSSEBoth
		}
		return c, nil
	}
	switch method {
	case "":
		if kmsID != "" || ctx != "" {
			return sseRequest{}, errSSEKMSHeaders
		}
		return sseRequest{}, nil
	case "AES256":
		if kmsID != "" || ctx != "" {
			return sseRequest{}, errSSEKMSHeaders
		}
		return sseRequest{kind: sse.KindS3}, nil
	case "aws:kms":
	default:
		return sseRequest{}, errSSEMethod
	}
	r := sseRequest{kind: sse.KindKMS, kmsKeyID: kmsID, context: ctx,
		bucketKey: strings.EqualFold(h.Get(hdrSSEBucketKey), "true")}
	if kmsID != "" && !sse.ValidKeyName(kmsKeyName(kmsID)) {
		return sseRequest{}, kmsNotFound(kmsID)
	}
	if ctx != "" && !validContext(ctx) {
		return sseRequest{}, errSSEContext
	}
	return r, nil
}

// maxContext bounds the encryption context header.
const maxContext = 2048

func validContext(v string) bool {
	if len(v) > maxContext {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return false
	}
	var m map[string]string
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// ssecTransportOK says whether SSE-C keys may arrive on this request: over
// TLS, from loopback (Cairn serves plain HTTP on loopback behind a TLS
// proxy or for local tools), or anywhere when Options.SSECOverHTTP says so.
func (s *Server) ssecTransportOK(req *request) bool {
	if req.TLS != nil || s.opt.SSECOverHTTP {
		return true
	}
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		host = req.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sseResponseHeaders sets the encryption headers AWS sends with an
// object's PUT, GET, HEAD, copy and multipart responses. keyMD5 is the
// SSE-C key's MD5 from the request; withContext adds the KMS context
// (writes only).
func sseResponseHeaders(h http.Header, rec sse.Record, keyMD5 string, withContext bool) {
	switch rec.Kind {
	case sse.KindS3:
		h.Set(hdrSSE, "AES256")
	case sse.KindKMS:
		h.Set(hdrSSE, "aws:kms")
		id := rec.KMSKeyID
		if id == "" {
			id = rec.KeyID
		}
		h.Set(hdrSSEKMSKey, id)
		if rec.BucketKey {
			h.Set(hdrSSEBucketKey, "true")
		}
		if withContext && rec.Context != "" {
			h.Set(hdrSSEContext, rec.Context)
		}
	case sse.KindC:
		h.Set(hdrSSECAlgo, "AES256")
		if keyMD5 != "" {
			h.Set(hdrSSECKeyMD5, keyMD5)
		}
	}
}
