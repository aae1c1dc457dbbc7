package iceberg

import (
	"encoding/json"
	"time"
)

// The S3 Tables bodies, named and shaped as botocore's service model
// s3tables (2018-05-10) defines them. Timestamps are ISO 8601 in UTC.
// CreateTable's body and its conversion are in s3tables_schema.go, the
// maintenance shapes in s3tables_maintenance.go.

// s3tCreateBucketRequest is CreateTableBucketRequest.
type s3tCreateBucketRequest struct {
	Name                      string            `json:"name"`
	EncryptionConfiguration   json.RawMessage   `json:"encryptionConfiguration"`
	StorageClassConfiguration *s3tStorageClass  `json:"storageClassConfiguration"`
	Tags                      map[string]string `json:"tags"`
}

// s3tStorageClass is StorageClassConfiguration.
type s3tStorageClass struct {
	StorageClass string `json:"storageClass"`
}

// s3tARNResponse is CreateTableBucketResponse.
type s3tARNResponse struct {
	ARN string `json:"arn"`
}

// s3tBucket is GetTableBucketResponse and TableBucketSummary.
type s3tBucket struct {
	ARN            string    `json:"arn"`
	Name           string    `json:"name"`
	OwnerAccountID string    `json:"ownerAccountId"`
	CreatedAt      time.Time `json:"createdAt"`
	Type           string    `json:"type"`
}

// s3tListBucketsResponse is ListTableBucketsResponse.
type s3tListBucketsResponse struct {
	TableBuckets      []s3tBucket `json:"tableBuckets"`
	ContinuationToken string      `json:"continuationToken,omitempty"`
}

// s3tCreateNamespaceRequest is CreateNamespaceRequest's body.
type s3tCreateNamespaceRequest struct {
	Namespace []string `json:"namespace"`
}

// s3tCreateNamespaceResponse is CreateNamespaceResponse.
type s3tCreateNamespaceResponse struct {
	TableBucketARN string   `json:"tableBucketARN"`
	Namespace      []string `json:"namespace"`
}

// s3tNamespace is GetNamespaceResponse and NamespaceSummary.
type s3tNamespace struct {
	Namespace      []string  `json:"namespace"`
	CreatedAt      time.Time `json:"createdAt"`
	CreatedBy      string    `json:"createdBy"`
	OwnerAccountID string    `json:"ownerAccountId"`
}

// s3tListNamespacesResponse is ListNamespacesResponse.
type s3tListNamespacesResponse struct {
	Namespaces        []s3tNamespace `json:"namespaces"`
	ContinuationToken string         `json:"continuationToken,omitempty"`
}

// s3tCreateTableResponse is CreateTableResponse.
type s3tCreateTableResponse struct {
	TableARN     string `json:"tableARN"`
	VersionToken string `json:"versionToken"`
}

// s3tTable is GetTableResponse.
type s3tTable struct {
	Name              string    `json:"name"`
	Type              string    `json:"type"`
	TableARN          string    `json:"tableARN"`
	Namespace         []string  `json:"namespace"`
	VersionToken      string    `json:"versionToken"`
	MetadataLocation  string    `json:"metadataLocation,omitempty"`
	WarehouseLocation string    `json:"warehouseLocation"`
	CreatedAt         time.Time `json:"createdAt"`
	CreatedBy         string    `json:"createdBy"`
	ModifiedAt        time.Time `json:"modifiedAt"`
	ModifiedBy        string    `json:"modifiedBy"`
	OwnerAccountID    string    `json:"ownerAccountId"`
	Format            string    `json:"format"`
}

// s3tTableSummary is TableSummary.
type s3tTableSummary struct {
	Namespace  []string  `json:"namespace"`
	Name       string    `json:"name"`
	Type       string    `json:"type"`
	TableARN   string    `json:"tableARN"`
	CreatedAt  time.Time `json:"createdAt"`
	ModifiedAt time.Time `json:"modifiedAt"`
}

// s3tListTablesResponse is ListTablesResponse.
type s3tListTablesResponse struct {
	Tables            []s3tTableSummary `json:"tables"`
	ContinuationToken string            `json:"continuationToken,omitempty"`
}

// s3tRenameRequest is RenameTableRequest's body.
type s3tRenameRequest struct {
	NewNamespaceName string `json:"newNamespaceName"`
	NewName          string `json:"newName"`
	VersionToken     string `json:"versionToken"`
}

// s3tUpdateMetadataLocationRequest is UpdateTableMetadataLocationRequest.
type s3tUpdateMetadataLocationRequest struct {
	VersionToken     string `json:"versionToken"`
	MetadataLocation string `json:"metadataLocation"`
}

// s3tUpdateMetadataLocationResponse is UpdateTableMetadataLocationResponse.
type s3tUpdateMetadataLocationResponse struct {
	Name             string   `json:"name"`
	TableARN         string   `json:"tableARN"`
	Namespace        []string `json:"namespace"`
	VersionToken     string   `json:"versionToken"`
	MetadataLocation string   `json:"metadataLocation"`
}

// s3tMetadataLocationResponse is GetTableMetadataLocationResponse.
type s3tMetadataLocationResponse struct {
	VersionToken      string `json:"versionToken"`
	MetadataLocation  string `json:"metadataLocation,omitempty"`
	WarehouseLocation string `json:"warehouseLocation"`
}

// The values of TableBucketType and TableType, and of OpenTableFormat.
const (
	s3tCustomer = "customer"
	s3tIceberg  = "ICEBERG"
)
