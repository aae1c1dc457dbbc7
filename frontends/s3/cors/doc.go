// Package cors owns a bucket's CORS configuration: parsing and checking
// the CORSConfiguration XML of PutBucketCors, its canonical encoding (the
// same XML, which GetBucketCors returns and the S3 face keeps as the
// bucket document s3.cors), and the matching of a request (origin,
// method, requested headers) against the rules, first match wins, as S3
// does.
//
// Invariants: a Config returned by Parse has 1 to MaxRules rules, each
// with at least one origin and one method; every method is one of GET,
// PUT, POST, DELETE, HEAD; no origin and no allowed header holds more
// than one '*'. Encode(Parse(x)) parses back to the same Config.
//
// It holds no state and takes no locks; it imports nothing of Cairn.
package cors
