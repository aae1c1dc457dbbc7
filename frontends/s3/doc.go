// Package s3 is Cairn's S3 face: the S3 REST API over objstore.Store on
// the shared HTTP port, for aws-cli, boto3, the AWS SDKs, minio-go, rclone
// and Spark's s3a.
//
// It owns request routing (path-style and virtual-hosted-style), the XML
// bodies, S3 error responses (errors.go is the one place that maps store
// and signature errors to S3 codes), request ids, the access log and the
// S3 metrics. Signature checking and payload decoding live in the
// sub-packages sigv4 and sigv2; auth.go picks one by the request's form,
// and lets requests with no signature through as anonymous (empty access
// key) to the same authorization as every other request. The
// authorization decision is the sub-package access's (authz.go feeds it
// the request, the user's policy and the bucket's documents; acl.go and
// bucketpolicy.go keep those documents; iamapi.go serves the IAM
// query-protocol user-policy API, PutUserPolicy and its kin, over the user
// directory of the sub-package iam, and sts.go STS AssumeRole, whose
// temporary credentials every request may be signed with: takeSession
// makes such a request its user's, limited by the session's policy). The encryption formats and keys
// of SSE-C, SSE-S3 and SSE-KMS are the sub-package sse's (encryption.go
// and sse*.go wire them: bodies are encrypted before Store.Put and
// decrypted after the ObjectReader, so the store only ever holds an
// encrypted object's ciphertext). lifecycle.go validates lifecycle
// configurations and hands the store the rules it applies
// (objstore/lifecycle.go), keeping each rule's element for GET.
//
// It may import objstore and its own sub-packages only: never another
// face, never objstore's internals (meta, erasure, drive).
//
// Bodies stream both ways: a PUT body goes from the verifying sigv4 reader
// straight into Store.Put, a GET body from the pinned ObjectReader to the
// client; no object is ever held in memory.
//
// An object answer (GET, HEAD) never acts as a page of the server's
// origin, which the web console shares: it always carries
// X-Content-Type-Options: nosniff, and Content-Security-Policy: sandbox
// when its final Content-Type is one a browser renders as a scriptable
// document (sandboxHeaders in headers.go).
package s3
