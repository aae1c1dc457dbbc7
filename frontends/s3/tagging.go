package s3

import (
	"net/http"

	"github.com/cairnstore/cairn/objstore"
)

// Object and bucket tagging.
// Not built yet: each answers NotImplemented.

func (s *Server) getObjectTagging(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putObjectTagging(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) deleteObjectTagging(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) getBucketTagging(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putBucketTagging(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) deleteBucketTagging(w *recorder, req *request) error { return errNotImplemented }

// tagAttrs keeps the tags of a write's x-amz-tagging header. Not built yet.
func (s *Server) tagAttrs(req *request, a *objstore.Attrs) error { return nil }

// copyKeepsTags reports whether a copy keeps its source's tags
// (x-amz-tagging-directive COPY, the default).
func (s *Server) copyKeepsTags(req *request) bool {
	return req.Header.Get("x-amz-tagging-directive") != "REPLACE"
}

// tagHeaders sets x-amz-tagging-count. Not built yet.
func (s *Server) tagHeaders(h http.Header, info objstore.ObjectInfo) {}
