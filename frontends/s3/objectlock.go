package s3

import (
	"net/http"

	"github.com/cairnstore/cairn/objstore"
)

// Object lock: bucket configuration, retention and legal hold.
// Not built yet: each answers NotImplemented.

func (s *Server) getObjectLockConfig(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putObjectLockConfig(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) getObjectRetention(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putObjectRetention(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) getObjectLegalHold(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putObjectLegalHold(w *recorder, req *request) error { return errNotImplemented }

// lockAttrs keeps the retention and legal hold of a write's
// x-amz-object-lock-* headers, or the bucket's default retention. Not
// built yet.
func (s *Server) lockAttrs(req *request, a *objstore.Attrs) error { return nil }

// lockHeaders sets the x-amz-object-lock-* headers. Not built yet.
func (s *Server) lockHeaders(h http.Header, info objstore.ObjectInfo) {}
