package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/catalog"
)

// catalogUsage is the help of "cairn admin catalog".
const catalogUsage = `Usage:
  cairn admin catalog migration preflight WAREHOUSE [CLIENT FLAGS]
  cairn admin catalog migration materialize WAREHOUSE [CLIENT FLAGS]
  cairn admin catalog migration cancel WAREHOUSE [CLIENT FLAGS]
  cairn admin catalog recover WAREHOUSE [--dry-run] [CLIENT FLAGS]
  cairn admin catalog backup WAREHOUSE [CLIENT FLAGS]
  cairn admin catalog restore WAREHOUSE --backup-id ID --expected-etag ETAG [--allow-replace] [--allow-format-downgrade] [CLIENT FLAGS]
  cairn admin catalog status WAREHOUSE [CLIENT FLAGS]
  cairn admin catalog rehearsal (--print-disaster-recovery-rehearsal | --print-scale-fault-rehearsal)
              [--warehouse W] [--namespace N] [--table T] [--rest-path /iceberg]
              [--table-warehouse-location URI] [--writer-count 8]
              [--maintenance-worker-count 2] [--iteration-count 50]
              [--catalog-backing object-backed-or-durable-strong]

CLIENT FLAGS: [--endpoint URL] [--json] [--alias] [--access-key K --secret-key S] [--timeout 5m]

These commands call a running server's Iceberg REST face at
<endpoint>/iceberg/v1/<warehouse>/catalog/... (with --alias:
/_iceberg/v1/..., SigV4 signing name s3tables instead of s3), signed for
region us-east-1 as the root user (CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD),
or as the user given by --access-key/--secret-key or CAIRN_ACCESS_KEY /
CAIRN_SECRET_KEY.

  migration preflight    GET    .../catalog/migration  dry run of the cutover to durable-strong
  migration materialize  POST   .../catalog/migration  fence object-backed writes and copy the catalog
  migration cancel       DELETE .../catalog/migration  release the fence, drop a target that is new
  recover                POST   .../catalog/recovery   repair staged commits (--dry-run: GET, changes nothing)
  backup                 POST   .../catalog/backup     back up the durable-strong snapshot
  restore                POST   .../catalog/restore    restore a backup over the snapshot whose ETag is ETAG
                                                       ("" when the warehouse has no snapshot)
  status                 GET    .../catalog/status     the warehouse's backing, snapshot, fence and counts

--json prints the server's JSON answer (indented). A server error prints
its Iceberg error (code, type, message) and exits 2.

rehearsal prints a disaster-recovery or scale/fault rehearsal plan as JSON;
it changes nothing and makes no network calls.
`

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
)

