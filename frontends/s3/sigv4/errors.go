package sigv4

import "errors"

// Sentinel errors. Every error this package returns wraps exactly one of these
// (match with errors.Is) plus detail for logs. The S3 face maps each to one S3
// error code; the mapping named beside each is the intended one.
var (
	// ErrMissingAuth: the request carries no signature at all (403 AccessDenied,
	// or anonymous access if the face allows it).
	ErrMissingAuth = errors.New("sigv4: request is not signed")
	// ErrMalformedAuth: the Authorization header or presigned query cannot be
	// parsed or is inconsistent (400 AuthorizationHeaderMalformed, or
	// AuthorizationQueryParametersError for presigned URLs).
	ErrMalformedAuth = errors.New("sigv4: malformed authorization")
	// ErrUnsupportedAlgorithm: signed with something other than
	// AWS4-HMAC-SHA256, such as SigV2 or SigV4a (400).
	ErrUnsupportedAlgorithm = errors.New("sigv4: unsupported signature algorithm")
	// ErrUnknownAccessKey: the credential lookup did not know the key (403
	// InvalidAccessKeyId).
	ErrUnknownAccessKey = errors.New("sigv4: unknown access key")
	// ErrSignatureMismatch: the request, a chunk or the trailer signature does
	// not match (403 SignatureDoesNotMatch).
	ErrSignatureMismatch = errors.New("sigv4: signature does not match")
	// ErrTimeSkewed: the request time is further from now than MaxSkew (403
	// RequestTimeTooSkewed).
	ErrTimeSkewed = errors.New("sigv4: request time too skewed")
	// ErrExpired: a presigned URL is past X-Amz-Date + X-Amz-Expires (403
	// AccessDenied "Request has expired").
	ErrExpired = errors.New("sigv4: presigned request expired")
	// ErrExpiresRange: a presigned URL's X-Amz-Expires is not a number of
	// seconds from 1 to a week (403 AuthorizationQueryParametersError, the
	// status AWS answers it with).
	ErrExpiresRange = errors.New("sigv4: X-Amz-Expires out of range")
	// ErrContentSHA256Mismatch: the body does not hash to the declared hex
	// x-amz-content-sha256 (400 XAmzContentSHA256Mismatch).
	ErrContentSHA256Mismatch = errors.New("sigv4: x-amz-content-sha256 mismatch")
	// ErrChecksumMismatch: the body does not match the declared
	// x-amz-checksum-* value (400 BadDigest).
	ErrChecksumMismatch = errors.New("sigv4: payload checksum mismatch")
	// ErrInvalidChecksum: a checksum header or trailer names an unknown
	// algorithm, is not valid base64 of the right length, or is given twice
	// (400 InvalidRequest).
	ErrInvalidChecksum = errors.New("sigv4: invalid checksum header")
	// ErrMalformedChunk: the aws-chunked encoding or its trailer is malformed,
	// or carries more data than x-amz-decoded-content-length (400
	// IncompleteBody / InvalidRequest).
	ErrMalformedChunk = errors.New("sigv4: malformed chunked payload")
	// ErrIncompleteBody: the body ended before the declared length or before
	// the final chunk (400 IncompleteBody).
	ErrIncompleteBody = errors.New("sigv4: body shorter than declared")
)
