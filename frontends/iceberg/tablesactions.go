package iceberg

import "github.com/cairnstore/cairn/catalog"

// What a request is, for the resource policies of table buckets and
// tables (ResourceAuthorizer): the S3 Tables actions it performs, and the
// table it names.
//
// An operation of the S3 Tables API performs the action of its own name
// (GetTable is s3tables:GetTable). An Iceberg REST operation performs the
// actions of the S3 Tables operations that do the same, as AWS's own
// Iceberg REST endpoint of S3 Tables maps them; the views, which S3
// Tables has not, count as tables. A request must be granted every one of
// its actions. The operator's routes (migration, recovery, backup,
// restore, status) perform none: users' own policies alone govern them.

// Action names of S3 Tables, as policies spell them.
const (
	tGetTableBucket              = "s3tables:GetTableBucket"
	tListNamespaces              = "s3tables:ListNamespaces"
	tCreateNamespace             = "s3tables:CreateNamespace"
	tGetNamespace                = "s3tables:GetNamespace"
	tDeleteNamespace             = "s3tables:DeleteNamespace"
	tListTables                  = "s3tables:ListTables"
	tCreateTable                 = "s3tables:CreateTable"
	tGetTable                    = "s3tables:GetTable"
	tDeleteTable                 = "s3tables:DeleteTable"
	tRenameTable                 = "s3tables:RenameTable"
	tGetTableMetadataLocation    = "s3tables:GetTableMetadataLocation"
	tUpdateTableMetadataLocation = "s3tables:UpdateTableMetadataLocation"
	tGetTableData                = "s3tables:GetTableData"
	tPutTableData                = "s3tables:PutTableData"
	tGetBucketMaintenance        = "s3tables:GetTableBucketMaintenanceConfiguration"
	tPutBucketMaintenance        = "s3tables:PutTableBucketMaintenanceConfiguration"
	tGetTableMaintenance         = "s3tables:GetTableMaintenanceConfiguration"
	tPutTableMaintenance         = "s3tables:PutTableMaintenanceConfiguration"
)

// icebergTablesActions are the S3 Tables actions of an Iceberg REST
// operation (its operationId); nil for the operator's routes.
// TestIcebergTablesActions fails when a route that checks read or write
// is missing here.
func icebergTablesActions(op string) []string {
	switch op {
	case "getConfig":
		return []string{tGetTableBucket}
	case "listNamespaces":
		return []string{tListNamespaces}
	case "createNamespace", "updateProperties":
		return []string{tCreateNamespace}
	case "loadNamespaceMetadata", "namespaceExists":
		return []string{tGetNamespace}
	case "dropNamespace":
		return []string{tDeleteNamespace}
	case "listTables", "listViews":
		return []string{tListTables}
	case "createTable":
		return []string{tCreateTable, tPutTableData}
	case "registerTable", "createView":
		return []string{tCreateTable}
	case "loadTable":
		return []string{tGetTableMetadataLocation, tGetTableData}
	case "tableExists", "loadView", "viewExists", "reportMetrics":
		return []string{tGetTable}
	case "updateTable", "commitTransaction", "runTableMaintenance":
		return []string{tUpdateTableMetadataLocation, tPutTableData}
	case "replaceView":
		return []string{tUpdateTableMetadataLocation}
	case "dropTable", "dropView":
		return []string{tDeleteTable}
	case "renameTable", "renameView":
		return []string{tRenameTable}
	case "loadCredentials", "signRequest":
		return []string{tGetTableData}
	case "getWarehouseMaintenance":
		return []string{tGetBucketMaintenance}
	case "setWarehouseMaintenance":
		return []string{tPutBucketMaintenance}
	case "getTableMaintenance":
		return []string{tGetTableMaintenance}
	case "setTableMaintenance":
		return []string{tPutTableMaintenance}
	}
	return nil
}

// coarseTablesActions are the S3 Tables actions of a check made inside
// an operation, of another action than its route's: read is reading a
// table's data, write writing it, admin (purging a dropped table's
// files) deleting the table and writing its data. Resource policies
// never grant migrate.
func coarseTablesActions(a Action) []string {
	switch a {
	case ActionRead:
		return []string{tGetTableData}
	case ActionWrite:
		return []string{tPutTableData}
	case ActionAdmin:
		return []string{tDeleteTable, tPutTableData}
	}
	return nil
}

// routeTable is the table an Iceberg REST request names: the {table} of
// its path, or the source of renameTable; nil for none, and for one it
// names wrongly (the handler then answers why).
func (s *Server) routeTable(req *request) *catalog.Ident {
	if req.param("table") != "" {
		id, err := s.ident(req, "table")
		if err != nil {
			return nil
		}
		return &id
	}
	if req.op != "renameTable" {
		return nil
	}
	from, _, err := decodeRename(req)
	if err != nil {
		return nil
	}
	return &from
}

// routeTable is the table an S3 Tables request names: by {namespace} and
// {name} in its path, or GetTable's query; nil for none. A GetTable by
// the table's ARN is looked up by it, when a ResourceAuthorizer is to
// decide for another user than root (the lookup's errors leave it nil:
// the handler answers them once authorized).
func (t *s3Tables) routeTable(req *request) *catalog.Ident {
	if req.param("name") != "" {
		id, err := pathTable(req)
		if err != nil {
			return nil
		}
		return &id
	}
	if req.op != "GetTable" {
		return nil
	}
	q, err := parseGetTableQuery(req.URL.Query())
	if err != nil {
		return nil
	}
	if q.tableID == "" {
		return &q.id
	}
	if _, ok := t.s.opt.Authorizer.(ResourceAuthorizer); !ok || req.principal.Root {
		return nil
	}
	l, err := t.find(req, q.tableID)
	if err != nil {
		return nil
	}
	return &l.id
}
