package s3

import (
	"io"
	"net/http"

	"github.com/cairnstore/cairn/frontends/s3/cors"
	"github.com/cairnstore/cairn/objstore"
)

// CORS: Get/Put/DeleteBucketCors, the preflight OPTIONS and the
// Access-Control-* headers of actual requests. The configuration is kept
// as the bucket document cfgCORS in the encoding of package cors (S3's
// CORSConfiguration XML, checked and re-encoded by cors.Parse and
// Config.Encode); every read parses it again, so a damaged document is an
// error, never a guess.

// Errors of the CORS handlers.
var (
	errNoSuchCORS     = &APIError{"NoSuchCORSConfiguration", http.StatusNotFound, "The CORS configuration does not exist"}
	errCORSNotEnabled = &APIError{"AccessForbidden", http.StatusForbidden, "CORSResponse: CORS is not enabled for this bucket."}
	errCORSForbidden  = &APIError{"AccessForbidden", http.StatusForbidden, "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."}
	errNoOrigin       = &APIError{"BadRequest", http.StatusBadRequest, "Insufficient information. Origin request header needed."}
	errNoCORSMethod   = &APIError{"BadRequest", http.StatusBadRequest, "Invalid Access-Control-Request-Method: "}
)

func (s *Server) getBucketCORS(w *recorder, req *request) error {
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	doc, ok := b.Config[cfgCORS]
	if !ok {
		return errNoSuchCORS
	}
	w.Header().Set("Content-Type", "application/xml")
	_, err = w.Write(doc)
	return err
}

func (s *Server) putBucketCORS(w *recorder, req *request) error {
	var r io.Reader = http.NoBody
	if req.body != nil {
		r = req.body
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxXMLBody+1))
	if err != nil {
		return err
	}
	if len(raw) == 0 {
		return apiErr("MissingRequestBodyError", 400, "Request Body is empty.")
	}
	c, err := cors.Parse(raw)
	if err != nil {
		return err
	}
	doc, err := c.Encode()
	if err != nil {
		return err
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgCORS, doc); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucketCORS(w *recorder, req *request) error {
	if _, err := s.bucketOf(req); err != nil {
		return err
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgCORS, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// bucketCORS is the request's bucket's CORS configuration; ok is false
// when it has none.
func (s *Server) bucketCORS(req *request) (c cors.Config, ok bool, err error) {
	b, err := s.bucketOf(req)
	if err != nil {
		return cors.Config{}, false, err
	}
	doc, ok := b.Config[cfgCORS]
	if !ok {
		return cors.Config{}, false, nil
	}
	if c, err = cors.Parse(doc); err != nil {
		return cors.Config{}, false, err
	}
	return c, true, nil
}

// preflightCORS answers an OPTIONS preflight, without authorization: the
// bucket's rules alone decide.
func (s *Server) preflightCORS(w *recorder, req *request) error {
	origin := req.Header.Get("Origin")
	if origin == "" {
		return errNoOrigin
	}
	method := req.Header.Get("Access-Control-Request-Method")
	if method == "" {
		return errNoCORSMethod
	}
	c, ok, err := s.bucketCORS(req)
	if err != nil {
		return err
	}
	if !ok {
		return errCORSNotEnabled
	}
	headers := cors.RequestHeaders(req.Header.Get("Access-Control-Request-Headers"))
	m, ok := c.Match(origin, method, headers)
	if !ok {
		return errCORSForbidden
	}
	m.SetHeaders(w.Header(), origin, headers, false)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// corsHeaders adds the Access-Control-* headers the bucket's CORS rules
// give an actual (non-preflight) request, before it is served, so that
// error responses carry them too. A request without Origin costs one map
// lookup: the bucket is read (once per request, by bucketOf) only for a
// request that has one.
func (s *Server) corsHeaders(w *recorder, req *request) {
	origin, ok := req.Header["Origin"]
	if !ok || len(origin) == 0 || origin[0] == "" {
		return
	}
	if req.bucket == "" || req.bucket == adminBucket || req.Method == http.MethodOptions || objstore.IsSystemBucket(req.bucket) {
		return
	}
	c, ok, err := s.bucketCORS(req)
	if err != nil || !ok {
		return // no bucket or no rules: serving the request says the rest
	}
	// The rule is the one for the method the request says it stands for
	// (Access-Control-Request-Method, as a preflight would name it), else
	// its own, as RGW matches and the ceph suite expects.
	method := req.Method
	if acrm := req.Header.Get("Access-Control-Request-Method"); acrm != "" {
		method = acrm
	}
	m, ok := c.Match(origin[0], method, nil)
	if !ok {
		return
	}
	m.SetHeaders(w.Header(), origin[0], nil, signed(req.Request))
}

// signed says whether a request carries credentials (a signature header
// or query), without checking them: S3 answers such a request's origin
// by name even where a rule allows any origin.
func signed(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	if r.URL.RawQuery == "" {
		return false
	}
	q := r.URL.Query()
	return q.Has("X-Amz-Signature") || q.Has("Signature")
}
