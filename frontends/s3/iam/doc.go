// Package iam owns who may do what on the S3 face: users (access key,
// secret, policy) kept as JSON objects in the store's system bucket
// .cairn-iam, IAM-style policies (Allow/Deny statements over S3 actions and
// resources, with * and ? wildcards, and conditions), compiled by package
// access (the one evaluator, which also reads bucket policies and ACLs),
// and the canned policies readwrite, readonly and writeonly. A user may
// have an email address, by which ACL grants can name it.
//
// Temporary credentials (session.go, STS AssumeRole) are a user's (or the
// root's), limited by a session policy; nothing is stored per session: the
// token is signed with a key kept in .cairn-iam (sts/session.key), and the
// session's secret derived from it.
//
// The root user (CAIRN_ROOT_USER) is not stored: it is allowed everything.
// Evaluation follows AWS: an explicit Deny wins, then any Allow, else the
// request is denied.
package iam
