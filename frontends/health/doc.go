// Package health serves the liveness and readiness probes of a Cairn server:
//
//	GET /health/live   200 while the process can answer HTTP at all
//	GET /health/ready  200 when the readiness check passes, else 503 with
//	                   {"status":"not ready","error":"..."}
//
// It owns nothing but these two routes. It knows the store only as a
// readiness function handed in by cmd/, so it imports no other package of
// this module (frontends never import each other; see .golangci.yml).
// HEAD is answered like GET, without a body. Responses are never cached.
package health
