package s3

import "github.com/cairnstore/cairn/objstore"

// ACLs: Get/PutBucketAcl, Get/PutObjectAcl, canned ACLs and x-amz-grant-* headers.
// Not built yet: each answers NotImplemented.

func (s *Server) getBucketACL(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putBucketACL(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) getObjectACL(w *recorder, req *request) error { return errNotImplemented }

func (s *Server) putObjectACL(w *recorder, req *request) error { return errNotImplemented }

// aclAttrs keeps the ACL a write's x-amz-acl or x-amz-grant-* headers give
// the new version. Not built yet: the headers are ignored.
func (s *Server) aclAttrs(req *request, a *objstore.Attrs) error { return nil }
