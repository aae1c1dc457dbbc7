package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/cairnstore/cairn/catalog"
)

// catalogLong is the top of "cairn admin catalog --help".
const catalogLong = `Operate the Iceberg catalog of a running server.

These commands call the server's Iceberg REST face at
<endpoint>/iceberg/v1/<warehouse>/catalog/... (maintenance:
.../namespaces/<ns>/tables/<table>/maintenance; with --alias:
/_iceberg/v1/..., SigV4 signing name s3tables instead of s3), signed for
region us-east-1 as the root user (CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD),
or as the user given by --access-key/--secret-key or CAIRN_ACCESS_KEY /
CAIRN_SECRET_KEY. The endpoint is --endpoint, else $CAIRN_ENDPOINT, else
http://127.0.0.1:9000.

--json prints the server's JSON answer (indented). A server error prints
its Iceberg error (code, type, message) and exits 2.

rehearsal prints a disaster-recovery or scale/fault rehearsal plan as JSON;
it changes nothing and makes no network calls.`

// Verbs of "cairn admin catalog" that call the server.
const (
	catalogVerbPreflight   = "migration preflight"
	catalogVerbMaterialize = "migration materialize"
	catalogVerbCancel      = "migration cancel"
	catalogVerbRecover     = "recover"
	catalogVerbBackup      = "backup"
	catalogVerbRestore     = "restore"
	catalogVerbStatus      = "status"
	catalogVerbRehearsal   = "rehearsal"
	catalogVerbMaintRun    = "maintenance run"
	catalogVerbMaintStatus = "maintenance status"
)

// catalogOptions are the flags of "cairn admin catalog ...".
type catalogOptions struct {
	Verb      string // one of the catalog* verbs
	Warehouse string
	Table     catalog.Ident // maintenance verbs

	Endpoint  string
	JSON      bool
	Alias     bool // /_iceberg/v1 and signing name s3tables
	AccessKey string
	SecretKey string
	Timeout   time.Duration

	DryRun         bool   // recover
	BackupID       string // restore
	ExpectedETag   string // restore; "" means the warehouse has no snapshot
	AllowReplace   bool   // restore
	AllowDowngrade bool   // restore: a backup of an older snapshot format

	Rehearsal rehearsalOptions // rehearsal
}

func catalogCommand(done func(invocation)) *cobra.Command {
	g := groupCommand("catalog", "Operate the Iceberg catalog of a running server (migration, recovery, backups, maintenance)", catalogLong)
	mig := groupCommand("migration", "Move a warehouse from the object-backed catalog to durable-strong", "")
	for _, v := range []struct{ verb, short, example string }{
		{catalogVerbPreflight, "Dry run of the cutover to durable-strong (GET .../catalog/migration)", "  cairn admin catalog migration preflight lakehouse --json"},
		{catalogVerbMaterialize, "Fence object-backed writes and copy the catalog (POST .../catalog/migration)", "  cairn admin catalog migration materialize lakehouse"},
		{catalogVerbCancel, "Release the fence, drop a target that is new (DELETE .../catalog/migration)", "  cairn admin catalog migration cancel lakehouse"},
	} {
		mig.AddCommand(catalogVerbCommand(v.verb, v.short, v.example, done))
	}
	maint := groupCommand("maintenance", "Run a table's maintenance, or show its settings and last outcomes", "")
	maint.AddCommand(
		catalogVerbCommand(catalogVerbMaintRun, "Run the table's enabled maintenance jobs now (POST .../tables/TABLE/maintenance/run)",
			"  cairn admin catalog maintenance run lakehouse sales.orders", done),
		catalogVerbCommand(catalogVerbMaintStatus, "The table's maintenance settings and each job's last run (GET .../tables/TABLE/maintenance)",
			"  cairn admin catalog maintenance status lakehouse sales.orders --json", done),
	)
	g.AddCommand(mig, maint,
		catalogVerbCommand(catalogVerbRecover, "Repair staged commits (POST .../catalog/recovery; --dry-run: GET, changes nothing)",
			"  cairn admin catalog recover lakehouse --dry-run\n  cairn admin catalog recover lakehouse", done),
		catalogVerbCommand(catalogVerbBackup, "Back up the durable-strong snapshot (POST .../catalog/backup)",
			"  cairn admin catalog backup lakehouse --json", done),
		catalogVerbCommand(catalogVerbRestore, "Restore a backup over the snapshot whose ETag is ETAG (POST .../catalog/restore)",
			"  cairn admin catalog restore lakehouse --backup-id 20260101T000000Z-1 --expected-etag '\"abc\"'\n  cairn admin catalog restore lakehouse --backup-id ID --expected-etag '' --allow-replace", done),
		catalogVerbCommand(catalogVerbStatus, "The warehouse's backing, snapshot, fence and counts (GET .../catalog/status)",
			"  cairn admin catalog status lakehouse\n  CAIRN_ENDPOINT=127.0.0.1:9100 cairn admin catalog status lakehouse --json", done),
		rehearsalCommand(done),
		rotateTokenKeyCommand(done),
	)
	return g
}

