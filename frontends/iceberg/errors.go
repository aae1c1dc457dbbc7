package iceberg

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairnstore/cairn/catalog"
)

// APIError is an Iceberg REST error: the HTTP status, the exception type
// clients dispatch on, and a message.
type APIError struct {
	Status  int
	Type    string
	Message string
	// RetryAfter, in seconds, is sent as Retry-After when positive.
	RetryAfter int
}

func (e *APIError) Error() string { return e.Type + ": " + e.Message }

// apiErr builds an error for the face's own checks.
func apiErr(status int, typ, format string, args ...any) *APIError {
	return &APIError{Status: status, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// badRequest is a 400 BadRequestException.
func badRequest(format string, args ...any) *APIError {
	return apiErr(http.StatusBadRequest, "BadRequestException", format, args...)
}

// Errors of the face's own checks.
var (
	// ErrUnauthenticated is wrapped by Authenticator implementations for
	// missing or invalid credentials (401 NotAuthorizedException); any
	// other Authenticate error is answered the same way.
	ErrUnauthenticated = errors.New("iceberg: not authenticated")
	// ErrForbidden: authenticated but not permitted (403).
	ErrForbidden = errors.New("iceberg: forbidden")
)

// catalogErrors maps every catalog sentinel, checked in this order (the
// first match wins: state-unknown before failed, catalog sentinels before
// the backing's). TestErrorTableCoversCatalogSentinels fails when a
// sentinel of package catalog is missing here.
func catalogErrors() []catalogError {
	return []catalogError{
		{catalog.ErrCommitStateUnknown, APIError{Status: 500, Type: "CommitStateUnknownException"}},
		{catalog.ErrNoSuchWarehouse, APIError{Status: 404, Type: "NoSuchWarehouseException"}},
		{catalog.ErrNoSuchNamespace, APIError{Status: 404, Type: "NoSuchNamespaceException"}},
		{catalog.ErrNoSuchTable, APIError{Status: 404, Type: "NoSuchTableException"}},
		{catalog.ErrNoSuchView, APIError{Status: 404, Type: "NoSuchViewException"}},
		{catalog.ErrAlreadyExists, APIError{Status: 409, Type: "AlreadyExistsException"}},
		{catalog.ErrNamespaceNotEmpty, APIError{Status: 409, Type: "NamespaceNotEmptyException"}},
		{catalog.ErrCommitFailed, APIError{Status: 409, Type: "CommitFailedException"}},
		{catalog.ErrBadRequest, APIError{Status: 400, Type: "BadRequestException"}},
		{catalog.ErrUnprocessable, APIError{Status: 422, Type: "UnprocessableEntityException"}},
		{catalog.ErrUnsupported, APIError{Status: 406, Type: "UnsupportedOperationException"}},
		{catalog.ErrFenced, APIError{Status: 409, Type: "CommitFailedException"}},
		{catalog.ErrMigrationConflict, APIError{Status: 409, Type: "CommitFailedException"}},
		{catalog.ErrQuarantined, APIError{Status: 503, Type: "ServiceUnavailableException"}},
		{catalog.ErrUnavailable, APIError{Status: 503, Type: "ServiceUnavailableException"}},
		// The backing's own errors are translated by the catalog and should
		// not get here; if one does, a failed conditional write applied
		// nothing (409) and a missing record is a 404.
		{catalog.ErrConflict, APIError{Status: 409, Type: "CommitFailedException"}},
		{catalog.ErrNotFound, APIError{Status: 404, Type: "NotFoundException"}},
	}
}

// catalogError is one row of catalogErrors.
type catalogError struct {
	err error
	api APIError
}

// toAPIError is the one mapping from errors to Iceberg error responses.
// The message of a mapped error is the error's text (it names what is
// missing or wrong); unknown errors answer 500 without detail.
func toAPIError(err error) *APIError {
	var api *APIError
	if errors.As(err, &api) {
		return api
	}
	for _, e := range catalogErrors() {
		if errors.Is(err, e.err) {
			a := e.api
			a.Message = err.Error()
			return &a
		}
	}
	switch {
	case errors.Is(err, errBadPath):
		return badRequest("%v", err)
	case errors.Is(err, ErrUnauthenticated):
		return apiErr(http.StatusUnauthorized, "NotAuthorizedException", "%v", err)
	case errors.Is(err, ErrForbidden):
		return apiErr(http.StatusForbidden, "ForbiddenException", "%v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apiErr(http.StatusServiceUnavailable, "ServiceUnavailableException", "the request was cancelled or timed out")
	}
	return apiErr(http.StatusInternalServerError, "InternalServerError", "internal server error")
}

// errorBody is IcebergErrorResponse.
type errorBody struct {
	Error errorModel `json:"error"`
}

// errorModel is the spec's ErrorModel.
type errorModel struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}
