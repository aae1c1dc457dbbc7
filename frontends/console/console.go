package console

import (
	"embed"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Prefix is where the console lives on the HTTP port.
const Prefix = "/console"

// DefaultSessionLifetime is how long a sign-in lasts when
// Options.SessionLifetime is zero.
const DefaultSessionLifetime = 8 * time.Hour

// CSRFHeader must be present on every mutating call to /console/api/.
const CSRFHeader = "X-Cairn-Console"

// cookieName is the session cookie, scoped to Prefix.
const cookieName = "cairn_console"

//go:embed static
var staticFiles embed.FS

// Options configures the console.
type Options struct {
	// Upstream serves the proxied, signed API calls: the server's root
	// handler (S3, the Iceberg REST catalog and the admin APIs). Required.
	Upstream http.Handler
	// Region is the SigV4 region calls are signed for; "" is us-east-1.
	Region string
	// SessionLifetime bounds a sign-in; zero means DefaultSessionLifetime.
	SessionLifetime time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SecureCookie marks the session cookie Secure on every answer, not
	// only on those to a request that came over TLS: for a server behind
	// a proxy that terminates TLS (the request reaches Cairn over plain
	// HTTP, so r.TLS is nil).
	SecureCookie bool
	// Logger logs sign-ins, sign-outs and refusals.
	Logger zerolog.Logger
}

// Server is the console: the static UI and /console/api/.
type Server struct {
	opt      Options
	sessions *sessions
	static   http.Handler
}

// New returns the console over opt.Upstream.
func New(opt Options) (*Server, error) {
	if opt.Upstream == nil {
		return nil, errors.New("console: Options.Upstream is required")
	}
	if opt.Region == "" {
		opt.Region = "us-east-1"
	}
	if opt.SessionLifetime <= 0 {
		opt.SessionLifetime = DefaultSessionLifetime
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, fmt.Errorf("console: static files: %w", err)
	}
	return &Server{
		opt:      opt,
		sessions: newSessions(),
		static:   http.StripPrefix(Prefix+"/", http.FileServer(http.FS(sub))),
	}, nil
}

// ServeHTTP routes /console, /console/ and everything under them.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == Prefix:
		http.Redirect(w, r, Prefix+"/", http.StatusMovedPermanently)
	case p == Prefix+"/api/session":
		s.session(w, r)
	case strings.HasPrefix(p, Prefix+"/api/"):
		s.api(w, r)
	case strings.HasPrefix(p, Prefix+"/"):
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, http.StatusMethodNotAllowed, "the console's pages are read with GET")
			return
		}
		h := w.Header()
		// The UI loads only its own files and talks only to its own API.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		s.static.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// errorBody is the console API's error JSON (its own calls; proxied calls
