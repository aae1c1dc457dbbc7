package integration

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers s3:// for the FileIO
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The Iceberg client test drives Cairn with apache/iceberg-go's REST
// catalog and its S3 FileIO, the way a Go data application would: the
// catalog on /iceberg, Parquet data, Avro manifests and manifest lists
// through the S3 face of the same port.

const (
	icebergWarehouse = "lakehouse"
	// icebergCallTimeout bounds every single catalog or FileIO call.
	icebergCallTimeout = 20 * time.Second
)

// icebergCtx returns a context bounded by icebergCallTimeout.
func icebergCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), icebergCallTimeout)
	t.Cleanup(cancel)
	return ctx
}

// icebergFileIOProps are the S3 FileIO settings for data and metadata files.
func icebergFileIOProps(s *server) iceberg.Properties {
	return iceberg.Properties{
		iceio.S3EndpointURL:     s.url(""),
		iceio.S3Region:          s3Region,
		iceio.S3AccessKeyID:     s3User,
		iceio.S3SecretAccessKey: s3Secret,
	}
}

// openOAuthCatalog opens the REST catalog with OAuth2 client credentials.
func openOAuthCatalog(t *testing.T, s *server) *rest.Catalog {
	t.Helper()
	cat, err := rest.NewCatalog(icebergCtx(t), "cairn", s.url("/iceberg"),
		rest.WithWarehouseLocation(icebergWarehouse),
		rest.WithCredential(s3User+":"+s3Secret),
		rest.WithAdditionalProps(icebergFileIOProps(s)))
	if err != nil {
		t.Fatalf("rest.NewCatalog (OAuth2 credential): %v", err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat
}

// openSigV4Catalog opens the REST catalog signing every request with SigV4
// (signing name s3).
func openSigV4Catalog(t *testing.T, s *server) *rest.Catalog {
	t.Helper()
	cfg := aws.Config{
		Region: s3Region,
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: s3User, SecretAccessKey: s3Secret, Source: "test"}, nil
		})),
	}
	cat, err := rest.NewCatalog(icebergCtx(t), "cairn", s.url("/iceberg"),
		rest.WithWarehouseLocation(icebergWarehouse),
		rest.WithAwsConfig(cfg),
		rest.WithSigV4RegionSvc(s3Region, "s3"),
		rest.WithAdditionalProps(icebergFileIOProps(s)))
	if err != nil {
		t.Fatalf("rest.NewCatalog (SigV4): %v", err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat
}

// tableKeys lists the object keys under a table location through the S3
// face (current objects, and every version or delete marker).
func tableKeys(t *testing.T, s *server, location string) (current, versions []string) {
	t.Helper()
	u, err := url.Parse(location)
	if err != nil || u.Scheme != "s3" {
		t.Fatalf("table location %q is not an s3:// URL (%v)", location, err)
	}
	bucket, prefix := u.Host, strings.TrimPrefix(u.Path, "/")+"/"
	if bucket != icebergWarehouse {
		t.Fatalf("table location %q is not in warehouse bucket %q", location, icebergWarehouse)
	}
	c := sdkClient(s, s3User, s3Secret)
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(icebergCtx(t))
		if err != nil {
			t.Fatalf("ListObjectsV2 s3://%s/%s: %v", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			current = append(current, aws.ToString(o.Key))
		}
	}
	vs, err := c.ListObjectVersions(icebergCtx(t), &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatalf("ListObjectVersions s3://%s/%s: %v", bucket, prefix, err)
	}
	for _, v := range vs.Versions {
		versions = append(versions, aws.ToString(v.Key)+"@"+aws.ToString(v.VersionId))
	}
	for _, m := range vs.DeleteMarkers {
		versions = append(versions, aws.ToString(m.Key)+"@"+aws.ToString(m.VersionId)+"(delete marker)")
	}
	return current, versions
}

// countSuffix counts keys ending in suffix.
func countSuffix(keys []string, suffix string) int {
	n := 0
	for _, k := range keys {
		if strings.HasSuffix(k, suffix) {
			n++
		}
	}
	return n
}

// purgeAndCheck drops tbl with purge and checks that no object is left
// under its location.
func purgeAndCheck(t *testing.T, s *server, cat *rest.Catalog, tbl *table.Table) {
	t.Helper()
	loc := tbl.Location()
	before, _ := tableKeys(t, s, loc)
	if countSuffix(before, ".parquet") == 0 || countSuffix(before, ".avro") == 0 || countSuffix(before, ".metadata.json") == 0 {
		t.Fatalf("before the purge, %s holds no Parquet, Avro or metadata files: %v", loc, before)
	}
	if err := cat.PurgeTable(icebergCtx(t), tbl.Identifier()); err != nil {
		t.Fatalf("PurgeTable %v: %v", tbl.Identifier(), err)
	}
	exists, err := cat.CheckTableExists(icebergCtx(t), tbl.Identifier())
	if err != nil || exists {
		t.Fatalf("CheckTableExists after the purge: %v, %v; want false, nil", exists, err)
	}
	if _, err := cat.LoadTable(icebergCtx(t), tbl.Identifier()); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("LoadTable after the purge: %v, want ErrNoSuchTable", err)
	}
	after, versions := tableKeys(t, s, loc)
	if len(after) != 0 {
		t.Fatalf("after the purge %d objects remain under %s (of %d before): %v", len(after), loc, len(before), after)
	}
	if len(versions) != 0 {
		t.Fatalf("after the purge %d object versions remain under %s: %v", len(versions), loc, versions)
	}
	t.Logf("purge removed %d objects under %s", len(before), loc)
}

