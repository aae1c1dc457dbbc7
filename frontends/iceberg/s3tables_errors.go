package iceberg

import "net/http"

// s3tErrorBody is the body of an S3 Tables error; its type goes in the
// x-amzn-ErrorType header, where the AWS SDKs read it.
type s3tErrorBody struct {
	Message string `json:"message"`
}

// s3tError is the one mapping from errors to S3 Tables error answers. The
// catalog's sentinels and the face's own errors are mapped once, by
// toAPIError (errors.go), which words the message (what is wrong and what
// to do; a 500 names the request id rid and nothing else); this renders
// its status as the exceptions of the S3 Tables service model.
func s3tError(err error, rid string) *APIError {
	api := toAPIError(err, rid)
	status, typ := s3tErrorType(api.Status)
	return &APIError{Status: status, Type: typ, Message: api.Message, RetryAfter: api.RetryAfter}
}

// s3tErrorType is the S3 Tables status and exception of an Iceberg face
// status. The model has no 401, 406, 413 nor 422: an unauthenticated
// request is forbidden, and a request the catalog cannot take as sent is
// a bad request. 503 (a warehouse its backing does not serve, a
// quarantined identifier) stays 503, which the SDKs retry.
func s3tErrorType(status int) (int, string) {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return http.StatusForbidden, "ForbiddenException"
	case status == http.StatusNotFound:
		return http.StatusNotFound, "NotFoundException"
	case status == http.StatusMethodNotAllowed:
		return http.StatusMethodNotAllowed, "MethodNotAllowedException"
	case status == http.StatusConflict:
		return http.StatusConflict, "ConflictException"
	case status == http.StatusTooManyRequests:
		return http.StatusTooManyRequests, "TooManyRequestsException"
	case status == http.StatusServiceUnavailable:
		return http.StatusServiceUnavailable, "ServiceUnavailableException"
	case status >= 500:
		return http.StatusInternalServerError, "InternalServerErrorException"
	default:
		return http.StatusBadRequest, "BadRequestException"
	}
}
