// Package sse is the S3 face's encryption at rest: the encrypted stream
// format, the data keys and how they are sealed, the per-version record
// the face keeps in Attrs.Sys, and the key files (master key, key ring).
//
// The face encrypts: the store receives ciphertext and erasure-codes,
// checksums and caches it like any data, so neither the drives nor the
// read cache ever hold plaintext of an encrypted object.
//
// # Keys
//
// Every object (every multipart upload) has its own random 32-byte object
// key. The object key is sealed (AES-256-GCM, random 12-byte nonce) under
// a key-encryption key derived by HMAC-SHA256 from:
//
//   - SSE-C: the customer's key (never stored; a wrong key fails to open
//     the sealed object key, which is how it is told apart: ErrWrongKey);
//   - SSE-S3: the server's master key, named by its id (the first 8 bytes
//     of its SHA-256, hex), so that a different master key is reported as
//     such (ErrMasterKey), never read as garbage;
//   - SSE-KMS: the named key of the local key ring, with the request's
//     encryption context bound in as additional data.
//
// # Stream format (version 1)
//
// One stream per PUT and per multipart part:
//
//	header   32 bytes: version (1), 7 zero bytes, 24-byte random salt
//	packages each PackageSize bytes of plaintext (the last may be
//	         shorter; an empty stream has one empty package) sealed with
//	         AES-256-GCM: plaintext followed by its 16-byte tag
//
// The stream key is HMAC-SHA256(object key, "cairn-sse/v1/stream" ||
// salt): a fresh key per stream, so that re-uploading a part never reuses
// a nonce. Package i's nonce is its 8-byte big-endian number followed by
// 4 bytes, 0x80000000 for the last package and 0 otherwise (truncation
// and extension fail); the header is every package's additional data.
// A stream of n plaintext bytes takes EncryptedSize(n) =
// 32 + n + 16*max(1, ceil(n/PackageSize)) bytes, a function that can be
// inverted (PlainSize), so that the plaintext sizes of an object and of
// its parts follow from the stored sizes and need no record of their own.
// Packages are fixed-size, so a plaintext range maps to the packages that
// hold it (a Range or partNumber GET decrypts only those).
//
// A plaintext of unknown size (a POST's file) makes the same stream: the
// Encrypter reads one byte past each full package to know the last one.
// The Encrypter also hashes the plaintext (its MD5: SSE-S3's ETag, the
// input of OpaqueETag, the ETag of SSE-C and SSE-KMS objects, or a
// Content-MD5 to check), a large one on goroutines of its own, package
// by package in order, while the next packages are read and sealed;
// Close waits for that hashing.
//
// Package sse holds no mutable state; Keys are read-only once built.
package sse
