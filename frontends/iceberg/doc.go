// Package iceberg is Cairn's Iceberg REST catalog face: the Apache Iceberg
// REST catalog API (open-api/rest-catalog-open-api.yaml) on the shared HTTP
// port, under /iceberg/v1/... and the alias /_iceberg/v1/..., plus the
// table-bucket admin endpoints under /_cairn/admin/v1/table-buckets.
//
// # What it owns
//
//   - Routing (routes.go): the spec's paths, matched on the escaped path so
//     that a namespace or table name may hold any byte; the namespace path
//     segment is split on the unit separator 0x1F (%1F) and on the
//     advertised separator (paths.go).
//   - The JSON bodies that are not Iceberg metadata (config, paging, lists,
//     OAuth tokens, the error model) in models.go. Table and view metadata,
//     commit requests and their validation belong to package catalog: the
//     face hands request bodies to it as raw JSON and marshals what it
//     returns, and never imports apache/iceberg-go.
//   - The error model (errors.go is the one place that maps catalog errors
//     to the spec's status codes and exception types).
//   - Authentication and authorization through the Authenticator and
//     Authorizer interfaces (auth.go): SigV4 is verified by whatever cmd/
//     wires in; OAuth2 client-credentials bearer tokens are issued and
//     checked here (HMAC-signed, short-lived), with the keys the
//     TokenKeyStore keeps (catalog.Service keeps them in the store, so a
//     token outlives a restart until it expires); POST /v1/oauth/token-keys
//     (root only) rotates them, and a token of the key before the previous
//     one is refused.
//   - What a request is, for the resource policies of table buckets and
//     tables (tablesactions.go): the S3 Tables actions each route
//     performs and the table it names, handed to a ResourceAuthorizer
//     (cmd/ evaluates the policies with the users' own); the policies
//     themselves are kept by the catalog and served by the S3 Tables API
//     (s3tables_policy.go), never evaluated here.
//   - Credential vending (vend.go): X-Iceberg-Access-Delegation:
//     vended-credentials on create and load, and .../credentials, answer
//     credentials for the table's location from the Vendor (cmd/ makes
//     them temporary credentials of the S3 face's users), read-write when
//     the Authorizer lets the caller write the warehouse, never cached;
//     remote signing (sign.go): X-Iceberg-Access-Delegation:
//     remote-signing turns it on in the table's config, and
//     .../tables/{table}/sign has the RequestSigner sign S3 requests
//     inside the table's location only.
//   - The AWS S3 Tables control plane (s3tables*.go, Server.S3Tables): the
//     REST-JSON API of the AWS SDKs' s3tables client over the same catalog
//     and the same authentication, authorization, body limit, access log
//     and metrics; table buckets are warehouses, ARNs name them and their
//     tables (by table-uuid), errors are {"message"} with the exception in
//     x-amzn-ErrorType, mapped from the same table as the Iceberg errors.
//   - Idempotency-Key replay on mutating routes (idempotency.go), request
//     ids, one zerolog access line per request and Prometheus metrics by
//     route and status (server.go, metrics.go).
//
// It may import package catalog (for its sentinel errors) and nothing of
// another face: not frontends/s3 nor its sigv4 and iam packages (cmd/cairn
// adapts those to Authenticator, Authorizer, Vendor and RequestSigner).
//
// # Invariants
//
//   - Every non-2xx answer of the Iceberg routes carries
//     {"error":{"message","type","code"}} (HEAD answers carry the status
//     only); the token endpoint answers OAuth2 errors
//     ({"error","error_description"}) as RFC 6749 says; the S3 Tables API
//     answers {"message"} and its x-amzn-ErrorType header.
//   - A stored idempotent response is replayed byte for byte; a 5xx is never
//     stored, so a retry after an unknown outcome runs again.
//   - The Server holds configuration and its cached token keys only: no
//     package-level mutable state.
//   - A token naming a key newer than the current one (read before its MAC
//     can be checked, so anyone can send one) reads the store at most once
//     per forcedReloadGap; inside the gap it is refused as invalid.
//
// # Locks
//
//   - tokens.loads (a singleflight group) runs one store read of the token
//     keys at a time; its callers wait for that read, and only key loads
//     (first use, keyRefresh passed, a forced reload) ever wait on it.
//   - tokens.mu protects the cached keys, loadedAt and forcedAt. It is
//     never held across I/O nor while waiting on tokens.loads: a read's
//     result is swapped in under it afterwards, unless the cached keys are
//     newer (a rotation finished meanwhile). Nothing else is locked with it.
package iceberg
