package s3

// CORS: Get/Put/DeleteBucketCors and preflight OPTIONS.
// Not built yet: each answers NotImplemented.

func (s *Server) getBucketCORS(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putBucketCORS(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) deleteBucketCORS(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) preflightCORS(w *recorder, req *request) error { return errNotImplemented }

// corsHeaders adds the Access-Control-* headers the bucket's CORS rules
// give an actual (non-preflight) request.
func (s *Server) corsHeaders(w *recorder, req *request) {}
