package catalog

import (
	"context"
	"errors"
	"fmt"
	"unicode"
)

// maxIdempotencyKey bounds an Idempotency-Key (the spec's are 36-character
// UUIDv7 strings; other clients may send other opaque strings).
const maxIdempotencyKey = 128

func validIdempotencyKey(key string) error {
	if key == "" || len(key) > maxIdempotencyKey {
		return fmt.Errorf("%w: Idempotency-Key must be 1 to %d bytes", ErrBadRequest, maxIdempotencyKey)
	}
	for _, r := range key {
		if r > unicode.MaxASCII || unicode.IsControl(r) || r == '/' {
			return fmt.Errorf("%w: Idempotency-Key holds %q", ErrBadRequest, r)
		}
	}
	return nil
}

// RecallResponse implements Catalog.
func (s *Service) RecallResponse(ctx context.Context, wh, key string) (int, []byte, bool, error) {
	if err := validIdempotencyKey(key); err != nil {
		return 0, nil, false, err
	}
	if err := s.requireWarehouse(ctx, wh); err != nil {
		return 0, nil, false, err
	}
	var rec idempotencyRec
	ver, err := s.getJSON(ctx, wh, KindIdempotency, key, &rec)
	if errors.Is(err, ErrNotFound) {
		return 0, nil, false, nil
	}
	if err != nil {
		return 0, nil, false, err
	}
	if s.now().After(rec.Expires) {
		// Expired: forget it, unless a cutover fences the warehouse
		// (its records must not change under a materialized snapshot).
		if release, err := s.enter(ctx, wh); err == nil {
			_ = s.b.Delete(ctx, wh, KindIdempotency, key, ver)
			release()
		}
		return 0, nil, false, nil
	}
	return rec.Status, rec.Body, true, nil
}

// RememberResponse implements Catalog.
func (s *Service) RememberResponse(ctx context.Context, wh, key string, status int, body []byte) error {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	if err := validIdempotencyKey(key); err != nil {
		return err
	}
	if status >= 500 || status < 200 {
		return fmt.Errorf("%w: status %d is not remembered", ErrBadRequest, status)
	}
	if err := s.requireWarehouse(ctx, wh); err != nil {
		return err
	}
	rec := idempotencyRec{Status: status, Body: body, Expires: s.now().Add(IdempotencyLifetime).UTC()}
	_, err = s.putJSON(ctx, wh, KindIdempotency, key, rec, AnyVersion)
	return err
}
