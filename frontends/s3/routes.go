package s3

import (
	"net/http"
	"net/url"
	"strings"
)

type handler func(w *recorder, req *request) error

// unsupported are subresources S3 has that Cairn does not implement: they
// answer NotImplemented rather than being mistaken for a plain GET or PUT.
var unsupported = []string{
	"website", "replication", "notification",
	"logging", "requestPayment", "accelerate", "inventory", "metrics",
	"analytics", "intelligent-tiering", "restore", "select", "torrent",
}

// bucketSubs are the bucket subresources answered by the handlers of
// subresources.go, by method: the operation name and its handler.
func (s *Server) bucketSubs() map[string]map[string]subroute {
	return map[string]map[string]subroute{
		"acl": {
			http.MethodGet: {"GetBucketAcl", s.getBucketACL},
			http.MethodPut: {"PutBucketAcl", s.putBucketACL},
		},
		"policy": {
			http.MethodGet:    {"GetBucketPolicy", s.getBucketPolicy},
			http.MethodPut:    {"PutBucketPolicy", s.putBucketPolicy},
			http.MethodDelete: {"DeleteBucketPolicy", s.deleteBucketPolicy},
		},
		"policyStatus": {
			http.MethodGet: {"GetBucketPolicyStatus", s.getBucketPolicyStatus},
		},
		"ownershipControls": {
			http.MethodGet:    {"GetBucketOwnershipControls", s.getOwnershipControls},
			http.MethodPut:    {"PutBucketOwnershipControls", s.putOwnershipControls},
			http.MethodDelete: {"DeleteBucketOwnershipControls", s.deleteOwnershipControls},
		},
		"publicAccessBlock": {
			http.MethodGet:    {"GetPublicAccessBlock", s.getPublicAccessBlock},
			http.MethodPut:    {"PutPublicAccessBlock", s.putPublicAccessBlock},
			http.MethodDelete: {"DeletePublicAccessBlock", s.deletePublicAccessBlock},
		},
		"cors": {
			http.MethodGet:    {"GetBucketCors", s.getBucketCORS},
			http.MethodPut:    {"PutBucketCors", s.putBucketCORS},
			http.MethodDelete: {"DeleteBucketCors", s.deleteBucketCORS},
		},
		"tagging": {
			http.MethodGet:    {"GetBucketTagging", s.getBucketTagging},
			http.MethodPut:    {"PutBucketTagging", s.putBucketTagging},
			http.MethodDelete: {"DeleteBucketTagging", s.deleteBucketTagging},
		},
		"encryption": {
			http.MethodGet:    {"GetBucketEncryption", s.getBucketEncryption},
			http.MethodPut:    {"PutBucketEncryption", s.putBucketEncryption},
			http.MethodDelete: {"DeleteBucketEncryption", s.deleteBucketEncryption},
		},
		"object-lock": {
			http.MethodGet: {"GetObjectLockConfiguration", s.getObjectLockConfig},
			http.MethodPut: {"PutObjectLockConfiguration", s.putObjectLockConfig},
		},
	}
}

// objectSubs are the object subresources, like bucketSubs.
func (s *Server) objectSubs() map[string]map[string]subroute {
	return map[string]map[string]subroute{
		"acl": {
			http.MethodGet: {"GetObjectAcl", s.getObjectACL},
			http.MethodPut: {"PutObjectAcl", s.putObjectACL},
		},
		"tagging": {
			http.MethodGet:    {"GetObjectTagging", s.getObjectTagging},
			http.MethodPut:    {"PutObjectTagging", s.putObjectTagging},
			http.MethodDelete: {"DeleteObjectTagging", s.deleteObjectTagging},
		},
		"retention": {
			http.MethodGet: {"GetObjectRetention", s.getObjectRetention},
			http.MethodPut: {"PutObjectRetention", s.putObjectRetention},
		},
		"legal-hold": {
			http.MethodGet: {"GetObjectLegalHold", s.getObjectLegalHold},
			http.MethodPut: {"PutObjectLegalHold", s.putObjectLegalHold},
		},
	}
}

// subroute is one subresource operation.
type subroute struct {
	api string
	h   handler
}

// subresource routes a request naming one of subs' subresources; ok is
// false when it names none. A subresource without the method is
// MethodNotAllowed.
func subresource(q url.Values, method string, subs map[string]map[string]subroute) (handler, string, bool) {
	for name, byMethod := range subs {
		if _, ok := q[name]; !ok {
			continue
		}
		if r, ok := byMethod[method]; ok {
			return r.h, r.api, true
		}
		return nil, "MethodNotAllowed", true
	}
	return nil, "", false
}