// catalogOptions are the flags of "cairn admin catalog ...".
type catalogOptions struct {
	Verb      string // one of the catalog* verbs
	Warehouse string

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

func parseCatalog(args []string) (invocation, error) {
	const cmd = "admin catalog"
	const want = "want migration, recover, backup, restore, status or rehearsal"
	if len(args) == 0 {
		return invocation{}, usageErrorf(cmd, "%s", want)
	}
	var verb string
	rest := args[1:]
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return invocation{name: "help", opts: helpOptions{text: catalogUsage}, logLevel: zerolog.InfoLevel}, nil
	case "migration":
		const wantMigration = "want preflight, materialize or cancel"
		if len(rest) == 0 {
			return invocation{}, usageErrorf(cmd+" migration", "%s", wantMigration)
		}
		switch rest[0] {
		case "preflight", "materialize", "cancel":
			verb, rest = "migration "+rest[0], rest[1:]
		case "help", "-h", "-help", "--help":
			return invocation{name: "help", opts: helpOptions{text: catalogUsage}, logLevel: zerolog.InfoLevel}, nil
		default:
			return invocation{}, usageErrorf(cmd+" migration", "unknown action %q: %s", rest[0], wantMigration)
		}
	case catalogVerbRecover, catalogVerbBackup, catalogVerbRestore, catalogVerbStatus:
		verb = args[0]
	case catalogVerbRehearsal:
		return parseRehearsal(rest)
	default:
		return invocation{}, usageErrorf(cmd, "unknown catalog command %q: %s", args[0], want)
	}
	name := cmd + " " + verb

	o := catalogOptions{Verb: verb}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&o.Endpoint, "endpoint", "http://"+defaultAddress, "server `URL`")
	fs.BoolVar(&o.JSON, "json", false, "print the server's JSON answer instead of text")
	fs.BoolVar(&o.Alias, "alias", false, "use the /_iceberg/v1 alias and the SigV4 signing name s3tables")
	fs.StringVar(&o.AccessKey, "access-key", "", "sign as this user instead of the root user (default $CAIRN_ACCESS_KEY)")
	fs.StringVar(&o.SecretKey, "secret-key", "", "secret key of --access-key (default $CAIRN_SECRET_KEY; the environment keeps it out of ps)")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "give up on the server after this long")
	expectedGiven := false
	switch verb {
	case catalogVerbRecover:
		fs.BoolVar(&o.DryRun, "dry-run", false, "report what recovery would do and change nothing (GET instead of POST)")
	case catalogVerbRestore:
		fs.StringVar(&o.BackupID, "backup-id", "", "the backup to restore, as 'cairn admin catalog backup' printed it (required)")
		fs.Func("expected-etag", "the `ETAG` of the warehouse's current snapshot, as 'status' prints it; \"\" when it has none (required)", func(v string) error {
			o.ExpectedETag, expectedGiven = v, true
			return nil
		})
		fs.BoolVar(&o.AllowReplace, "allow-replace", false, "allow replacing an existing snapshot")
		fs.BoolVar(&o.AllowDowngrade, "allow-format-downgrade", false, "allow restoring a backup of an older snapshot format (roll the v2 format back; unset the v2 gates first)")
	}

	// The warehouse comes first, as the table bucket name does in
	// "admin table-bucket".
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		if help, err := parseFlags(fs, rest); help != nil {
			return *help, nil
		} else if err != nil {
			return invocation{}, err
		}
		return invocation{}, usageErrorf(name, "the warehouse (table bucket) name comes first")
	}
	o.Warehouse, rest = rest[0], rest[1:]
	if help, err := parseFlags(fs, rest); help != nil || err != nil {
		return deref(help), err
	}
	if err := checkCatalogEndpoint(o.Endpoint); err != nil {
		return invocation{}, usageErrorf(name, "--endpoint: %v", err)
	}
	if o.Timeout <= 0 {
		return invocation{}, usageErrorf(name, "--timeout must be positive, got %v", o.Timeout)
	}
	if (o.AccessKey == "") != (o.SecretKey == "") {
		return invocation{}, usageErrorf(name, "give --access-key and --secret-key together")
	}
	if verb == catalogVerbRestore {
		if o.BackupID == "" {
			return invocation{}, usageErrorf(name, "--backup-id is required")
		}
		if !expectedGiven {
			return invocation{}, usageErrorf(name, "--expected-etag is required (--expected-etag \"\" when the warehouse has no snapshot)")
		}
	}
	return invocation{name: name, opts: o, logLevel: zerolog.InfoLevel}, nil
}

// checkCatalogEndpoint accepts an absolute http or https URL.
func checkCatalogEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: want http://HOST:PORT or https://HOST:PORT", s)
	}
	return nil
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
		sub = "migration"
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
		method, sub, dst, show = http.MethodPost, "recovery", &r, func(w io.Writer) error { return writeRecovery(w, r) }
		if o.DryRun {
			method = http.MethodGet
		}
	case catalogVerbBackup:
		var b catalog.BackupResult
		method, sub, dst, show = http.MethodPost, "backup", &b, func(w io.Writer) error { return writeBackup(w, o.Warehouse, b) }
	case catalogVerbRestore:
		var r catalog.RestoreResult
		method, sub, dst, show = http.MethodPost, "restore", &r, func(w io.Writer) error { return writeRestore(w, r) }
		var err error
		body, err = json.Marshal(catalog.RestoreRequest{BackupID: o.BackupID, ExpectedSnapshotETag: o.ExpectedETag, AllowReplace: o.AllowReplace, AllowFormatDowngrade: o.AllowDowngrade})
		if err != nil {
			return err
		}
	case catalogVerbStatus:
		var s catalog.Status
		method, sub, dst, show = http.MethodGet, "status", &s, func(w io.Writer) error { return writeStatus(w, s) }
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
// <endpoint>/iceberg/v1/<warehouse>/catalog/<sub> and returns the body of
// a 2xx answer. Other answers become *catalogServerError.
func catalogCall(ctx context.Context, o catalogOptions, method, sub string, body []byte) ([]byte, error) {
	base, service := "/iceberg", "s3"
	if o.Alias {
		base, service = "/_iceberg", "s3tables"
	}
	u := strings.TrimSuffix(o.Endpoint, "/") + base + "/v1/" + url.PathEscape(o.Warehouse) + "/catalog/" + sub
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