// catalogVerbCommand is one command of "cairn admin catalog" that calls
// the server.
func catalogVerbCommand(verb, short, example string, done func(invocation)) *cobra.Command {
	o := catalogOptions{Verb: verb}
	var ep endpointFlag
	use := verb[strings.LastIndex(verb, " ")+1:] + " WAREHOUSE"
	maintenance := strings.HasPrefix(verb, "maintenance ")
	if maintenance {
		use += " NAMESPACE.TABLE"
	}
	c := leafCommand(use, short, example, func(c *cobra.Command, args []string) error {
		name := commandName(c)
		var err error
		if maintenance {
			if len(args) != 2 {
				return usageErrorf(name, "want the warehouse (table bucket) name and the table as NAMESPACE.TABLE (%s)", strings.TrimSuffix(c.UseLine(), " [flags]"))
			}
			o.Warehouse = args[0]
			if o.Table, err = parseTableArg(args[1]); err != nil {
				return usageErrorf(name, "%v", err)
			}
		} else if o.Warehouse, err = oneArg(c, args, "warehouse (table bucket) name"); err != nil {
			return err
		}
		if o.Endpoint, err = ep.resolve(name); err != nil {
			return err
		}
		if o.Timeout <= 0 {
			return usageErrorf(name, "--timeout must be positive, got %v", o.Timeout)
		}
		if (o.AccessKey == "") != (o.SecretKey == "") {
			return usageErrorf(name, "give --access-key and --secret-key together")
		}
		if err := checkRootEnv(name); err != nil {
			return err
		}
		if verb == catalogVerbRestore {
			if o.BackupID == "" {
				return usageErrorf(name, "--backup-id is required")
			}
			if !c.Flags().Changed("expected-etag") {
				return usageErrorf(name, "--expected-etag is required (--expected-etag \"\" when the warehouse has no snapshot)")
			}
		}
		done(invocation{name: name, opts: o, logLevel: zerolog.InfoLevel})
		return nil
	})
	fs := c.Flags()
	ep.register(fs, "the server's")
	fs.BoolVar(&o.JSON, "json", false, "print the server's JSON answer instead of text")
	fs.BoolVar(&o.Alias, "alias", false, "use the /_iceberg/v1 alias and the SigV4 signing name s3tables")
	fs.StringVar(&o.AccessKey, "access-key", "", "sign as this user instead of the root user (default $CAIRN_ACCESS_KEY)")
	fs.StringVar(&o.SecretKey, "secret-key", "", "secret key of --access-key (default $CAIRN_SECRET_KEY; the environment keeps it out of ps)")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "give up on the server after this long")
	switch verb {
	case catalogVerbRecover:
		fs.BoolVar(&o.DryRun, "dry-run", false, "report what recovery would do and change nothing (GET instead of POST)")
	case catalogVerbRestore:
		fs.StringVar(&o.BackupID, "backup-id", "", "the backup to restore, as 'cairn admin catalog backup' printed it (required)")
		fs.StringVar(&o.ExpectedETag, "expected-etag", "", "the `ETAG` of the warehouse's current snapshot, as 'status' prints it; \"\" when it has none (required)")
		fs.BoolVar(&o.AllowReplace, "allow-replace", false, "allow replacing an existing snapshot")
		fs.BoolVar(&o.AllowDowngrade, "allow-format-downgrade", false, "allow restoring a backup of an older snapshot format (roll the v2 format back; unset the v2 gates first)")
	}
	return c
}

