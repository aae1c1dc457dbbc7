// Package objectbacked is the object backing of the catalog: every record
// is one small object in the store's system bucket .cairn.sys (hidden from
// S3 listings, unreachable by S3 clients), changed only with conditional
// writes.
//
// # Layout
//
// A record (warehouse, kind, key) is the object
//
//	<kind>/<warehouse>/<key>
//
// in bucket .cairn.sys, with warehouse "-" for records that belong to no
// warehouse (the warehouse records themselves; "-" is no valid bucket
// name). The object's body is a 32-hex-digit random nonce, a newline, then
// the record's value: the nonce makes every Put change the object's ETag,
// so the ETag serves as the record's version token without ABA (two Puts
// of equal values still get different versions).
//
// Conditions map to the store's: ifVersion "" is IfNoneMatch "*", a
// version is IfMatch, and a Delete with a version is DeleteOptions.IfMatch.
//
// Addresses outside the Backing contract (a warehouse with "/", a kind
// not in catalog.Kinds, a key that is empty, has NUL or is not UTF-8) are
// refused before any store call, List included. The contract is checked
// by catalog/backingtest (backing_test.go runs it).
//
// It imports only catalog (for the Backing contract) and objstore.
package objectbacked
