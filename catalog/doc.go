// Package catalog is the Iceberg catalog domain: warehouses (table
// buckets), namespaces, tables and views, their commits, and the backing
// that keeps the catalog's state. Table metadata semantics come from
// apache/iceberg-go (table.Metadata, requirements, updates, the metadata
// builder), used in this package and its backings only: objstore, fs and
// the S3 face never import it.
//
// The state lives behind the Backing interface: catalog/objectbacked keeps
// it as JSON objects in the store's system bucket .cairn.sys, each changed
// with a conditional write; the durable-strong backing (catalog/strong)
// comes with the cutover.
package catalog

import (
	// The metadata types and builder the catalog is built on.
	_ "github.com/apache/iceberg-go/table"
)