// answer in the language of the face behind them).
type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Code    int    `json:"code"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	var b errorBody
	b.Error.Message = fmt.Sprintf(format, args...)
	b.Error.Code = status
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// mutating reports whether a method changes state (CSRF checks apply).
func mutating(method string) bool {
	return method != http.MethodGet && method != http.MethodHead
}

// csrfOK checks a mutating call: the custom header (a cross-site form or
// a simple request cannot send it), Sec-Fetch-Site when the browser sends
// it (only "same-origin" passes: a sandboxed document, whose origin is
// opaque, is "cross-site"), and Origin when the browser sends it (the
// console's own host; "null", an opaque origin, never is).
func csrfOK(r *http.Request) error {
	if !mutating(r.Method) {
		return nil
	}
	if r.Header.Get(CSRFHeader) == "" {
		return fmt.Errorf("a %s to the console API must carry the %s header (the console's pages send it)", r.Method, CSRFHeader)
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return fmt.Errorf("a %s to the console API must come from the console's own pages (Sec-Fetch-Site is %q, not same-origin)", r.Method, site)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host != r.Host {
			return fmt.Errorf("origin %q is not this console's (%s): a proxy in front of Cairn must pass the Host header on unchanged", o, r.Host)
		}
	}
	return nil
}

// current returns the request's session and its id, or nil.
func (s *Server) current(r *http.Request) (*session, string) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil, ""
	}
	return s.sessions.get(c.Value, s.opt.Now()), c.Value
}

// sessionInfo is what the UI learns of its session.
type sessionInfo struct {
	AccessKey string    `json:"access_key"`
	Root      bool      `json:"root"`
	Expires   time.Time `json:"expires"`
}

// session serves /console/api/session: POST signs in, GET describes the
// session, DELETE signs out.
func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	if err := csrfOK(r); err != nil {
		writeError(w, http.StatusForbidden, "%v", err)
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.signIn(w, r)
	case http.MethodGet:
		sess, _ := s.current(r)
		if sess == nil {
			writeError(w, http.StatusUnauthorized, "not signed in (or the session expired): sign in with an access key and its secret")
			return
		}
		writeJSON(w, http.StatusOK, sessionInfo{AccessKey: sess.accessKey, Root: sess.root, Expires: sess.expires})
	case http.MethodDelete:
		if _, id := s.current(r); id != "" {
			s.sessions.remove(id)
		}
		http.SetCookie(w, s.cookie(r, "", -1))
		w.WriteHeader(http.StatusNoContent)
	default:
		writeError(w, http.StatusMethodNotAllowed, "%s is not allowed on %s (POST signs in, GET describes, DELETE signs out)", r.Method, r.URL.Path)
	}
}

// cookie is the session cookie holding id, for maxAge seconds (negative:
// delete it).
func (s *Server) cookie(r *http.Request, id string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: cookieName, Value: id, Path: Prefix + "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || s.opt.SecureCookie,
	}
}

// signIn checks the keys with a signed ListBuckets and opens a session.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	in, err := parseSignIn(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	sess := &session{accessKey: in.AccessKey, secretKey: in.SecretKey}
	status, body, err := s.probe(r, sess, http.MethodGet, "/")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "checking the keys: %v", err)
		return
	}
	if status != http.StatusOK {
		msg := s3Message(body)
		if msg == "" {
			msg = http.StatusText(status)
		}
		s.opt.Logger.Info().Str("access_key", in.AccessKey).Int("status", status).Msg("console sign-in refused")
		writeError(w, http.StatusUnauthorized, "sign-in refused: %s", msg)
		return
	}
	// Only the root user may list the users: that is what root means to
	// the admin APIs, so ask them rather than guess.
	if st, _, err := s.probe(r, sess, http.MethodGet, "/_cairn/admin/v1/users"); err == nil && st == http.StatusOK {
		sess.root = true
	}
	sess.expires = s.opt.Now().Add(s.opt.SessionLifetime)
	id, err := s.sessions.add(sess, s.opt.Now())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "creating a session: %v", err)
		return
	}
	s.opt.Logger.Info().Str("access_key", in.AccessKey).Bool("root", sess.root).Msg("console sign-in")
	http.SetCookie(w, s.cookie(r, id, int(s.opt.SessionLifetime/time.Second)))
	writeJSON(w, http.StatusOK, sessionInfo{AccessKey: sess.accessKey, Root: sess.root, Expires: sess.expires})
}

// signInBody is what the sign-in form posts.
type signInBody struct {
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
}

// maxSignInBody bounds the sign-in body read.
const maxSignInBody = 16 << 10

// parseSignIn reads a sign-in body: JSON with both keys set.
func parseSignIn(body io.Reader) (signInBody, error) {
	var in signInBody
	if err := json.NewDecoder(io.LimitReader(body, maxSignInBody)).Decode(&in); err != nil {
		return signInBody{}, fmt.Errorf("the sign-in body is not JSON {\"access_key\": ..., \"secret_key\": ...}: %w", err)
	}
	if in.AccessKey == "" || in.SecretKey == "" {
		return signInBody{}, errors.New("both an access key and its secret are needed to sign in")
	}
	return in, nil
}

// s3Message is the Message of an S3 error XML body, or "".
func s3Message(body []byte) string {
	var e struct {
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Message
}
