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
// # Reading ahead
//
// A GET decrypts on a goroutine of its own while the handler writes to
// the socket (WriteAhead): the reading side fetches the packages of the
// range (from the store's block cache when it has them) into
// PieceWriters, which open them into the caller's buffers, one at a
// time, and hand each one, filled, to the writing side, which writes it
// and gives it back. The buffers are all the plaintext memory a GET
// holds, however large the object: the S3 face gives each encrypted GET
// two buffers of 1 MiB (16 packages; one is decrypted into while the
// other is written) and one more 1 MiB buffer for the store's copy of
// blocks it must read from the drives, 3 MiB a GET. Buffers
// pass between the two goroutines by two channels (free, full) with room
// for all of them, so a hand-over never blocks the side that gives.
// WriteAhead returns only once the reading goroutine has ended: on a
// write error or the request's context ending, the reader's next buffer
// request fails and it stops; on a read or authentication error, the
// buffers already filled are written first (the response is cut short
// there). Either way the caller may close the store's reader after.
//
// The stream cipher is crypto/aes's block in crypto/cipher's standard
// GCM (12-byte nonce, 16-byte tag), the pair the standard library runs
// in AES-NI/PCLMULQDQ assembly; a 64 KiB package makes the per-package
// cost (nonce, header as additional data, tag) small against the bytes
// (BenchmarkGCMOpen measures package sizes from 4 KiB to 1 MiB).
//
// Package sse holds no mutable state; Keys are read-only once built.
package sse