// runCatalog runs one "cairn admin catalog" command.
func runCatalog(ctx context.Context, o catalogOptions, d deps) error {
	if o.Verb == catalogVerbRehearsal {
		return runRehearsal(o.Rehearsal, d.stdout)
	}
	var (
		method, sub string
		body        []byte
		dst         any
		show        func(io.Writer) error
	)
	switch o.Verb {
	case catalogVerbPreflight, catalogVerbMaterialize, catalogVerbCancel:
		sub = "catalog/migration"
		switch o.Verb {
		case catalogVerbPreflight:
			var p catalog.Preflight
			method, dst, show = http.MethodGet, &p, func(w io.Writer) error { return writePreflight(w, p) }
		case catalogVerbMaterialize:
			var m catalog.MaterializeResult
			method, dst, show = http.MethodPost, &m, func(w io.Writer) error { return writeMaterialize(w, m) }
		default:
			var c catalog.CancelResult
			method, dst, show = http.MethodDelete, &c, func(w io.Writer) error { return writeCancel(w, c) }
		}
	case catalogVerbRecover:
		var r catalog.RecoveryReport
		method, sub, dst, show = http.MethodPost, "catalog/recovery", &r, func(w io.Writer) error { return writeRecovery(w, r) }
		if o.DryRun {
			method = http.MethodGet
		}
	case catalogVerbBackup:
		var b catalog.BackupResult
		method, sub, dst, show = http.MethodPost, "catalog/backup", &b, func(w io.Writer) error { return writeBackup(w, o.Warehouse, b) }
	case catalogVerbRestore:
		var r catalog.RestoreResult
		method, sub, dst, show = http.MethodPost, "catalog/restore", &r, func(w io.Writer) error { return writeRestore(w, r) }
		var err error
		body, err = json.Marshal(catalog.RestoreRequest{BackupID: o.BackupID, ExpectedSnapshotETag: o.ExpectedETag, AllowReplace: o.AllowReplace, AllowFormatDowngrade: o.AllowDowngrade})
		if err != nil {
			return err
		}
	case catalogVerbStatus:
		var s catalog.Status
		method, sub, dst, show = http.MethodGet, "catalog/status", &s, func(w io.Writer) error { return writeStatus(w, s) }
	case catalogVerbMaintRun, catalogVerbMaintStatus:
		var m catalog.Maintenance
		method, sub, dst, show = http.MethodGet, tablePath(o.Table)+"/maintenance", &m, func(w io.Writer) error { return writeMaintenance(w, m) }
		if o.Verb == catalogVerbMaintRun {
			method, sub = http.MethodPost, sub+"/run"
		}
	default:
		return fmt.Errorf("internal error: unknown catalog verb %q", o.Verb)
	}

	raw, err := catalogCall(ctx, o, method, sub, body)
	if err != nil {
		return err
	}
	if o.JSON {
		var b bytes.Buffer
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			return fmt.Errorf("server answer is not JSON: %w", err)
		}
		b.WriteByte('\n')
		_, err := d.stdout.Write(b.Bytes())
		return err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("server answer: %w", err)
	}
	return show(d.stdout)
}

