package main

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/catalog/strong"
	"github.com/cairnstore/cairn/frontends/iceberg"
	"github.com/cairnstore/cairn/frontends/s3/access"
	"github.com/cairnstore/cairn/frontends/s3/iam"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// strongGateEnvs are the variables of the snapshot format gates, in the
// order of strong.Options' fields.
func strongGateEnvs() []string {
	return []string{"CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2", "CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2_FLEET_CONFIRMED"}
}

// strongOptions reads the snapshot format gates
// (CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2 and ..._FLEET_CONFIRMED): v2 is
// written only when both are true.
func strongOptions(log zerolog.Logger) strong.Options {
	var o strong.Options
	for _, g := range []struct {
		env string
		dst *bool
	}{
		{strongGateEnvs()[0], &o.SnapshotV2},
		{strongGateEnvs()[1], &o.SnapshotV2FleetConfirmed},
	} {
		v, valid := strong.ParseGate(os.Getenv(g.env))
		if !valid {
			log.Warn().Str("variable", g.env).Str("value", os.Getenv(g.env)).Msg("not a boolean: taken as false")
		}
		*g.dst = v
	}
	return o
}

// unhealthyError names the warehouses a backing does not serve ("" is
// the registry), or is nil.
func unhealthyError(bad map[string]error) error {
	if len(bad) == 0 {
		return nil
	}
	names := make([]string, 0, len(bad))
	for wh := range bad {
		names = append(names, wh)
	}
	slices.Sort(names)
	var errs []error
	for _, wh := range names {
		label := wh
		if label == "" {
			label = "(registry)"
		}
		errs = append(errs, fmt.Errorf("catalog warehouse %s not served: %w", label, bad[wh]))
	}
	return errors.Join(errs...)
}

// s3Endpoint is the S3 URL the catalog gives clients for data files:
// CAIRN_S3_ENDPOINT, else http://ADDRESS (an unspecified host becomes
// 127.0.0.1).
func s3Endpoint(address string) string {
	if e := os.Getenv("CAIRN_S3_ENDPOINT"); e != "" {
		return strings.TrimSuffix(e, "/")
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return "http://" + address
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// icebergAuth adapts SigV4 (frontends/s3/sigv4) and the user directory
// (frontends/s3/iam) to the Iceberg face's Authenticator and Authorizer.
// The face may not import another face; cmd wires them.
type icebergAuth struct {
	users    *iam.Directory
	verifier *sigv4.Verifier
}

var (
	_ iceberg.Authenticator = (*icebergAuth)(nil)
	_ iceberg.Authorizer    = (*icebergAuth)(nil)
)

func newIcebergAuth(users *iam.Directory) *icebergAuth {
	return &icebergAuth{users: users, verifier: &sigv4.Verifier{
		Secret:   users.Secret,
		Services: []string{"s3", "s3tables"},
		// The face has read the whole body already; hash all of it when
		// the client sent no x-amz-content-sha256 (AWS SDK plain signer,
		// curl --aws-sigv4).
		MaxUnhashedBody: iceberg.DefaultMaxBody,
		// Generic SigV4 signers (botocore's, under PyIceberg's
		// rest.sigv4-enabled) encode the path twice even for "s3".
		EitherPathEncoding: true,
		// Iceberg's Java REST signer sends the body's digest in base64.
		Base64ContentSHA256: true,
	}}
}

// Authenticate verifies the SigV4 signature of r over body. Both signing
// names are accepted on both prefixes; service is only the default.
func (a *icebergAuth) Authenticate(r *http.Request, body []byte, service string) (iceberg.Principal, error) {
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	auth, b, err := a.verifier.Verify(r)
	if err != nil {
		return iceberg.Principal{}, fmt.Errorf("%w: %w", iceberg.ErrUnauthenticated, err)
	}
	if b != nil {
		defer func() { _ = b.Close() }()
		if strings.HasPrefix(auth.Payload, "STREAMING-") {
			return iceberg.Principal{}, fmt.Errorf("%w: aws-chunked payloads are not accepted by the catalog", iceberg.ErrUnauthenticated)
		}
		// Reading to EOF checks a signed payload hash against the body.
		if _, err := io.Copy(io.Discard, b); err != nil {
			return iceberg.Principal{}, fmt.Errorf("%w: %w", iceberg.ErrUnauthenticated, err)
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return iceberg.Principal{AccessKey: auth.AccessKey, Root: a.users.IsRoot(auth.AccessKey)}, nil
}

// Login checks OAuth2 client credentials: an access key and its secret.
func (a *icebergAuth) Login(accessKey, secret string) (iceberg.Principal, error) {
	want, ok := a.users.Secret(accessKey)
	if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(secret)) != 1 {
		return iceberg.Principal{}, fmt.Errorf("%w: unknown access key or bad secret", iceberg.ErrUnauthenticated)
	}
	return iceberg.Principal{AccessKey: accessKey, Root: a.users.IsRoot(accessKey)}, nil
}

// Authorize maps catalog actions to S3 policy actions on the warehouse's
// bucket, so one IAM-style policy governs both faces (userAction): the
// root user may do everything, another user what its policy allows.
func (a *icebergAuth) Authorize(p iceberg.Principal, action iceberg.Action, warehouse string) bool {
	return p.Root || a.users.IsRoot(p.AccessKey) || a.userEffect(p, action, warehouse) == access.Allow
}

// userEffect is what the user's own policy says of action on warehouse:
// Allow, Deny (an explicit Deny) or None. Unknown users (and session
// keys, which the catalog does not take) have no policy.
func (a *icebergAuth) userEffect(p iceberg.Principal, action iceberg.Action, warehouse string) access.Effect {
	s3Action, resource := userAction(action, warehouse)
	if s3Action == "" {
		return access.None
	}
	pol, ok := a.users.UserPolicy(p.AccessKey)
	if !ok {
		return access.None
	}
	return pol.Eval(&access.Request{Principal: p.AccessKey, Action: s3Action, Resource: resource})
}

// userAction is the S3 policy action and resource a catalog action needs
// in a user's policy: read needs s3:GetObject, write s3:PutObject and
// admin (purging a table's files) s3:DeleteObject, each on
// arn:aws:s3:::WAREHOUSE/*; migrate (the cutover, recovery, backup and
// restore) needs admin:MigrateTableCatalog on arn:aws:s3:::WAREHOUSE.
// Cairn scopes the cutover permission to the warehouse (RustFS checks it
// with an empty bucket scope, in effect globally). An unknown action
// needs what no policy grants ("").
func userAction(action iceberg.Action, warehouse string) (s3Action, resource string) {
	switch action {
	case iceberg.ActionMigrate:
		return "admin:MigrateTableCatalog", "arn:aws:s3:::" + warehouse
	case iceberg.ActionRead:
		return "s3:GetObject", "arn:aws:s3:::" + warehouse + "/*"
	case iceberg.ActionWrite:
		return "s3:PutObject", "arn:aws:s3:::" + warehouse + "/*"
	case iceberg.ActionAdmin:
		return "s3:DeleteObject", "arn:aws:s3:::" + warehouse + "/*"
	}
	return "", ""
}
