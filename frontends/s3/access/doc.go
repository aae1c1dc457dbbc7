// Package access is the one authorization evaluator of the S3 face: the
// user's IAM policy, the bucket policy, the bucket and object ACLs, the
// public-access block and the ownership controls all feed Decide, which
// answers as "How Amazon S3 authorizes a request" does:
//
//  1. The root user (the account owner) is allowed everything.
//  2. An explicit Deny in the user's policy or the bucket policy denies.
//  3. Otherwise the request needs an Allow. For a bucket owned by the
//     account (owner "", the root) or by the caller, an Allow from the
//     user's policy, the bucket policy or an ACL suffices (same-account
//     rule). For a bucket another user owns, the caller's own policy must
//     allow (user context) AND the bucket owner must allow through the
//     bucket policy or an ACL (bucket context), like a cross-account
//     request. Anonymous callers have no user policy: only the bucket
//     policy or an ACL can allow them. Object context: in a user's
//     bucket, an object another user owns is that user's to grant (its
//     ACL decides GetObject and the object ACL calls; the bucket owner's
//     policy does not reach it).
//  4. ACLs are ignored when the bucket's ownership is BucketOwnerEnforced
//     (the owner keeps full control); public grants (AllUsers,
//     AuthenticatedUsers) are ignored under IgnorePublicAcls; a public
//     bucket policy allows only principals of the account under
//     RestrictPublicBuckets.
//
// Principals: every user is in one account, AccountID. A user's ARN is
// arn:aws:iam::000000000000:user/<access key>, the root's
// arn:aws:iam::000000000000:root; a user's canonical ID (ACL grantee ID,
// Owner ID) is its access key. Anonymous is the empty access key.
//
// The same language, of kind Tables (s3tables: actions on S3 Tables
// ARNs), is that of the resource policies of table buckets and tables,
// which cmd/ evaluates for the Iceberg face with Policy.Eval; Decide is
// the S3 face's alone.
//
// Policies (policy.go, condition.go) are parsed once into a compiled form
// (lower-cased actions, pre-parsed CIDRs, numbers and dates); Cache
// (cache.go) keeps the parsed bucket policies and ACLs keyed by bucket and
// raw bytes so that nothing is parsed per request. ACLs (acl.go) have a
// compact text encoding for the store (EncodeGrants/DecodeGrants).
//
// The package owns no I/O and no mutable package state; Cache is safe for
// concurrent use (one mutex, no other lock taken under it).
package access
