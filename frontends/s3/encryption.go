package s3

// Bucket default encryption and server-side encryption.
// Not built yet: each answers NotImplemented.

func (s *Server) getBucketEncryption(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putBucketEncryption(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) deleteBucketEncryption(w *recorder, req *request) error { return errNotImplemented }
