package s3

// Bucket policies, their status, ownership controls and the public-access block.
// Not built yet: each answers NotImplemented.

func (s *Server) getBucketPolicy(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putBucketPolicy(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) deleteBucketPolicy(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) getBucketPolicyStatus(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) getOwnershipControls(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putOwnershipControls(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) deleteOwnershipControls(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) getPublicAccessBlock(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putPublicAccessBlock(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) deletePublicAccessBlock(w *recorder, req *request) error { return errNotImplemented }
