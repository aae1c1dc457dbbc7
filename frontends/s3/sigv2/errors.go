package sigv2

import "errors"

// Sentinel errors. Every error this package returns wraps exactly one of
// these (match with errors.Is) plus detail for logs. The S3 face maps each
// to one S3 error code; the mapping named beside each is AWS's.
var (
	// ErrMalformedAuth: the Authorization header is not "AWS
	// AccessKeyId:Signature", or the request carries two auth mechanisms
	// (400 InvalidArgument).
	ErrMalformedAuth = errors.New("sigv2: malformed authorization")
	// ErrMalformedQuery: a presigned query lacks AWSAccessKeyId, Signature
	// or Expires, or Expires is not seconds since the epoch (403
	// AccessDenied).
	ErrMalformedQuery = errors.New("sigv2: malformed presigned query")
	// ErrMissingDate: a header-signed request has neither a valid Date nor
	// a valid x-amz-date (403 AccessDenied).
	ErrMissingDate = errors.New("sigv2: no valid Date or x-amz-date")
	// ErrUnknownAccessKey: the credential lookup did not know the key (403
	// InvalidAccessKeyId).
	ErrUnknownAccessKey = errors.New("sigv2: unknown access key")
	// ErrSignatureMismatch: no StringToSign candidate matches the signature
	// (403 SignatureDoesNotMatch).
	ErrSignatureMismatch = errors.New("sigv2: signature does not match")
	// ErrTimeSkewed: the request time is further from now than MaxSkew (403
	// RequestTimeTooSkewed).
	ErrTimeSkewed = errors.New("sigv2: request time too skewed")
	// ErrExpired: a presigned URL is past its Expires (403 AccessDenied
	// "Request has expired").
	ErrExpired = errors.New("sigv2: presigned request expired")
)
