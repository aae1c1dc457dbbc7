// Package postform owns the outside input of S3's browser uploads (POST
// object): the multipart/form-data form up to its file part (Read), the
// base64 JSON policy document and its conditions (ParsePolicy,
// Policy.Check), and the form's signature, SigV4 (x-amz-algorithm,
// x-amz-credential, x-amz-date, x-amz-signature) or SigV2
// (AWSAccessKeyId, signature), each computed over the base64 policy
// (Authenticate).
//
// Invariants: Read never holds more than the bound it is given of the
// fields before the file, and never reads the file part itself: the caller
// streams it. Field names are lower-cased (S3 matches them ignoring case);
// values are kept as sent. A Policy returned by ParsePolicy has an
// expiration and a condition list whose every entry is well formed.
//
// Errors wrap one of the package's sentinels; the text after it is the
// message S3 gives. It holds no state and takes no locks; it imports
// nothing of Cairn.
package postform
