package s3

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"

	"github.com/cairnstore/cairn/frontends/s3/cors"
	"github.com/cairnstore/cairn/frontends/s3/iam"
	"github.com/cairnstore/cairn/frontends/s3/postform"
	"github.com/cairnstore/cairn/frontends/s3/sigv2"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
	"github.com/cairnstore/cairn/frontends/s3/sse"
	"github.com/cairnstore/cairn/objstore"
)

// APIError is an S3 error response: code, HTTP status and message.
type APIError struct {
	Code    string
	Status  int
	Message string
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

// apiErr builds an error for the face's own checks.
func apiErr(code string, status int, format string, args ...any) *APIError {
	return &APIError{Code: code, Status: status, Message: fmt.Sprintf(format, args...)}
}

// Errors the face raises itself.
var (
	errNotImplemented   = &APIError{"NotImplemented", http.StatusNotImplemented, "A header or query you provided implies functionality that is not implemented."}
	errMethodNotAllowed = &APIError{"MethodNotAllowed", http.StatusMethodNotAllowed, "The specified method is not allowed against this resource."}
	errMalformedXML     = &APIError{"MalformedXML", http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema."}
	errAccessDenied     = &APIError{"AccessDenied", http.StatusForbidden, "Access Denied."}
	errMissingLength    = &APIError{"MissingContentLength", http.StatusLengthRequired, "You must provide the Content-Length HTTP header."}
	errEntityTooLarge   = &APIError{"EntityTooLarge", http.StatusBadRequest, "Your proposed upload exceeds the maximum allowed object size."}
	errInvalidDigest    = &APIError{"InvalidDigest", http.StatusBadRequest, "The Content-MD5 you specified is not valid."}
	errNotModified      = &APIError{"NotModified", http.StatusNotModified, "Not Modified"}
	// errStorageFull answers a write that failed because drives are full
	// (ENOSPC or EDQUOT under the store's error, often a lost write
	// quorum): 507 like MinIO's XMinioStorageFull, so that a client does
	// not read it as SlowDown and retry into the same full disk.
	errStorageFull = &APIError{"InsufficientStorage", http.StatusInsufficientStorage, "The drives are full: delete objects or add space, then retry."}
)

// Access control (acl.go, bucketpolicy.go, authz.go, bucket ownership).
var (
	errBucketExists      = &APIError{"BucketAlreadyExists", http.StatusConflict, "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again."}
	errBucketOwnedByYou  = &APIError{"BucketAlreadyOwnedByYou", http.StatusConflict, "Your previous request to create the named bucket succeeded and you already own it."}
	errMalformedACL      = &APIError{"MalformedACLError", http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema."}
	errACLNotSupported   = &APIError{"AccessControlListNotSupported", http.StatusBadRequest, "The bucket does not allow ACLs."}
	errNoSuchPolicy      = &APIError{"NoSuchBucketPolicy", http.StatusNotFound, "The bucket policy does not exist."}
	errNoSuchPAB         = &APIError{"NoSuchPublicAccessBlockConfiguration", http.StatusNotFound, "The public access block configuration was not found."}
	errNoSuchOwnership   = &APIError{"OwnershipControlsNotFoundError", http.StatusNotFound, "The bucket ownership controls were not found."}
	errCannedAndGrants   = &APIError{"InvalidRequest", http.StatusBadRequest, "Specifying both Canned ACLs and Header Grants is not allowed."}
	errUnexpectedContent = &APIError{"UnexpectedContent", http.StatusBadRequest, "This request does not support content."}
)

// Request handling (server.go): a URI whose bucket or key does not
// decode to UTF-8 (S3's InvalidURI).
var errInvalidURI = &APIError{"InvalidURI", http.StatusBadRequest, "Couldn't parse the specified URI."}

// storeErrors maps every objstore sentinel; TestErrorTablesCoverSentinels
// fails when one is missing.
var storeErrors = []sentinel{
	{objstore.ErrInvalidArgument, APIError{"InvalidArgument", 400, "Invalid argument."}},
	{objstore.ErrInvalidBucketName, APIError{"InvalidBucketName", 400, "The specified bucket is not valid."}},
	{objstore.ErrBucketExists, APIError{"BucketAlreadyOwnedByYou", 409, "Your previous request to create the named bucket succeeded and you already own it."}},
	{objstore.ErrNoSuchBucket, APIError{"NoSuchBucket", 404, "The specified bucket does not exist."}},
	{objstore.ErrBucketNotEmpty, APIError{"BucketNotEmpty", 409, "The bucket you tried to delete is not empty."}},
	{objstore.ErrInvalidKey, APIError{"KeyTooLongError", 400, "Your key is too long."}},
	{objstore.ErrNoSuchKey, APIError{"NoSuchKey", 404, "The specified key does not exist."}},
	{objstore.ErrNoSuchVersion, APIError{"NoSuchVersion", 404, "The specified version does not exist."}},
	{objstore.ErrDeleteMarker, APIError{"MethodNotAllowed", 405, "The specified method is not allowed against this resource."}},
	{objstore.ErrPreconditionFailed, APIError{"PreconditionFailed", 412, "At least one of the pre-conditions you specified did not hold."}},
	{objstore.ErrInvalidRange, APIError{"InvalidRange", 416, "The requested range is not satisfiable."}},
	{objstore.ErrNoSuchUpload, APIError{"NoSuchUpload", 404, "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed."}},
	{objstore.ErrInvalidPartNumber, APIError{"InvalidArgument", 400, "Part number must be an integer between 1 and 10000, inclusive."}},
	{objstore.ErrInvalidPart, APIError{"InvalidPart", 400, "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag."}},
	{objstore.ErrInvalidPartOrder, APIError{"InvalidPartOrder", 400, "The list of parts was not in ascending order. The parts list must be specified in order by part number."}},
	{objstore.ErrEntityTooSmall, APIError{"EntityTooSmall", 400, "Your proposed upload is smaller than the minimum allowed object size."}},
	{objstore.ErrIncompleteBody, APIError{"IncompleteBody", 400, "You did not provide the number of bytes specified by the Content-Length HTTP header."}},
	{objstore.ErrBadDigest, APIError{"BadDigest", 400, "The Content-MD5 you specified did not match what we received."}},
	{objstore.ErrQuorumLost, APIError{"SlowDown", 503, "Not enough drives are available to serve the request safely; please retry."}},
	{objstore.ErrDataCorrupt, APIError{"InternalError", 500, "The stored data could not be read back intact."}},
	{objstore.ErrInternal, APIError{"InternalError", 500, "We encountered an internal error."}},
	{objstore.ErrClosed, APIError{"ServiceUnavailable", 503, "The server is shutting down."}},
	{objstore.ErrUnavailable, APIError{"SlowDown", 503, "The store's index (etcd) cannot be reached right now; please retry."}},
	{objstore.ErrBusy, APIError{"SlowDown", 503, "Too many concurrent writes contended in the store's index; please reduce your request rate and retry."}},
	{objstore.ErrTooManyChanges, APIError{"InvalidRequest", 400, "The request changes more keys at once than the server's index takes in one transaction; change fewer keys per request."}},
	// Object lock (objectlock.go).
	{objstore.ErrObjectLocked, APIError{"AccessDenied", 403, "Access Denied because object protected by object lock."}},
	{objstore.ErrInvalidBucketState, APIError{"InvalidBucketState", 409, "The request is not valid with the current state of the bucket."}},
	// Appends (PutObject with x-amz-write-offset-bytes).
	{objstore.ErrInvalidWriteOffset, APIError{"InvalidWriteOffset", 400, "The write offset value that you specified does not match the current object size; HEAD the object and append at its size."}},
	{objstore.ErrTooManySegments, APIError{"TooManyParts", 400, "The object has the most parts an append may give it; rewrite it whole (a PutObject) to append again."}},
	{objstore.ErrNotAppendable, APIError{"InvalidRequest", 400, "The object is encrypted and cannot be appended to; write it whole with PutObject."}},
}

// authErrors maps the signature sentinels (SigV4 and SigV2).
var authErrors = []sentinel{
	{sigv4.ErrMissingAuth, APIError{"AccessDenied", 403, "Anonymous access is not allowed; sign the request."}},
	{sigv4.ErrMalformedAuth, APIError{"AuthorizationHeaderMalformed", 400, "The authorization header or query is malformed."}},
	{sigv4.ErrUnsupportedAlgorithm, APIError{"InvalidRequest", 400, "Please use AWS4-HMAC-SHA256."}},
	{sigv4.ErrUnknownAccessKey, APIError{"InvalidAccessKeyId", 403, "The AWS Access Key Id you provided does not exist in our records."}},
	{sigv4.ErrSignatureMismatch, APIError{"SignatureDoesNotMatch", 403, "The request signature we calculated does not match the signature you provided. Check your key and signing method."}},
	{sigv4.ErrTimeSkewed, APIError{"RequestTimeTooSkewed", 403, "The difference between the request time and the current time is too large."}},
	{sigv4.ErrExpired, APIError{"AccessDenied", 403, "Request has expired."}},
	{sigv4.ErrExpiresRange, APIError{"AuthorizationQueryParametersError", 403, "X-Amz-Expires must be a number of seconds from 1 to 604800 (a week); presign the URL again with an expiry in that range."}},
	{sigv4.ErrContentSHA256Mismatch, APIError{"XAmzContentSHA256Mismatch", 400, "The provided 'x-amz-content-sha256' header does not match what was computed."}},
	{sigv4.ErrChecksumMismatch, APIError{"BadDigest", 400, "The checksum you specified did not match the calculated checksum."}},
	{sigv4.ErrInvalidChecksum, APIError{"InvalidRequest", 400, "The checksum header or trailer is not valid."}},
	{sigv4.ErrMalformedChunk, APIError{"IncompleteBody", 400, "The chunked payload is malformed."}},
	{sigv4.ErrIncompleteBody, APIError{"IncompleteBody", 400, "You did not provide the number of bytes specified by the Content-Length HTTP header."}},
	{sigv2.ErrMalformedAuth, APIError{"InvalidArgument", 400, "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature"}},
	{sigv2.ErrMalformedQuery, APIError{"AccessDenied", 403, "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters"}},
	{sigv2.ErrMissingDate, APIError{"AccessDenied", 403, "AWS authentication requires a valid Date or x-amz-date header"}},
	{sigv2.ErrUnknownAccessKey, APIError{"InvalidAccessKeyId", 403, "The AWS Access Key Id you provided does not exist in our records."}},
	{sigv2.ErrSignatureMismatch, APIError{"SignatureDoesNotMatch", 403, "The request signature we calculated does not match the signature you provided. Check your key and signing method."}},
	{sigv2.ErrTimeSkewed, APIError{"RequestTimeTooSkewed", 403, "The difference between the request time and the current time is too large."}},
	{sigv2.ErrExpired, APIError{"AccessDenied", 403, "Request has expired"}},
}

// iamErrors maps the user directory's errors (admin API).
var iamErrors = []sentinel{
	{iam.ErrUserExists, APIError{"UserAlreadyExists", 409, "The user already exists."}},
	{iam.ErrNoSuchUser, APIError{"NoSuchUser", 404, "The user does not exist."}},
	{iam.ErrInvalidUser, APIError{"InvalidArgument", 400, "The user is not valid."}},
	{iam.ErrInvalidPolicy, APIError{"MalformedPolicy", 400, "The policy document is not valid."}},
}

// CORS and browser uploads (cors.go, postobject.go): the sentinels of the
// cors and postform parsers. The message is the error's own text after
// the sentinel's: those packages word it as S3 does.
var formErrors = []sentinel{
	{cors.ErrMalformed, APIError{"MalformedXML", 400, ""}},
	{cors.ErrInvalid, APIError{"InvalidRequest", 400, ""}},
	{postform.ErrNotMultipart, APIError{"PreconditionFailed", 412, ""}},
	{postform.ErrMalformed, APIError{"MalformedPOSTRequest", 400, ""}},
	{postform.ErrFieldsTooLarge, APIError{"MaxPostPreDataLengthExceeded", 400, ""}},
	{postform.ErrInvalidArgument, APIError{"InvalidArgument", 400, ""}},
	{postform.ErrInvalidPolicy, APIError{"InvalidPolicyDocument", 400, ""}},
	{postform.ErrPolicyDenied, APIError{"AccessDenied", 403, ""}},
	{postform.ErrUnknownAccessKey, APIError{"InvalidAccessKeyId", 403, ""}},
	{postform.ErrSignatureMismatch, APIError{"SignatureDoesNotMatch", 403, ""}},
}

// formError maps the cors and postform errors (nil for others).
func formError(err error) *APIError {
	for _, e := range formErrors {
		if errors.Is(err, e.err) {
			a := e.api
			a.Message = afterSentinel(err, e.err)
			return &a
		}
	}
	return nil
}

// afterSentinel is err's text after the sentinel's and ": " (all of it
// when the sentinel's text is not followed by one).
func afterSentinel(err, sentinel error) string {
	msg := err.Error()
	if i := strings.Index(msg, sentinel.Error()+": "); i >= 0 {
		msg = msg[i+len(sentinel.Error())+2:]
	}
	return msg
}

// bucketNameError says which naming rule name breaks, in the words of
// objstore.ValidateBucketName (`"My_Bucket": only lowercase letters, ...`),
// and what the rules are.
func bucketNameError(err error) *APIError {
	why := afterSentinel(err, objstore.ErrInvalidBucketName)
	if why == err.Error() {
		why = "it breaks the bucket naming rules"
	}
	return &APIError{"InvalidBucketName", http.StatusBadRequest, "The specified bucket is not valid: " + why +
		". A bucket name is 3 to 63 lowercase letters, digits, dots and hyphens, begins and ends with a letter or digit, " +
		"has no two adjacent dots, is not an IP address, does not start with xn--, sthree- or amzn-s3-demo- " +
		"and does not end with -s3alias, --ol-s3, .mrap, --x-s3 or --table-s3."}
}

// withRequestID ends the message of a 500, whose details only the server
// log has, with the request id (rid) its access log line carries.
func withRequestID(msg, rid string) string {
	return strings.TrimSuffix(msg, ".") + "; the server log has the details under request id " + rid + "."
}

// sseErrors map the encryption sentinels (encryption at rest).
var sseErrors = []sentinel{
	{sse.ErrWrongKey, APIError{"AccessDenied", 403, "The customer key given does not match the key the object was encrypted with."}},
	{sse.ErrMasterKey, APIError{"InternalError", 500, "The server's master key (or key ring key) does not open this object's key: the key it was written with was lost or replaced."}},
	{sse.ErrNoMasterKey, APIError{"NotImplemented", 501, "SSE-S3 needs a master key, and the server has none configured."}},
	{sse.ErrNoSuchKey, APIError{"KMS.NotFoundException", 400, "The key ring has no such key."}},
	{sse.ErrDigest, APIError{"BadDigest", 400, "The Content-MD5 you specified did not match what we received."}},
	{sse.ErrCorrupt, APIError{"InternalError", 500, "The stored encrypted data does not authenticate."}},
}

// sentinel maps one package's sentinel error to its S3 error.
type sentinel struct {
	err error
	api APIError
}

// toAPIError is the one mapping from errors to S3 error responses. The
// message says what was wrong and what to do; it never holds the error's
// chain (the access log line does). writeError adds the request id to the
// message of a 500.
func toAPIError(err error) *APIError {
	var api *APIError
	if errors.As(err, &api) {
		return api
	}
	var pe *objstore.PartError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if storageFull(err) {
		return errStorageFull
	}
	if errors.Is(err, objstore.ErrInvalidBucketName) {
		return bucketNameError(err)
	}
	for _, t := range [][]sentinel{sseErrors, authErrors, storeErrors} {
		for _, e := range t {
			if errors.Is(err, e.err) {
				a := e.api
				return &a
			}
		}
	}
	if a := formError(err); a != nil {
		return a
	}
	for _, e := range iamErrors {
		if errors.Is(err, e.err) {
			a := e.api
			a.Message = err.Error() // says what is wrong with the user or policy
			return &a
		}
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &APIError{"RequestTimeout", 400, "Your socket connection to the server was not read from or written to within the timeout period."}
	}
	return &APIError{"InternalError", 500, "We encountered an internal error."}
}

// storageFull says whether err failed for lack of room: a system error
// among its causes is ENOSPC or EDQUOT, and none is another one (a full
// drive beside two broken ones is a lost quorum, not a full store).
func storageFull(err error) bool {
	full, other := false, false
	var walk func(error)
	walk = func(e error) {
		if errno, ok := e.(syscall.Errno); ok {
			if errno == syscall.ENOSPC || errno == syscall.EDQUOT {
				full = true
			} else {
				other = true
			}
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			if c := u.Unwrap(); c != nil {
				walk(c)
			}
		}
	}
	walk(err)
	return full && !other
}

// errorResponse is the S3 error XML body.
type errorResponse struct {
	XMLName    xml.Name `xml:"Error"`
	Code       string   `xml:"Code"`
	Message    string   `xml:"Message"`
	Resource   string   `xml:"Resource,omitempty"`
	BucketName string   `xml:"BucketName,omitempty"`
	Key        string   `xml:"Key,omitempty"`
	RequestID  string   `xml:"RequestId"`
	HostID     string   `xml:"HostId"`
}