func TestIcebergClient(t *testing.T) {
	s := startS3Server(t)
	if r := runCairn(t, 30*time.Second, "admin", "table-bucket", "create", icebergWarehouse, "--endpoint", s.url("")); r.code != 0 {
		t.Fatalf("cairn admin table-bucket create: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	t.Run("OAuth2", func(t *testing.T) {
		cat := openOAuthCatalog(t, s)
		ns := catalog.ToIdentifier("analytics")
		if err := cat.CreateNamespace(icebergCtx(t), ns, iceberg.Properties{"owner": "integration"}); err != nil {
			t.Fatalf("CreateNamespace: %v", err)
		}
		props, err := cat.LoadNamespaceProperties(icebergCtx(t), ns)
		if err != nil || props["owner"] != "integration" {
			t.Fatalf("LoadNamespaceProperties: %v, %v; want owner=integration", props, err)
		}
		ident := catalog.ToIdentifier("analytics", "events")
		tbl, err := cat.CreateTable(icebergCtx(t), ident, eventSchema)
		if err != nil {
			t.Fatalf("CreateTable: %v", err)
		}
		if want := "s3://" + icebergWarehouse + "/"; !strings.HasPrefix(tbl.Location(), want) {
			t.Fatalf("table location %q, want it under %s", tbl.Location(), want)
		}
		if tbl.CurrentSnapshot() != nil {
			t.Fatalf("a new table has snapshot %d", tbl.CurrentSnapshot().SnapshotID)
		}

		// Append, reload, scan.
		first := makeRows(1, 500, "first")
		if _, err := tbl.AppendTable(icebergCtx(t), arrowTable(t, tbl.Schema(), first, 128), 128, nil); err != nil {
			t.Fatalf("AppendTable (first): %v", err)
		}
		tbl, err = cat.LoadTable(icebergCtx(t), ident)
		if err != nil {
			t.Fatalf("LoadTable: %v", err)
		}
		if n := len(tbl.Metadata().Snapshots()); n != 1 || tbl.CurrentSnapshot() == nil {
			t.Fatalf("after one append: %d snapshots (current %v), want 1", n, tbl.CurrentSnapshot())
		}
		wantRows(t, "scan after the first append", scanRows(t, tbl), first)

		// A second append through a transaction.
		second := makeRows(501, 300, "second")
		txn := tbl.NewTransaction()
		if err := txn.AppendTable(icebergCtx(t), arrowTable(t, tbl.Schema(), second, 100), 100, nil); err != nil {
			t.Fatalf("Transaction.AppendTable (second): %v", err)
		}
		if _, err := txn.Commit(icebergCtx(t)); err != nil {
			t.Fatalf("Transaction.Commit (second append): %v", err)
		}
		tbl, err = cat.LoadTable(icebergCtx(t), ident)
		if err != nil {
			t.Fatalf("LoadTable: %v", err)
		}
		if n := len(tbl.Metadata().Snapshots()); n != 2 {
			t.Fatalf("after two appends: %d snapshots, want 2", n)
		}
		if got := tbl.CurrentSnapshot().Summary.Properties["total-records"]; got != "800" {
			t.Fatalf("snapshot summary total-records = %q, want 800", got)
		}
		wantRows(t, "scan after the second append", scanRows(t, tbl), sortedRows(first, second))

		// Schema evolution: add an optional column.
		oldSchema := tbl.Schema()
		txn = tbl.NewTransaction()
		if err := txn.UpdateSchema(true, false).AddColumn([]string{"score"}, iceberg.PrimitiveTypes.Float64, "a score", false, nil).Commit(); err != nil {
			t.Fatalf("UpdateSchema.AddColumn: %v", err)
		}
		if _, err := txn.Commit(icebergCtx(t)); err != nil {
			t.Fatalf("Transaction.Commit (add column): %v", err)
		}
		tbl, err = cat.LoadTable(icebergCtx(t), ident)
		if err != nil {
			t.Fatalf("LoadTable: %v", err)
		}
		sc := tbl.Schema()
		f, ok := sc.FindFieldByName("score")
		if sc.ID != oldSchema.ID+1 || !ok || f.ID != 4 || !f.Type.Equals(iceberg.PrimitiveTypes.Float64) || f.Required {
			t.Fatalf("evolved schema: id %d (was %d), score field %+v (found %v); want id %d, score = optional double with id 4\n%s",
				sc.ID, oldSchema.ID, f, ok, oldSchema.ID+1, sc)
		}
		if n := len(sc.Fields()); n != 4 || tbl.Metadata().LastColumnID() != 4 || len(tbl.Schemas()) != 2 {
			t.Fatalf("evolved schema: %d fields, last-column-id %d, %d schemas; want 4, 4, 2",
				n, tbl.Metadata().LastColumnID(), len(tbl.Schemas()))
		}
		// Rows with the new column; the old rows read it as null.
		third := makeRows(801, 50, "third")
		for i := range third {
			v := float64(third[i].id) / 2
			third[i].score = &v
		}
		tbl, err = tbl.AppendTable(icebergCtx(t), arrowTable(t, sc, third, 50), 50, nil)
		if err != nil {
			t.Fatalf("AppendTable (evolved schema): %v", err)
		}
		base := sortedRows(first, second, third)
		wantRows(t, "scan after the schema change", scanRows(t, tbl), base)

		// Two clients commit on the same base: one wins, one gets 409.
		catB := openOAuthCatalog(t, s)
		ta, err := cat.LoadTable(icebergCtx(t), ident)
		if err != nil {
			t.Fatalf("LoadTable (client A): %v", err)
		}
		tb, err := catB.LoadTable(icebergCtx(t), ident)
		if err != nil {
			t.Fatalf("LoadTable (client B): %v", err)
		}
		if ta.MetadataLocation() != tb.MetadataLocation() {
			t.Fatalf("the clients loaded different metadata: %s and %s", ta.MetadataLocation(), tb.MetadataLocation())
		}
		baseLoc := ta.MetadataLocation()
		rowsA, rowsB := makeRows(1001, 20, "client-a"), makeRows(2001, 30, "client-b")
		txns := []*table.Transaction{ta.NewTransaction(), tb.NewTransaction()}
		for i, rows := range [][]eventRow{rowsA, rowsB} {
			if err := txns[i].AppendTable(icebergCtx(t), arrowTable(t, sc, rows, 64), 64, nil); err != nil {
				t.Fatalf("client %c: Transaction.AppendTable: %v", 'A'+i, err)
			}
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range txns {
			wg.Go(func() {
				<-start
				_, errs[i] = txns[i].Commit(icebergCtx(t))
			})
		}
		close(start)
		wg.Wait()
		winner, loser := -1, -1
		for i, err := range errs {
			switch {
			case err == nil:
				winner = i
			case errors.Is(err, rest.ErrCommitFailed) && errors.Is(err, table.ErrCommitFailed):
				loser = i
			default:
				t.Fatalf("client %c: concurrent commit: %v; want success or CommitFailed (409)", 'A'+i, err)
			}
		}
		if winner < 0 || loser < 0 {
			t.Fatalf("concurrent commits: errors %v; want exactly one success and one CommitFailed (409)", errs)
		}
		if !strings.Contains(errs[loser].Error(), "CommitFailedException") {
			t.Errorf("the losing commit's error %q does not name CommitFailedException", errs[loser])
		}
		t.Logf("concurrent commits: client %c won, client %c got %v", 'A'+winner, 'A'+loser, errs[loser])
		// The loser refreshes and re-applies its change.
		loserTbl, loserRows := []*table.Table{ta, tb}[loser], [][]eventRow{rowsA, rowsB}[loser]
		if err := loserTbl.Refresh(icebergCtx(t)); err != nil {
			t.Fatalf("client %c: Refresh: %v", 'A'+loser, err)
		}
		if loserTbl.MetadataLocation() == baseLoc {
			t.Fatalf("client %c: Refresh kept the old metadata", 'A'+loser)
		}
		retry := loserTbl.NewTransaction()
		if err := retry.AppendTable(icebergCtx(t), arrowTable(t, sc, loserRows, 64), 64, nil); err != nil {
			t.Fatalf("client %c: retry AppendTable: %v", 'A'+loser, err)
		}
		if _, err := retry.Commit(icebergCtx(t)); err != nil {
			t.Fatalf("client %c: retried commit: %v", 'A'+loser, err)
		}
		// A commit that arrives after the table moved on (not racing) fails
		// the requirement check itself: the winner's table value still holds
		// the old base.
		stale := []*table.Table{ta, tb}[winner]
		if stale.MetadataLocation() != baseLoc {
			t.Fatalf("the winner's table value moved to %s", stale.MetadataLocation())
		}
		staleTxn := stale.NewTransaction()
		if err := staleTxn.AppendTable(icebergCtx(t), arrowTable(t, sc, makeRows(3001, 5, "stale"), 64), 64, nil); err != nil {
			t.Fatalf("stale AppendTable: %v", err)
		}
		if _, err := staleTxn.Commit(icebergCtx(t)); !errors.Is(err, rest.ErrCommitFailed) {
			t.Fatalf("commit on a stale base: %v, want CommitFailed (409)", err)
		} else {
			t.Logf("commit on a stale base: %v", err)
		}
		tbl, err = catB.LoadTable(icebergCtx(t), ident)
		if err != nil {
			t.Fatalf("LoadTable: %v", err)
		}
		if n := len(tbl.Metadata().Snapshots()); n != 5 {
			t.Fatalf("after 3 appends, 1 schema change, 2 concurrent appends, 1 stale append: %d snapshots, want 5 (the failed attempts must not add one)", n)
		}
		if got := tbl.CurrentSnapshot().Summary.Properties["total-records"]; got != "900" {
			t.Fatalf("snapshot summary total-records = %q, want 900", got)
		}
		wantRows(t, "scan after the concurrent commits", scanRows(t, tbl), sortedRows(base, rowsA, rowsB))

		purgeAndCheck(t, s, cat, tbl)
		if err := cat.DropNamespace(icebergCtx(t), ns); err != nil {
			t.Fatalf("DropNamespace after the purge: %v", err)
		}
	})

	t.Run("Unauthenticated", func(t *testing.T) {
		// No credentials at all: the catalog answers 401.
		cat, err := rest.NewCatalog(icebergCtx(t), "anon", s.url("/iceberg"),
			rest.WithWarehouseLocation(icebergWarehouse))
		if err == nil {
			t.Cleanup(func() { _ = cat.Close() })
			_, err = cat.ListNamespaces(icebergCtx(t), nil)
		}
		if !errors.Is(err, rest.ErrUnauthorized) {
			t.Fatalf("catalog without credentials: %v, want ErrUnauthorized (401)", err)
		}
		// A wrong secret gets no token.
		cat, err = rest.NewCatalog(icebergCtx(t), "wrong", s.url("/iceberg"),
			rest.WithWarehouseLocation(icebergWarehouse),
			rest.WithCredential(s3User+":not-the-secret"))
		if err == nil {
			t.Cleanup(func() { _ = cat.Close() })
			_, err = cat.ListNamespaces(icebergCtx(t), nil)
		}
		if err == nil || !strings.Contains(err.Error(), "invalid_client") {
			t.Fatalf("catalog with a wrong OAuth2 secret: %v, want an invalid_client error", err)
		}
	})

	t.Run("SigV4", func(t *testing.T) {
		cat := openSigV4Catalog(t, s)
		ns := catalog.ToIdentifier("signed")
		if err := cat.CreateNamespace(icebergCtx(t), ns, nil); err != nil {
			t.Fatalf("CreateNamespace: %v", err)
		}
		ident := catalog.ToIdentifier("signed", "events")
		tbl, err := cat.CreateTable(icebergCtx(t), ident, eventSchema,
			catalog.WithProperties(iceberg.Properties{"written-by": "sigv4"}))
		if err != nil {
			t.Fatalf("CreateTable: %v", err)
		}
		rows := makeRows(1, 200, "signed")
		if _, err := tbl.AppendTable(icebergCtx(t), arrowTable(t, tbl.Schema(), rows, 100), 100, nil); err != nil {
			t.Fatalf("AppendTable: %v", err)
		}
		tbl, err = cat.LoadTable(icebergCtx(t), ident)
		if err != nil {
			t.Fatalf("LoadTable: %v", err)
		}
		if tbl.Properties()["written-by"] != "sigv4" || len(tbl.Metadata().Snapshots()) != 1 {
			t.Fatalf("loaded table: properties %v, %d snapshots; want written-by=sigv4 and 1 snapshot",
				tbl.Properties(), len(tbl.Metadata().Snapshots()))
		}
		wantRows(t, "scan", scanRows(t, tbl), rows)
		purgeAndCheck(t, s, cat, tbl)
		if err := cat.DropNamespace(icebergCtx(t), ns); err != nil {
			t.Fatalf("DropNamespace: %v", err)
		}
	})
}
