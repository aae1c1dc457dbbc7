package s3

// Browser uploads: POST object with a form and a policy document.
// Not built yet: each answers NotImplemented.

func (s *Server) postObject(w *recorder, req *request) error { return errNotImplemented }
