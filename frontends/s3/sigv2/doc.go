// Package sigv2 verifies AWS Signature Version 2 on incoming S3 requests:
// the header form ("Authorization: AWS AccessKeyId:Signature") and the
// presigned query form (AWSAccessKeyId, Expires, Signature), as AWS's
// "Signing and authenticating REST requests" describes them and as
// botocore (aws-cli v1 presigns with it by default), minio-go and s3cmd
// send them. It also holds the client-side Sign and Presign that tests use.
//
// # What it owns
//
//   - Telling the forms apart (Detect): a header starting "AWS " is V2, a
//     query with AWSAccessKeyId or Signature and no X-Amz-* presign
//     parameter is V2; anything else is someone else's (SigV4, or none).
//   - The StringToSign: Method, Content-MD5, Content-Type, Date (Expires in
//     the query form), CanonicalizedAmzHeaders, CanonicalizedResource; and
//     HMAC-SHA1 over it, compared in constant time.
//   - The time checks: clock skew of Date or x-amz-date (x-amz-date wins)
//     for the header form, Expires for the query form.
//
// It does not read or check the body (V2 signs none of it: Content-MD5,
// which the face checks, is what covers it), does not decide who may do
// what, does not map errors to S3 codes (frontends/s3/errors.go does, from
// the sentinels in errors.go), and imports nothing from Cairn.
//
// # Canonicalization
//
// Clients disagree in small ways, so the verifier accepts a request when
// any of a few StringToSign candidates matches; each candidate is a
// complete, signed statement of the request, so accepting several weakens
// nothing. The candidates vary in:
//
//   - the path: as sent on the wire (botocore, s3cmd), or decoded and
//     re-encoded with every byte outside A-Z a-z 0-9 - _ . ~ / as %XX
//     (minio-go); with "/" + bucket in front for virtual-hosted requests,
//     and "/bucket/" for a path-style "/bucket" (botocore signs that);
//   - the sub-resources kept from the query: AWS's documented list with
//     the later additions minio-go signs (encryption, legal-hold,
//     retention, replication, select), or botocore's list (which adds
//     accelerate, analytics, inventory, metrics, object-lock, restore,
//     ...), values decoded, sorted by name;
//   - the Date line when x-amz-date is set: the Date header as sent (empty
//     when absent) with x-amz-date among the amz headers (what AWS
//     specifies and clients send), or x-amz-date's value on the Date line
//     and not among the amz headers (AWS's own DELETE example).
//
// Older botocore (1.28 to 1.30, Debian 12's) signs the fixed query of an
// operation's URI template after the path ("/b?list-type=2",
// "/b?acl?acl"); those forms are candidates too.
//
// Presigned URLs made by botocore carry x-amz-*, content-type and
// content-md5 values in the query instead of headers; those query values
// are signed as if they were headers.
//
// A Verifier holds only configuration and is safe for concurrent use; the
// package has no mutable package-level state.
package sigv2
