package iceberg

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/internal/httpx"
)

// Path prefixes the face serves. Base is what clients are given as the
// catalog URI; they append /v1.
const (
	Base       = "/iceberg"
	AliasBase  = "/_iceberg"
	AdminPath  = "/_cairn/admin/v1/table-buckets"
	maxKeyLen  = 128
	defaultTTL = time.Hour
)

// Defaults of the Options fields left zero.
const (
	DefaultMaxBody  = 16 << 20
	DefaultPageSize = 1000
)

// Options configure the face. Only cmd/ fills them.
type Options struct {
	// Catalog serves the requests (required).
	Catalog Catalog
	// Authenticator verifies SigV4 requests and OAuth2 client
	// credentials. Nil: only bearer tokens are accepted, and none can be
	// issued.
	Authenticator Authenticator
	// Authorizer decides catalog policy actions; nil allows every
	// authenticated request. One that is a ResourceAuthorizer also
	// honours the resource policies of table buckets and tables.
	Authorizer Authorizer
	// Vendor vends credentials for tables' data (vend.go); nil: clients
	// asking for vended credentials get none.
	Vendor Vendor
	// Signer signs S3 requests for tables' data (sign.go); nil: no remote
	// signing.
	Signer RequestSigner
	// Maintainer runs table maintenance on demand (maintenance.go); nil:
	// POST .../maintenance/run answers 406.
	Maintainer Maintainer
	// NamespaceSeparator is advertised as namespace-separator and
	// accepted in paths besides 0x1F; empty means 0x1F only.
	NamespaceSeparator string
	// IdempotencyLifetime is advertised as idempotency-key-lifetime (an
	// ISO-8601 duration such as "PT30M"); empty advertises no support and
	// Idempotency-Key headers are ignored.
	IdempotencyLifetime string
	// TokenTTL is the lifetime of issued bearer tokens; zero means 1h.
	TokenTTL time.Duration
	// TokenKeys keeps the keys that sign bearer tokens. Nil: the
	// Catalog's, when it keeps them (catalog.Service does, in the store:
	// tokens outlive a restart), else a random key per Server.
	TokenKeys TokenKeyStore
	// MaxBody bounds request bodies; zero means DefaultMaxBody.
	MaxBody int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives one access log line per request.
	Logger zerolog.Logger
	// Metrics records requests by route and status; nil disables them.
	Metrics *Metrics
	// Cutover serves .../catalog/migration (object-backed servers); nil
	// answers 400.
	Cutover catalog.Cutover
	// Backups serves .../catalog/backup and restore (durable-strong
	// servers); nil answers 400.
	Backups catalog.Backups
	// Recovery serves .../catalog/recovery; nil answers 501.
	Recovery Recovery
	// Status serves .../catalog/status; nil answers 501.
	Status StatusReporter
}

// Server serves the Iceberg REST catalog. Build it with New.
type Server struct {
	opt       Options
	tokens    *tokens
	hostID    string
	routes    []*route
	endpoints []string
	reqSeq    atomic.Uint64
}

