package iceberg

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
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
// sentinel of package catalog is missing here. fix is what the client can
// do, appended to the catalog's words.
func catalogErrors() []catalogError {
	return []catalogError{
		{catalog.ErrCommitStateUnknown, APIError{Status: 500, Type: "CommitStateUnknownException"}, ""},
		{catalog.ErrNoSuchWarehouse, APIError{Status: 404, Type: "NoSuchWarehouseException"},
			"check the warehouse name, or create the table bucket first (cairn admin table-bucket create NAME)"},
		{catalog.ErrNoSuchNamespace, APIError{Status: 404, Type: "NoSuchNamespaceException"},
			"check the namespace name, or create the namespace first"},
		{catalog.ErrNoSuchTable, APIError{Status: 404, Type: "NoSuchTableException"},
			"check the table name and its namespace, or create the table first"},
		{catalog.ErrNoSuchView, APIError{Status: 404, Type: "NoSuchViewException"},
			"check the view name and its namespace, or create the view first"},
		{catalog.ErrAlreadyExists, APIError{Status: 409, Type: "AlreadyExistsException"},
			"choose another name, or load the existing one"},
		{catalog.ErrNamespaceNotEmpty, APIError{Status: 409, Type: "NamespaceNotEmptyException"},
			"drop its tables, views and child namespaces first"},
		{catalog.ErrCommitFailed, APIError{Status: 409, Type: "CommitFailedException"},
			"load the table again and retry the commit against its current metadata"},
		{catalog.ErrBadRequest, APIError{Status: 400, Type: "BadRequestException"},
			"correct the request as the message says"},
		{catalog.ErrUnprocessable, APIError{Status: 422, Type: "UnprocessableEntityException"},
			"correct the request so that it does not contradict itself"},
		{catalog.ErrUnsupported, APIError{Status: 406, Type: "UnsupportedOperationException"}, ""},
		{catalog.ErrFenced, APIError{Status: 409, Type: "CommitFailedException"},
			"retry once the catalog migration has finished or been cancelled"},
		{catalog.ErrMigrationConflict, APIError{Status: 409, Type: "CommitFailedException"},
			"run the migration preflight (cairn admin catalog migration preflight WAREHOUSE) and resolve what it reports"},
		{catalog.ErrQuarantined, APIError{Status: 503, Type: "ServiceUnavailableException"},
			"an operator must drop the colliding table or view first"},
		{catalog.ErrNoSuchPolicy, APIError{Status: 404, Type: "NotFoundException"},
			"put one first (PutTableBucketPolicy or PutTablePolicy of the S3 Tables API)"},
		{catalog.ErrUnavailable, APIError{Status: 503, Type: "ServiceUnavailableException"},
			"other warehouses are served; an operator must repair this one (the server log says why)"},
		{objstore.ErrUnavailable, APIError{Status: 503, Type: "ServiceUnavailableException"},
			"the store's index (etcd) cannot be reached; retry once it is back"},
		{objstore.ErrBusy, APIError{Status: 503, Type: "ServiceUnavailableException"},
			"too many concurrent writes contended in the store's index; retry"},
		// The backing's own errors are translated by the catalog and should
		// not get here; if one does, a failed conditional write applied
		// nothing (409) and a missing record is a 404.
		{catalog.ErrConflict, APIError{Status: 409, Type: "CommitFailedException"}, "reload and retry"},
		{catalog.ErrNotFound, APIError{Status: 404, Type: "NotFoundException"}, ""},
	}
}

// catalogError is one row of catalogErrors.
type catalogError struct {
	err error
	api APIError
	fix string
}

// faceErrors maps the face's own errors, whose text (without the
// "iceberg: " prefix) is the message: it says what is wrong and what to do.
func faceErrors() []catalogError {
	return []catalogError{
		{errBadPath, APIError{Status: http.StatusBadRequest, Type: "BadRequestException"}, ""},
		{ErrUnauthenticated, APIError{Status: http.StatusUnauthorized, Type: "NotAuthorizedException"}, ""},
		{ErrForbidden, APIError{Status: http.StatusForbidden, Type: "ForbiddenException"}, ""},
	}
}

// internalMessage is the message of a 500: the details stay in the
// server log, whose line of this request carries its id (rid).
func internalMessage(rid string) string {
	return fmt.Sprintf("internal error; the server log has the details under request id %s", rid)
}

// toAPIError is the one mapping from errors to Iceberg error responses;
// rid is the request's id. The message of a mapped error is the catalog's
// words (catalog.ClientMessage: what is missing or wrong, without the
// backing's and the store's causes) and what to do; a 500 says only that
// the server log has the details under rid. The log line keeps the
// whole error.
func toAPIError(err error, rid string) *APIError {
	var api *APIError
	if errors.As(err, &api) {
		return api
	}
	for _, e := range catalogErrors() {
		if errors.Is(err, e.err) {
			a := e.api
			if e.err == catalog.ErrCommitStateUnknown {
				a.Message = fmt.Sprintf("the commit may or may not have been applied: load the table to see whether it was before retrying; the server log has the details under request id %s", rid)
				return &a
			}
			a.Message = catalog.ClientMessage(err)
			if e.fix != "" && !strings.Contains(a.Message, e.fix) {
				a.Message += "; " + e.fix
			}
			return &a
		}
	}
	for _, e := range faceErrors() {
		if errors.Is(err, e.err) {
			return apiErr(e.api.Status, e.api.Type, "%s", strings.TrimPrefix(err.Error(), "iceberg: "))
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return apiErr(http.StatusServiceUnavailable, "ServiceUnavailableException", "the request was cancelled or timed out; retry it")
	}
	return apiErr(http.StatusInternalServerError, "InternalServerError", "%s", internalMessage(rid))
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
