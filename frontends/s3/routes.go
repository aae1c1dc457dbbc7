package s3

import (
	"net/http"
	"strings"
)

type handler func(w *recorder, req *request) error

// unsupported are subresources S3 has that Cairn does not implement: they
// answer NotImplemented rather than being mistaken for a plain GET or PUT.
var unsupported = []string{
	"acl", "policy", "policyStatus", "cors", "website", "tagging", "replication",
	"encryption", "notification", "object-lock", "legal-hold", "retention",
	"logging", "requestPayment", "accelerate", "inventory", "metrics",
	"analytics", "intelligent-tiering", "ownershipControls", "publicAccessBlock",
	"restore", "select", "torrent",
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
	switch {
	case req.bucket == adminBucket:
		return s.admin, "Admin"
	case req.bucket == "":
		if m == http.MethodGet {
			return s.listBuckets, "ListBuckets"
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
	}
	if rest, ok := strings.CutPrefix(api, "Unsupported:"); ok {
		return rest
	}
	return api
}
