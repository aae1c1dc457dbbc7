package s3

import (
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/cairnstore/cairn/frontends/s3/sigv2"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// authenticate checks how r is signed and returns what that proved and
// the request's body:
//
//   - Signature Version 2, header or presigned query (package sigv2):
//     Auth.Version 2. V2 signs no body, so the body passes through with
//     the checks sigv4.UnsignedBody makes (x-amz-checksum-*; Content-MD5
//     is checked by the handlers, as for every request).
//   - Signature Version 4 (s.verifier): Auth.Version 4.
//   - No signature at all: Auth.Anonymous with an empty AccessKey and the
//     body as for V2. The request goes on to authorization, which decides
//     what anonymous callers may do (Options.Authorize("", ...)). When
//     Options.Authorize is nil ("every authenticated request") or the
//     request names an API the face does not serve (routed false),
//     anonymous requests are refused here with sigv4.ErrMissingAuth (403
//     AccessDenied), as before anonymous requests existed.
func (s *Server) authenticate(r *http.Request, routed bool) (sigv4.Auth, *sigv4.Body, error) {
	switch sigv2.Detect(r) {
	case sigv2.HeaderForm, sigv2.QueryForm:
		v := sigv2.Verifier{Secret: s.verifier.Secret, MaxSkew: s.verifier.MaxSkew, Now: s.verifier.Now}
		a, err := v.Verify(r, s.virtualHostBucket(r))
		if err != nil {
			return sigv4.Auth{}, nil, err
		}
		body, err := sigv4.UnsignedBody(r)
		if err != nil {
			return sigv4.Auth{}, nil, err
		}
		return sigv4.Auth{AccessKey: a.AccessKey, Presigned: a.Presigned, Payload: unsignedPayload(r), Version: 2}, body, nil
	}
	auth, body, err := s.verifier.Verify(r)
	if !errors.Is(err, sigv4.ErrMissingAuth) || (s.opt.Authorize == nil && s.opt.Users == nil) || !routed {
		return auth, body, err
	}
	body, err = sigv4.UnsignedBody(r)
	if err != nil {
		return sigv4.Auth{}, nil, err
	}
	return sigv4.Auth{Anonymous: true, Payload: unsignedPayload(r)}, body, nil
}

// unsignedPayload is the payload form of a request whose body no
// signature covers: its x-amz-content-sha256, else UNSIGNED-PAYLOAD.
func unsignedPayload(r *http.Request) string {
	if p := r.Header.Get("X-Amz-Content-Sha256"); p != "" {
		return p
	}
	return sigv4.PayloadUnsigned
}

// virtualHostBucket is the bucket of a virtual-hosted-style request (the
// host is bucket.domain for a configured domain, as in resolve), or "" for
// a path-style one. SigV2 signs "/" + bucket + path then.
func (s *Server) virtualHostBucket(r *http.Request) string {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	for _, d := range s.opt.Domains {
		if b, ok := strings.CutSuffix(host, "."+d); ok && b != "" {
			return b
		}
	}
	return ""
}
