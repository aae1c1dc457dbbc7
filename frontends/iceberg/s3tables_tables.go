package iceberg

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

// The table operations. A table's ARN ends in its table-uuid, its
// versionToken is the catalog's ETag of its metadata location (it changes
// with every commit), its warehouseLocation is its location. DeleteTable
// forgets the table as the Iceberg REST dropTable does without
// purgeRequested: its files stay in the bucket.

// s3tTableInfo is what the answers read from a table's metadata.
type s3tTableInfo struct {
	UUID          string           `json:"table-uuid"`
	Location      string           `json:"location"`
	LastUpdatedMS int64            `json:"last-updated-ms"`
	MetadataLog   []s3tTimestamped `json:"metadata-log"`
	Snapshots     []s3tTimestamped `json:"snapshots"`
}

// s3tTimestamped is an entry of the metadata-log or of the snapshots.
type s3tTimestamped struct {
	TimestampMS int64 `json:"timestamp-ms"`
}

// s3tLoaded is a loaded table.
type s3tLoaded struct {
	wh   string
	id   catalog.Ident
	res  catalog.TableResult
	info s3tTableInfo
}

// tableID is the id of the table in its ARN.
func (l s3tLoaded) tableID() string {
	return s3tTableID(l.info.UUID, strings.Join(l.id.Namespace, UnitSeparator), l.id.Name)
}

// modified is when the table's metadata last changed.
func (l s3tLoaded) modified() time.Time {
	return time.UnixMilli(l.info.LastUpdatedMS).UTC()
}

// created is the earliest time the metadata records: of its first
// metadata file the metadata-log keeps, of its first snapshot, or its
// last update.
func (l s3tLoaded) created() time.Time {
	first := l.info.LastUpdatedMS
	for _, e := range append(append([]s3tTimestamped(nil), l.info.MetadataLog...), l.info.Snapshots...) {
		if e.TimestampMS > 0 && e.TimestampMS < first {
			first = e.TimestampMS
		}
	}
	return time.UnixMilli(first).UTC()
}

// load loads table id of the request's table bucket.
func (t *s3Tables) load(req *request, id catalog.Ident) (s3tLoaded, error) {
	res, err := t.s.opt.Catalog.LoadTable(req.Context(), req.warehouse, id, "")
	if err != nil {
		return s3tLoaded{}, missingParent(err, catalog.ErrNoSuchTable, id)
	}
	l := s3tLoaded{wh: req.warehouse, id: id, res: res}
	if err := json.Unmarshal(res.Metadata, &l.info); err != nil {
		return s3tLoaded{}, fmt.Errorf("table %s: reading its metadata: %w", id, err)
	}
	return l, nil
}

// pathTable is the table the path names: {namespace} and {name}.
func pathTable(req *request) (catalog.Ident, error) {
	ns, err := oneLevel("namespace", req.param("namespace"))
	if err != nil {
		return catalog.Ident{}, err
	}
	if err := checkName(req.param("name")); err != nil {
		return catalog.Ident{}, badRequest("table name %q: give a non-empty name without control characters", clipQuoted(req.param("name")))
	}
	return catalog.Ident{Namespace: ns, Name: req.param("name")}, nil
}

func (t *s3Tables) summary(l s3tLoaded) s3tTableSummary {
	return s3tTableSummary{Namespace: l.id.Namespace, Name: l.id.Name, Type: s3tCustomer,
		TableARN: t.tableARN(l.wh, l.tableID()), CreatedAt: l.created(), ModifiedAt: l.modified()}
}

func (t *s3Tables) createTable(req *request) (reply, error) {
	ns, err := oneLevel("namespace", req.param("namespace"))
	if err != nil {
		return reply{}, err
	}
	name, body, err := icebergCreateBody(req.body)
	if err != nil {
		return reply{}, err
	}
	res, err := t.s.opt.Catalog.CreateTable(req.Context(), req.warehouse, ns, body)
	if err != nil {
		return reply{}, err
	}
	var info s3tTableInfo
	if err := json.Unmarshal(res.Metadata, &info); err != nil {
		return reply{}, fmt.Errorf("table %s.%s: reading its metadata: %w", ns[0], name, err)
	}
	return reply{status: http.StatusOK, body: s3tCreateTableResponse{
		TableARN: t.tableARN(req.warehouse, s3tTableID(info.UUID, ns[0], name)), VersionToken: res.ETag}}, nil
}

func (t *s3Tables) getTable(req *request) (reply, error) {
	q, err := parseGetTableQuery(req.URL.Query())
	if err != nil {
		return reply{}, err
	}
	var l s3tLoaded
	if q.tableID != "" {
		l, err = t.find(req, q.tableID)
	} else {
		l, err = t.load(req, q.id)
	}
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: s3tTable{
		Name: l.id.Name, Type: s3tCustomer, TableARN: t.tableARN(l.wh, l.tableID()), Namespace: l.id.Namespace,
		VersionToken: l.res.ETag, MetadataLocation: l.res.MetadataLocation, WarehouseLocation: l.info.Location,
		CreatedAt: l.created(), CreatedBy: t.opt.AccountID, ModifiedAt: l.modified(), ModifiedBy: t.opt.AccountID,
		OwnerAccountID: t.opt.AccountID, Format: s3tIceberg,
	}}, nil
}

