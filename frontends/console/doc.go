// Package console serves Cairn's web console under /console/: a static
// UI (plain HTML, CSS and JavaScript modules embedded in the binary, no
// build step and nothing fetched from outside the machine) and a small
// backend under /console/api/.
//
// The console is a client of the server's other faces, as MinIO's console
// is, and imports none of them. Signing in checks an access key and its
// secret with a signed ListBuckets; the secret then stays server-side, in
// an in-memory session table keyed by a random id that the browser holds
// in an HttpOnly, SameSite=Strict cookie (Secure over TLS, or always with
// Options.SecureCookie). Every API call of the UI goes to
//
//	/console/api/s3?cairn-path=PATH       -> PATH                   (the S3 API, path-style)
//	/console/api/iceberg?cairn-path=PATH  -> /iceberg PATH          (the Iceberg REST catalog)
//	/console/api/admin?cairn-path=PATH    -> /_cairn/admin/v1 PATH  (users, table buckets, status)
//
// with PATH (escaped segment by segment) in the PathParam query parameter
// and the rest of the query passed on: a browser resolves "." and ".."
// segments of a URL path before sending it, so a key or an Iceberg name
// in the path could reach another object or the admin API.
//
// and is served in process by Options.Upstream (the server's root handler)
// after being SigV4-signed with the session's keys, so every ACL, bucket
// policy and IAM rule applies to the signed-in user exactly as over S3.
// S3 bodies stream through with UNSIGNED-PAYLOAD; the small JSON bodies of
// the catalog and admin APIs are hashed.
//
// Invariants:
//   - A secret never leaves the process: not in a cookie, a header or a
//     response.
//   - The upstream path is PATH exactly, every segment kept (canonicalPath
//     resolves no dot segment); a console API path with anything after
//     the target's prefix is refused, so nothing the browser rewrote is
//     acted on.
//   - A mutating call (any method but GET and HEAD) carries the header
//     X-Cairn-Console (CSRF: a cross-site form cannot set it; the
//     SameSite=Strict cookie is the first line), has Sec-Fetch-Site
//     same-origin when the browser sends it, and, when the browser sends
//     Origin, comes from the console's own host (never "null").
//   - Proxied answers carry Content-Security-Policy "sandbox" and nosniff,
//     so an object read through the console cannot run script in the
//     console's origin. The S3 face serves HTML/SVG/XML objects with a
//     sandbox CSP too, so a stored document opened at its own URL on the
//     shared origin cannot script the console either.
//
// Lock order: sessions.mu is a leaf.
package console