// catalogServerError is an error answer of the Iceberg face.
type catalogServerError struct {
	Status  int    // HTTP status
	Code    int    // the error JSON's code (the status when absent)
	Type    string // e.g. CommitFailedException; "" when the body was not Iceberg error JSON
	Message string
}

func (e *catalogServerError) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("server answered %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
	}
	return fmt.Sprintf("%d %s: %s", e.Code, e.Type, e.Message)
}

// maxCatalogAnswer bounds the answers read (a preflight lists every
// identifier conflict).
const maxCatalogAnswer = 64 << 20

// catalogCall sends one SigV4-signed request to
// <endpoint>/iceberg/v1/<warehouse>/<sub> and returns the body of a 2xx
// answer. Other answers become *catalogServerError.
func catalogCall(ctx context.Context, o catalogOptions, method, sub string, body []byte) ([]byte, error) {
	base, service := "/iceberg", "s3"
	if o.Alias {
		base, service = "/_iceberg", "s3tables"
	}
	u := strings.TrimSuffix(o.Endpoint, "/") + base + "/v1/" + url.PathEscape(o.Warehouse) + "/" + sub
	accessKey, secret := catalogCredentials(o)

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var rd io.Reader = http.NoBody
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	sum := sha256.Sum256(body)
	status, raw, err := sendSigned(req, accessKey, secret, service, hex.EncodeToString(sum[:]), maxCatalogAnswer)
	if err != nil {
		return nil, fmt.Errorf("catalog API: %w", err)
	}
	if len(raw) > maxCatalogAnswer {
		return nil, fmt.Errorf("catalog API: answer larger than %d bytes", maxCatalogAnswer)
	}
	if status < 200 || status >= 300 {
		return nil, catalogError(status, raw)
	}
	return raw, nil
}

// catalogError decodes an error answer: Iceberg error JSON
// {"error":{"message","type","code"}}, else the start of the body.
func catalogError(status int, raw []byte) error {
	var ie struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &ie) == nil && (ie.Error.Type != "" || ie.Error.Message != "") {
		e := &catalogServerError{Status: status, Code: ie.Error.Code, Type: ie.Error.Type, Message: ie.Error.Message}
		if e.Code == 0 {
			e.Code = status
		}
		if e.Type == "" {
			e.Type = "UnknownException"
		}
		return e
	}
	msg := strings.TrimSpace(string(raw))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	if msg == "" {
		msg = "(no body)"
	}
	return &catalogServerError{Status: status, Code: status, Message: msg}
}

// catalogCredentials picks who signs: --access-key/--secret-key, then
// CAIRN_ACCESS_KEY/CAIRN_SECRET_KEY, then the root user as "admin user"
// does.
func catalogCredentials(o catalogOptions) (accessKey, secret string) {
	if o.AccessKey != "" {
		return o.AccessKey, o.SecretKey
	}
	if ak, sk := os.Getenv("CAIRN_ACCESS_KEY"), os.Getenv("CAIRN_SECRET_KEY"); ak != "" && sk != "" {
		return ak, sk
	}
	return envRootCredentials()
}

// parseTableArg reads NAMESPACE.TABLE (nested namespaces as A.B.TABLE).
func parseTableArg(s string) (catalog.Ident, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || slices.Contains(parts, "") {
		return catalog.Ident{}, fmt.Errorf("table %q: write it as NAMESPACE.TABLE", s)
	}
	return catalog.Ident{Namespace: parts[:len(parts)-1], Name: parts[len(parts)-1]}, nil
}

// tablePath is a table's path under /v1/<warehouse>/: its namespace
// levels joined by the spec's separator (0x1F, escaped).
func tablePath(id catalog.Ident) string {
	levels := make([]string, len(id.Namespace))
	for i, l := range id.Namespace {
		levels[i] = url.PathEscape(l)
	}
	return "namespaces/" + strings.Join(levels, "%1F") + "/tables/" + url.PathEscape(id.Name)
}