// New returns the face over opt.Catalog.
func New(opt Options) (*Server, error) {
	if opt.Catalog == nil {
		return nil, errors.New("iceberg: no catalog")
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.TokenTTL <= 0 {
		opt.TokenTTL = defaultTTL
	}
	if opt.MaxBody <= 0 {
		opt.MaxBody = DefaultMaxBody
	}
	if opt.NamespaceSeparator == "" {
		opt.NamespaceSeparator = UnitSeparator
	}
	if opt.TokenKeys == nil {
		opt.TokenKeys, _ = opt.Catalog.(TokenKeyStore)
	}
	tk, err := newTokens(opt.TokenKeys, opt.TokenTTL, opt.Now)
	if err != nil {
		return nil, err
	}
	var id [4]byte
	_, _ = rand.Read(id[:])
	rt := routeTable()
	return &Server{opt: opt, tokens: tk, hostID: strings.ToUpper(hex.EncodeToString(id[:])),
		routes: rt, endpoints: endpoints(rt)}, nil
}

// request is one request being served.
type request struct {
	*http.Request
	id        string
	route     *route
	op        string // operation id, for logs and metrics
	service   string // default signing name of the path prefix
	body      []byte
	segs      []string // decoded path segments after /v1
	principal Principal
	warehouse string
	// table is the table the request names, for a ResourceAuthorizer
	// (nil: none); tablesActions the S3 Tables actions its route performs
	// (tablesactions.go).
	table         *catalog.Ident
	tablesActions []string
	replayed      bool
	// header holds extra response headers of the handler's reply.
	header http.Header
	// retryAfter, in seconds, is sent as Retry-After when positive.
	retryAfter int
}

// reply is a handler's successful answer.
type reply struct {
	status int
	body   any // marshalled as JSON when non-nil
	header http.Header
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.opt.Now()
	rw := httpx.NewRecorder(w)
	req := &request{Request: r, id: s.nextRequestID(), op: "unknown"}
	rw.Header().Set("X-Request-Id", req.id)
	status, out, err := s.serve(req)
	s.write(rw, req, status, out)
	s.logRequest(req, rw, start, err)
}

// nextRequestID returns the id of a new request: the host id and a
// sequence number.
func (s *Server) nextRequestID() string {
	return fmt.Sprintf("%s%08X", s.hostID, s.reqSeq.Add(1))
}

// readBody reads the whole request body, at most MaxBody bytes, into
// req.body and gives req a fresh reader over it (the signature check
// reads it again).
func (s *Server) readBody(req *request) error {
	raw, err := io.ReadAll(io.LimitReader(req.Body, s.opt.MaxBody+1))
	if err != nil {
		return badRequest("reading the request body: %v", err)
	}
	if int64(len(raw)) > s.opt.MaxBody {
		return apiErr(http.StatusRequestEntityTooLarge, "BadRequestException", "request body larger than %d bytes", s.opt.MaxBody)
	}
	req.body = raw
	req.Body = io.NopCloser(bytes.NewReader(raw))
	req.ContentLength = int64(len(raw))
	return nil
}

// serve runs req and returns the status and encoded body to send.
func (s *Server) serve(req *request) (int, []byte, error) {
	if err := s.resolve(req); err != nil {
		return s.encodeError(req, err)
	}
	if err := s.readBody(req); err != nil {
		return s.encodeError(req, err)
	}
	if req.route.public {
		return s.run(req)
	}
	var err error
	if req.principal, err = s.authenticate(req); err != nil {
		return s.encodeError(req, err)
	}
	if req.route.action != "" { // admin routes check for root themselves
		req.table, req.tablesActions = s.routeTable(req), icebergTablesActions(req.route.op)
		if err := s.authorize(req, req.route.action); err != nil {
			return s.encodeError(req, err)
		}
	}
	if req.route.idempotent {
		return s.idempotent(req)
	}
	return s.run(req)
}

// run calls the route's handler and encodes its answer.
func (s *Server) run(req *request) (int, []byte, error) {
	if req.route.jsonBody && !json.Valid(req.body) {
		return s.encodeError(req, badRequest("the request body is not valid JSON"))
	}
	rep, err := req.route.handle(s, req)
	if err != nil {
		return s.encodeError(req, err)
	}
	req.header = rep.header
	if rep.body == nil {
		return rep.status, nil, nil
	}
	out, err := json.Marshal(rep.body)
	if err != nil {
		return s.encodeError(req, fmt.Errorf("encoding the answer: %w", err))
	}
	return rep.status, out, nil
}

// encodeError renders err as the spec's error JSON.
func (s *Server) encodeError(req *request, err error) (int, []byte, error) {
	api := toAPIError(err, req.id)
	req.retryAfter = api.RetryAfter
	out, _ := json.Marshal(errorBody{errorModel{Message: api.Message, Type: api.Type, Code: api.Status}})
	return api.Status, out, err
}

// write sends status and body (headers only for HEAD and 204).
func (s *Server) write(w *recorder, req *request, status int, body []byte) {
	for k, v := range req.header {
		w.Header()[k] = v
	}
	if req.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(req.retryAfter))
	}
	if req.replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if len(body) > 0 && req.Method != http.MethodHead && status != http.StatusNoContent {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	w.WriteHeader(status)
}

func (s *Server) logRequest(req *request, w *recorder, start time.Time, err error) {
	d := s.opt.Now().Sub(start)
	route := "unmatched"
	if req.route != nil {
		route = req.route.op
	}
	if s.opt.Metrics != nil {
		s.opt.Metrics.observe(route, w.Status, d)
	}
	ev := s.opt.Logger.Info()
	if w.Status >= 500 {
		ev = s.opt.Logger.Error()
	}
	ev = ev.Str("rid", req.id).Str("op", route).Str("method", req.Method).
		Str("path", req.URL.EscapedPath()).Int("status", w.Status).
		Int("in", len(req.body)).Int64("out", w.Bytes).Dur("dur", d).Str("remote", req.RemoteAddr)
	if req.warehouse != "" {
		ev = ev.Str("warehouse", req.warehouse)
	}
	if req.principal.AccessKey != "" {
		ev = ev.Str("user", req.principal.AccessKey)
	}
	if req.replayed {
		ev = ev.Bool("replayed", true)
	}
	if err != nil && w.Status >= 400 {
		ev = ev.Str("error", err.Error())
	}
	ev.Msg("iceberg")
}

// recorder is the shared response recorder (status and bytes for the
// access log and the metrics).
type recorder = httpx.Recorder
