package iceberg

import "github.com/cairnstore/cairn/catalog"

// The REST bodies that are not Iceberg metadata (open-api
// rest-catalog-open-api.yaml). Table and view metadata, create and commit
// requests pass through as raw JSON to package catalog.

// catalogConfig is CatalogConfig, the answer of GET /v1/config.
type catalogConfig struct {
	Defaults            map[string]string `json:"defaults"`
	Overrides           map[string]string `json:"overrides"`
	Endpoints           []string          `json:"endpoints,omitempty"`
	IdempotencyLifetime string            `json:"idempotency-key-lifetime,omitempty"`
}

// tokenResponse is OAuthTokenResponse.
type tokenResponse struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	IssuedTokenType string `json:"issued_token_type"`
	Scope           string `json:"scope,omitempty"`
}

// oauthError is OAuthError (RFC 6749 section 5.2).
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// listNamespacesResponse is ListNamespacesResponse.
type listNamespacesResponse struct {
	NextPageToken string     `json:"next-page-token,omitempty"`
	Namespaces    [][]string `json:"namespaces"`
}

// createNamespaceRequest is CreateNamespaceRequest.
type createNamespaceRequest struct {
	Namespace  []string          `json:"namespace"`
	Properties map[string]string `json:"properties"`
}

// namespaceResponse is CreateNamespaceResponse and GetNamespaceResponse.
type namespaceResponse struct {
	Namespace  []string          `json:"namespace"`
	Properties map[string]string `json:"properties"`
}

// updatePropertiesRequest is UpdateNamespacePropertiesRequest.
type updatePropertiesRequest struct {
	Removals []string          `json:"removals"`
	Updates  map[string]string `json:"updates"`
}

// updatePropertiesResponse is UpdateNamespacePropertiesResponse.
type updatePropertiesResponse struct {
	Updated []string `json:"updated"`
	Removed []string `json:"removed"`
	Missing []string `json:"missing"`
}

// listIdentifiersResponse is ListTablesResponse (also for views).
type listIdentifiersResponse struct {
	NextPageToken string          `json:"next-page-token,omitempty"`
	Identifiers   []catalog.Ident `json:"identifiers"`
}

// renameRequest is RenameTableRequest (also for views).
type renameRequest struct {
	Source      *catalog.Ident `json:"source"`
	Destination *catalog.Ident `json:"destination"`
}

// registerTableRequest is RegisterTableRequest.
type registerTableRequest struct {
	Name             string `json:"name"`
	MetadataLocation string `json:"metadata-location"`
	Overwrite        bool   `json:"overwrite"`
}

// tableBucketsResponse is the admin API's list of table buckets.
type tableBucketsResponse struct {
	TableBuckets []catalog.Warehouse `json:"table_buckets"`
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
