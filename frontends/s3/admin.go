package s3

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/cairnstore/cairn/frontends/s3/iam"
	"github.com/cairnstore/cairn/objstore"
)

// The admin API lives under /_cairn/admin/v1/ (no bucket name can start
// with "_"), is signed like any S3 request and is for the root user only:
//
//	GET    /_cairn/admin/v1/users          -> {"users":[{access_key, policy, created}]}
//	PUT    /_cairn/admin/v1/users/NAME     <- {"secret_key": "...", "policy": "readonly" | "{...json...}", "email": "optional"}
//	DELETE /_cairn/admin/v1/users/NAME
//	GET    /_cairn/admin/v1/status         -> ServerStatus (Options.Status; 501 without)
const adminBucket = "_cairn"

// ServerStatus is the answer of GET /_cairn/admin/v1/status: the store's
// Status and Health side by side (their fields at the top level), the
// server's version and how long it has run. The web console and `cairn
// admin status` read it: its JSON names are stable.
type ServerStatus struct {
	objstore.Status
	objstore.Health
	Version       string  `json:"version"`
	UptimeSeconds float64 `json:"uptime_seconds"`
}

// adminStatus answers GET /_cairn/admin/v1/status.
func (s *Server) adminStatus(w *recorder, req *request) error {
	if req.Method != http.MethodGet {
		return errMethodNotAllowed
	}
	if s.opt.Status == nil {
		return apiErr("NotImplemented", http.StatusNotImplemented, "This server does not report its status.")
	}
	st, err := s.opt.Status(req.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(st)
}

func (s *Server) admin(w *recorder, req *request) error {
	if s.opt.Users == nil || !s.opt.Users.IsRoot(req.auth.AccessKey) || req.session != nil {
		return errAccessDenied
	}
	if req.key == "admin/v1/status" {
		return s.adminStatus(w, req)
	}
	rest, ok := strings.CutPrefix(req.key, "admin/v1/users")
	if !ok {
		return apiErr("InvalidRequest", 400, "Unknown admin resource %q.", req.key)
	}
	name := strings.TrimPrefix(rest, "/")
	switch {
	case req.Method == http.MethodGet && name == "":
		w.Header().Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(map[string]any{"users": s.opt.Users.List()})
	case req.Method == http.MethodPut && name != "":
		var body struct {
			SecretKey string `json:"secret_key"`
			Policy    string `json:"policy"`
			Email     string `json:"email"`
		}
		var r io.Reader = http.NoBody
		if req.body != nil {
			r = req.body
		}
		if err := json.NewDecoder(io.LimitReader(r, 64<<10)).Decode(&body); err != nil {
			return apiErr("MalformedJSON", 400, "The request body is not valid JSON: %v", err)
		}
		if err := s.opt.Users.Add(req.Context(), iam.User{AccessKey: name, SecretKey: body.SecretKey, Policy: body.Policy, Email: body.Email}); err != nil {
			return err
		}
		w.WriteHeader(http.StatusOK)
		return nil
	case req.Method == http.MethodDelete && name != "":
		if err := s.opt.Users.Remove(req.Context(), name); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return errMethodNotAllowed
}
