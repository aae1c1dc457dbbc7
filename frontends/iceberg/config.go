package iceberg

import (
	"encoding/base64"
	"maps"
	"net/http"
	"net/url"
	"strings"
)

// getConfig answers GET /v1/config?warehouse=W: the catalog's defaults
// and overrides, with prefix W, the endpoints this face serves and the
// idempotency-key lifetime.
func (s *Server) getConfig(req *request) (reply, error) {
	if req.warehouse == "" {
		return reply{}, badRequest("the warehouse query parameter is required: the name of a table bucket (cairn admin table-bucket create NAME)")
	}
	defaults, overrides, err := s.opt.Catalog.Config(req.Context(), req.warehouse)
	if err != nil {
		return reply{}, err
	}
	out := catalogConfig{
		Defaults:            maps.Clone(defaults),
		Overrides:           maps.Clone(overrides),
		Endpoints:           s.endpoints,
		IdempotencyLifetime: s.opt.IdempotencyLifetime,
	}
	if out.Defaults == nil {
		out.Defaults = map[string]string{}
	}
	if out.Overrides == nil {
		out.Overrides = map[string]string{}
	}
	out.Overrides["prefix"] = req.warehouse
	if s.opt.NamespaceSeparator != UnitSeparator {
		out.Overrides["namespace-separator"] = url.PathEscape(s.opt.NamespaceSeparator)
	}
	return reply{status: http.StatusOK, body: out}, nil
}

// basicAuth decodes "Basic base64(id:secret)"; the parts are
// form-urlencoded per RFC 6749 section 2.3.1.
func basicAuth(h string) (id, secret string, ok bool) {
	enc, ok := cutPrefixFold(h, "Basic ")
	if !ok {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return "", "", false
	}
	id, secret, ok = strings.Cut(string(raw), ":")
	if !ok {
		return "", "", false
	}
	if u, err := url.QueryUnescape(id); err == nil {
		id = u
	}
	if p, err := url.QueryUnescape(secret); err == nil {
		secret = p
	}
	return id, secret, true
}
