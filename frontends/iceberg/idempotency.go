package iceberg

import (
	"fmt"
	"net/http"
)

// idempotent runs a mutating request under its Idempotency-Key: a key
// already on record replays the stored response (status and body, byte
// for byte); otherwise the request runs and its final response is stored
// unless it is a 5xx, so that a retry after an unknown outcome runs again.
// Keys are scoped to the warehouse. Without a key, or when the face
// advertises no idempotency support, the request simply runs.
func (s *Server) idempotent(req *request) (int, []byte, error) {
	key := req.Header.Get("Idempotency-Key")
	if key == "" || s.opt.IdempotencyLifetime == "" || req.warehouse == "" {
		return s.run(req)
	}
	if err := checkIdempotencyKey(key); err != nil {
		return s.encodeError(req, err)
	}
	status, body, found, err := s.opt.Catalog.RecallResponse(req.Context(), req.warehouse, key)
	if err != nil {
		return s.encodeError(req, fmt.Errorf("idempotency key %q: %w", key, err))
	}
	if found {
		req.replayed = true
		return status, body, nil
	}
	status, out, runErr := s.run(req)
	if status < 500 {
		if err := s.opt.Catalog.RememberResponse(req.Context(), req.warehouse, key, status, out); err != nil {
			s.opt.Logger.Warn().Err(err).Str("rid", req.id).Str("key", key).Msg("iceberg: idempotency key not stored")
		}
	}
	return status, out, runErr
}

// checkIdempotencyKey accepts 1-128 printable ASCII characters (the spec
// asks for a 36-character UUIDv7; Cairn does not insist on the version).
func checkIdempotencyKey(k string) error {
	if len(k) > maxKeyLen {
		return badRequest("Idempotency-Key longer than %d characters", maxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] >= 0x7f {
			return apiErr(http.StatusBadRequest, "BadRequestException", "Idempotency-Key holds a character that is not printable ASCII")
		}
	}
	return nil
}
