package iceberg

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/cairnstore/cairn/catalog"
)

// Credential vending: a client that sends X-Iceberg-Access-Delegation:
// vended-credentials with createTable or loadTable (or calls
// .../tables/{table}/credentials) gets short-lived S3 credentials scoped
// to the table's location, read-write when it may write the warehouse,
// else read-only, in the result's config and in storage-credentials.
// Vending them is the Vendor's (cmd/ makes them with the S3 face's user
// directory: temporary credentials whose session policy names only the
// table's location), so that this face needs nothing of the S3 face.

// Vendor makes credentials for a table's data.
type Vendor interface {
	// VendCredentials returns FileIO configuration (s3.access-key-id,
	// s3.secret-access-key, s3.session-token, ...) of credentials for p
	// limited to the objects of bucket under prefix (which ends in "/"),
	// read-only unless write.
	VendCredentials(ctx context.Context, p Principal, bucket, prefix string, write bool) (map[string]string, error)
}

// AccessDelegationHeader names the delegation a client asks for.
const AccessDelegationHeader = "X-Iceberg-Access-Delegation"

// wantsDelegation says whether the request asks for the access
// delegation mechanism ("vended-credentials", "remote-signing"): the
// header is a comma-separated list of them.
func wantsDelegation(req *request, mechanism string) bool {
	for _, v := range req.Header.Values(AccessDelegationHeader) {
		for _, m := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(m), mechanism) {
				return true
			}
		}
	}
	return false
}

// addCredentials vends credentials for res's table location into its
// config and storage-credentials.
func (s *Server) addCredentials(req *request, res *catalog.TableResult) error {
	bucket, prefix, err := tableLocation(*res)
	if err != nil {
		return err
	}
	write := s.opt.Authorizer == nil || s.opt.Authorizer.Authorize(req.principal, ActionWrite, req.warehouse)
	creds, err := s.opt.Vendor.VendCredentials(req.Context(), req.principal, bucket, prefix, write)
	if err != nil {
		return err
	}
	if res.Config == nil {
		res.Config = map[string]string{}
	}
	for k, v := range creds {
		res.Config[k] = v
	}
	res.StorageCredentials = []catalog.StorageCredential{{Prefix: "s3://" + bucket + "/" + prefix, Config: creds}}
	return nil
}

// delegate adds to res what the access delegation the request asks for
// needs (vended credentials, remote signing), and returns the answer
// then: never cached. ok is false when it asks for none this server
// gives.
func (s *Server) delegate(req *request, res *catalog.TableResult) (reply, bool, error) {
	done := false
	if wantsDelegation(req, "vended-credentials") && s.opt.Vendor != nil {
		if err := s.addCredentials(req, res); err != nil {
			return reply{}, false, err
		}
		done = true
	}
	if wantsDelegation(req, "remote-signing") && s.opt.Signer != nil {
		id, err := s.resultIdent(req, res)
		if err != nil {
			return reply{}, false, err
		}
		signingConfig(req, res, id)
		done = true
	}
	if !done {
		return reply{}, false, nil
	}
	return reply{status: http.StatusOK, body: *res, header: noStore(etag(res.ETag))}, true, nil
}

// noStore marks an answer holding credentials as not to be cached.
func noStore(h http.Header) http.Header {
	if h == nil {
		h = http.Header{}
	}
	h.Set("Cache-Control", "no-store")
	return h
}

type loadCredentialsResponse struct {
	StorageCredentials []catalog.StorageCredential `json:"storage-credentials"`
}

// loadCredentials is GET .../tables/{table}/credentials: fresh vended
// credentials for the table's location.
func (s *Server) loadCredentials(req *request) (reply, error) {
	if s.opt.Vendor == nil {
		return reply{}, fmt.Errorf("%w: this server vends no credentials", catalog.ErrUnsupported)
	}
	id, err := s.ident(req, "table")
	if err != nil {
		return reply{}, err
	}
	res, err := s.opt.Catalog.LoadTable(req.Context(), req.warehouse, id, "refs")
	if err != nil {
		return reply{}, missingParent(err, catalog.ErrNoSuchTable, id)
	}
	if err := s.addCredentials(req, &res); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: loadCredentialsResponse{res.StorageCredentials}, header: noStore(nil)}, nil
}