// s3tGetTableQuery is what GetTable's query names: a table by its ARN
// (tableID set) or by bucket, namespace and name (id set).
type s3tGetTableQuery struct {
	bucket  string
	tableID string
	id      catalog.Ident
}

// parseGetTableQuery reads GetTable's query: tableArn, or tableBucketARN,
// namespace and name.
func parseGetTableQuery(q url.Values) (s3tGetTableQuery, error) {
	arn, bucketARN, ns, name := q.Get("tableArn"), q.Get("tableBucketARN"), q.Get("namespace"), q.Get("name")
	if arn != "" {
		if bucketARN != "" || ns != "" || name != "" {
			return s3tGetTableQuery{}, badRequest("give either tableArn, or tableBucketARN, namespace and name, not both")
		}
		a, err := parseARN(arn)
		if err != nil {
			return s3tGetTableQuery{}, err
		}
		if a.table == "" {
			return s3tGetTableQuery{}, badRequest("tableArn %q is a table bucket's ARN: give the table's (the bucket's followed by /table/TABLE-ID), or tableBucketARN, namespace and name", clipQuoted(arn))
		}
		return s3tGetTableQuery{bucket: a.bucket, tableID: a.table}, nil
	}
	if bucketARN == "" || ns == "" || name == "" {
		return s3tGetTableQuery{}, badRequest("give tableArn, or tableBucketARN, namespace and name")
	}
	bucket, err := parseBucketARN(bucketARN)
	if err != nil {
		return s3tGetTableQuery{}, err
	}
	levels, err := oneLevel("namespace", ns)
	if err != nil {
		return s3tGetTableQuery{}, err
	}
	if err := checkName(name); err != nil {
		return s3tGetTableQuery{}, badRequest("table name %q: give a non-empty name without control characters", clipQuoted(name))
	}
	return s3tGetTableQuery{bucket: bucket, id: catalog.Ident{Namespace: levels, Name: name}}, nil
}

// find loads the table of the request's table bucket whose ARN ends in
// tableID. The catalog has no index by table-uuid: it loads the tables of
// the bucket's top-level namespaces until one matches.
func (t *s3Tables) find(req *request, tableID string) (s3tLoaded, error) {
	ids, err := t.tableIdents(req, "")
	if err != nil {
		return s3tLoaded{}, err
	}
	for _, id := range ids {
		l, err := t.load(req, id)
		if errors.Is(err, catalog.ErrNoSuchTable) {
			continue // dropped meanwhile
		}
		if err != nil {
			return s3tLoaded{}, err
		}
		if l.tableID() == tableID {
			return l, nil
		}
	}
	return s3tLoaded{}, fmt.Errorf("%w: no table of table bucket %s has the id %s", catalog.ErrNoSuchTable, req.warehouse, clipQuoted(tableID))
}

// tableIdents lists the tables of namespace ns of the request's table
// bucket, or of all its top-level namespaces when ns is "".
func (t *s3Tables) tableIdents(req *request, ns string) ([]catalog.Ident, error) {
	nss := []string{ns}
	if ns == "" {
		var err error
		if nss, err = t.topNamespaces(req); err != nil {
			return nil, err
		}
	}
	var out []catalog.Ident
	for _, n := range nss {
		ids, _, err := t.s.opt.Catalog.ListTables(req.Context(), req.warehouse, []string{n}, "", 0)
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	return out, nil
}

func (t *s3Tables) listTables(req *request) (reply, error) {
	q := req.URL.Query()
	p, err := parsePaging(q, "maxTables")
	if err != nil {
		return reply{}, err
	}
	ns := q.Get("namespace")
	if ns != "" {
		if _, err := oneLevel("namespace", ns); err != nil {
			return reply{}, err
		}
	}
	ids, err := t.tableIdents(req, ns)
	if err != nil {
		return reply{}, err
	}
	// A key is namespace, unit separator, name: it sorts by namespace,
	// then name, and no name holds the separator.
	keys := make([]string, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, id.Namespace[0]+UnitSeparator+id.Name)
	}
	keys, next := p.page(keys, func(k string) string {
		_, name, _ := strings.Cut(k, UnitSeparator)
		return name
	})
	out := s3tListTablesResponse{Tables: []s3tTableSummary{}, ContinuationToken: next}
	for _, k := range keys {
		n, name, _ := strings.Cut(k, UnitSeparator)
		l, err := t.load(req, catalog.Ident{Namespace: []string{n}, Name: name})
		if errors.Is(err, catalog.ErrNoSuchTable) {
			continue // dropped meanwhile
		}
		if err != nil {
			return reply{}, err
		}
		out.Tables = append(out.Tables, t.summary(l))
	}
	return reply{status: http.StatusOK, body: out}, nil
}
