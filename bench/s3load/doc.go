// Package s3load is Cairn's S3 load generator, behind `cairn bench s3`:
// PUT or GET of fixed-size objects from N concurrent clients for a fixed
// time against any S3 endpoint, reporting ops/s, MiB/s and latency
// percentiles. Requests are signed with SigV4 and UNSIGNED-PAYLOAD, so the
// client spends no CPU hashing bodies (client and server share the CPU on
// a small machine), the way the yardstick's load generator does
// (docs/performance.md), so the two tools' figures compare.
//
// It talks HTTP only; it imports no part of the server but the signer.
package s3load