// route picks the handler and names the operation (the AWS API name).
// A nil handler means the operation is not implemented (or the method not
// allowed, when the name is MethodNotAllowed).
func (s *Server) route(req *request) (handler, string) {
	q := req.URL.Query()
	has := func(k string) bool { _, ok := q[k]; return ok }
	for _, sub := range unsupported {
		if has(sub) {
			return nil, "Unsupported:" + sub
		}
	}
	m := req.Method
	if m == http.MethodOptions && req.bucket != "" && req.bucket != adminBucket {
		return s.preflightCORS, "PreflightCORS"
	}
	switch {
	case req.bucket == adminBucket:
		return s.admin, "Admin"
	case req.bucket != "" && req.key == "":
		if h, api, ok := subresource(q, m, s.subs.bucket); ok {
			return h, api
		}
	case req.bucket != "":
		if h, api, ok := subresource(q, m, s.subs.object); ok {
			return h, api
		}
	}
	switch {
	case req.bucket == "":
		if m == http.MethodGet {
			return s.listBuckets, "ListBuckets"
		}
		if isIAMQuery(req) {
			return s.queryAPI, "IAM" // the user-policy API (iamapi.go) and STS (sts.go)
		}
	case req.key == "":
		switch m {
		case http.MethodPut:
			switch {
			case has("versioning"):
				return s.putBucketVersioning, "PutBucketVersioning"
			case has("lifecycle"):
				return s.putBucketLifecycle, "PutBucketLifecycleConfiguration"
			}
			return s.createBucket, "CreateBucket"
		case http.MethodGet:
			switch {
			case has("location"):
				return s.getBucketLocation, "GetBucketLocation"
			case has("versioning"):
				return s.getBucketVersioning, "GetBucketVersioning"
			case has("lifecycle"):
				return s.getBucketLifecycle, "GetBucketLifecycleConfiguration"
			case has("uploads"):
				return s.listMultipartUploads, "ListMultipartUploads"
			case has("versions"):
				return s.listObjectVersions, "ListObjectVersions"
			case q.Get("list-type") == "2":
				return s.listObjectsV2, "ListObjectsV2"
			}
			return s.listObjectsV1, "ListObjects"
		case http.MethodHead:
			return s.headBucket, "HeadBucket"
		case http.MethodDelete:
			if has("lifecycle") {
				return s.deleteBucketLifecycle, "DeleteBucketLifecycle"
			}
			return s.deleteBucket, "DeleteBucket"
		case http.MethodPost:
			if has("delete") {
				return s.deleteObjects, "DeleteObjects"
			}
			return s.postObject, "PostObject"
		}
	default:
		switch m {
		case http.MethodPut:
			switch {
			case has("uploadId") && req.Header.Get("x-amz-copy-source") != "":
				return s.uploadPartCopy, "UploadPartCopy"
			case has("uploadId"):
				return s.uploadPart, "UploadPart"
			case has("renameObject"):
				return s.renameObject, "RenameObject"
			case req.Header.Get("x-amz-copy-source") != "":
				return s.copyObject, "CopyObject"
			}
			return s.putObject, "PutObject"
		case http.MethodGet:
			switch {
			case has("uploadId"):
				return s.listParts, "ListParts"
			case has("attributes"):
				return s.getObjectAttributes, "GetObjectAttributes"
			}
			return s.getObject, "GetObject"
		case http.MethodHead:
			return s.headObject, "HeadObject"
		case http.MethodDelete:
			if has("uploadId") {
				return s.abortMultipartUpload, "AbortMultipartUpload"
			}
			return s.deleteObject, "DeleteObject"
		case http.MethodPost:
			switch {
			case has("uploads"):
				return s.createMultipartUpload, "CreateMultipartUpload"
			case has("uploadId"):
				return s.completeMultipartUpload, "CompleteMultipartUpload"
			}
		}
	}
	return nil, "MethodNotAllowed"
}

// action is the IAM action checked for an operation.
func action(api string) string {
	switch api {
	case "HeadBucket", "ListObjects", "ListObjectsV2":
		return "ListBucket"
	case "ListObjectVersions":
		return "ListBucketVersions"
	case "ListMultipartUploads":
		return "ListBucketMultipartUploads"
	case "HeadObject", "GetObjectAttributes":
		return "GetObject"
	case "CreateMultipartUpload", "UploadPart", "UploadPartCopy", "CompleteMultipartUpload", "CopyObject", "RenameObject":
		return "PutObject"
	case "ListParts":
		return "ListMultipartUploadParts"
	case "DeleteObjects":
		return "DeleteObject"
	case "PutBucketLifecycleConfiguration", "DeleteBucketLifecycle":
		return "PutLifecycleConfiguration"
	case "GetBucketLifecycleConfiguration":
		return "GetLifecycleConfiguration"
	case "ListBuckets":
		return "ListAllMyBuckets"
	case "PostObject":
		return "PutObject"
	case "GetBucketCors":
		return "GetBucketCORS"
	case "PutBucketCors", "DeleteBucketCors":
		return "PutBucketCORS"
	case "DeleteBucketTagging":
		return "PutBucketTagging"
	case "DeleteBucketOwnershipControls":
		return "PutBucketOwnershipControls"
	case "GetPublicAccessBlock":
		return "GetBucketPublicAccessBlock"
	case "PutPublicAccessBlock", "DeletePublicAccessBlock":
		return "PutBucketPublicAccessBlock"
	case "GetBucketEncryption":
		return "GetEncryptionConfiguration"
	case "PutBucketEncryption", "DeleteBucketEncryption":
		return "PutEncryptionConfiguration"
	case "GetObjectLockConfiguration":
		return "GetBucketObjectLockConfiguration"
	case "PutObjectLockConfiguration":
		return "PutBucketObjectLockConfiguration"
	}
	if rest, ok := strings.CutPrefix(api, "Unsupported:"); ok {
		return rest
	}
	return api
}
