// Package sigv4 verifies AWS Signature Version 4 on incoming HTTP requests
// and decodes and verifies their payloads while the body streams. It also
// holds the client-side signer that Cairn's own CLI and tests use.
//
// # What it owns
//
//   - Header authentication ("Authorization: AWS4-HMAC-SHA256 Credential=…,
//     SignedHeaders=…, Signature=…") and presigned URLs (X-Amz-Algorithm,
//     X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders,
//     X-Amz-Signature), including the date checks (clock skew for header auth,
//     expiry for presigned URLs).
//   - Every x-amz-content-sha256 payload form: a hex SHA-256, UNSIGNED-PAYLOAD,
//     STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER
//     and STREAMING-UNSIGNED-PAYLOAD-TRAILER (the aws-chunked encoding, with
//     chunk-signature chaining seeded by the request signature, and trailers).
//   - The flexible checksums x-amz-checksum-{crc32,crc32c,crc64nvme,sha1,sha256},
//     given as a header or announced by x-amz-trailer and sent as a trailer.
//   - Sign and Presign, the client side.
//
// It does not decide who may do what (that is the face's policy), does not map
// errors to S3 error codes (frontends/s3/errors.go does, from the sentinels in
// errors.go), and imports nothing from Cairn.
//
// # Canonicalization
//
// The canonical request follows what AWS SDKs and minio-go send. For the
// service "s3" the canonical URI is the decoded request path re-encoded once
// (each byte outside the RFC 3986 unreserved set becomes %XX, '/' is kept);
// the path as sent on the wire is also accepted when it differs. For any other
// service (for example "s3tables" on the Iceberg REST face) the path as sent is
// encoded a second time, as the SDKs do for non-S3 services; the once-encoded
// form is also accepted. Verifier.EitherPathEncoding accepts the twice-encoded
// form for "s3" too, for faces whose clients sign with a generic SigV4 signer
// under that name (the Iceberg REST catalog). The canonical query
// is every parameter (X-Amz-Signature excluded for presigned URLs), decoded and
// re-encoded the same way, sorted by key then value. Canonical headers are the
// signed header names, lowercase, with values trimmed and inner runs of spaces
// collapsed; "host" comes from Request.Host, and content-length,
// transfer-encoding and expect fall back to the fields net/http moves them to.
//
// # Streaming invariants
//
// Verify never reads the body before returning (one exception: a request that
// carries no x-amz-content-sha256 header at all, as SDKs signing for non-S3
// services send, has its body hashed up to Verifier.MaxUnhashedBody so the
// signature can be checked). Body.Read hands out decoded bytes as they arrive,
// before the chunk, digest or checksum that covers them is checked: a caller
// must treat the data as authentic only once Read has returned io.EOF. Any
// verification failure is returned by Read in place of io.EOF and is sticky.
// Memory use is bounded by the line limits of the chunk decoder, never by the
// chunk or body size.
//
// A Verifier holds only configuration and is safe for concurrent use; the
// package has no mutable package-level state.
package sigv4
