package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	md5simd "github.com/minio/md5-simd"
	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/frontends/s3/access"
	"github.com/cairnstore/cairn/frontends/s3/iam"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
	"github.com/cairnstore/cairn/frontends/s3/sse"
	"github.com/cairnstore/cairn/internal/httpx"
	"github.com/cairnstore/cairn/objstore"
)

// Options configure the S3 face. Only cmd/ fills them.
type Options struct {
	// Secret returns the secret key of an access key (false: unknown).
	Secret func(accessKey string) (string, bool)
	// Authorize, used only without Users, stands for the user policy:
	// whether accessKey may perform action (an IAM action name such as
	// "s3:GetObject") on the resource ("arn:aws:s3:::bucket" or
	// "arn:aws:s3:::bucket/key"); nil allows every authenticated request.
	// Bucket policies and ACLs are evaluated as well (authz.go).
	Authorize func(accessKey, action, resource string) bool
	// Domains are the host names under which virtual-hosted-style
	// requests arrive (bucket.domain); path-style always works.
	Domains []string
	// Region is reported by GetBucketLocation; empty means us-east-1.
	Region string
	// Logger receives one access log line per request.
	Logger zerolog.Logger
	// Metrics records request counts and latencies; nil disables them.
	Metrics *Metrics
	// Users, when set, is the user directory: it supplies Secret when
	// nil, the users' policies and the root, and serves the admin API.
	Users *iam.Directory
	// SSE are the keys of server-side encryption: the SSE-S3 master key
	// and the SSE-KMS key ring (nil: neither; SSE-C works without).
	SSE *sse.Keys
	// SSECOverHTTP accepts SSE-C keys on plain HTTP from any address, not
	// only from loopback (for a server behind a TLS-terminating proxy).
	SSECOverHTTP bool
	// Status, when set, answers the admin API's GET status (admin.go).
	Status func(ctx context.Context) (ServerStatus, error)
}

// Server serves the S3 API. Build it with New.
type Server struct {
	store    *objstore.Store
	opt      Options
	verifier *sigv4.Verifier
	reqSeq   atomic.Uint64
	hostID   string
	access   access.Cache // parsed bucket policies and ACLs
	bufs     sync.Pool    // *[]byte of 1 MiB, for streaming GET bodies
	subs     struct {
		bucket, object map[string]map[string]subroute
	}
	// md5srv hashes SSE plaintexts (ETags, Content-MD5) of concurrent
	// large writes in SIMD lanes; made on first use, largeSSE counts them.
	md5srv   func() md5simd.Server
	largeSSE atomic.Int32
}

// New returns an S3 server over store.
func New(store *objstore.Store, opt Options) (*Server, error) {
	if opt.Users != nil {
		if opt.Secret == nil {
			opt.Secret = opt.Users.Secret
		}
	}
	if opt.Secret == nil {
		return nil, fmt.Errorf("s3: no credential lookup")
	}
	if opt.Region == "" {
		opt.Region = "us-east-1"
	}
	if opt.SSE == nil {
		opt.SSE, _ = sse.NewKeys(nil, nil) // cannot fail without keys
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	s := &Server{
		store:    store,
		opt:      opt,
		verifier: &sigv4.Verifier{Secret: opt.Secret, Services: []string{"s3", "iam", "sts"}},
		hostID:   hex.EncodeToString(id[:]),
		bufs: sync.Pool{New: func() any {
			b := make([]byte, 1<<20)
			return &b
		}},
	}
	s.subs.bucket, s.subs.object = s.bucketSubs(), s.objectSubs()
	s.md5srv = sync.OnceValue(md5simd.NewServer)
	return s, nil
}

// request is one S3 request being served.
type request struct {
	*http.Request
	id     string
	bucket string
	key    string
	auth   sigv4.Auth
	body   *sigv4.Body
	api    string // operation name, for logs and metrics

	bucketInfo *objstore.BucketInfo // the bucket's record, once bucketOf read it
	// session, for a request signed with temporary credentials (STS):
	// auth.AccessKey is then its parent user's, and the session's policy
	// limits what the parent may do (sts.go).
	session *iam.Session
}

// bucketOf returns the request's bucket record (owner, versioning, the
// face's bucket documents), read once per request.
func (s *Server) bucketOf(req *request) (objstore.BucketInfo, error) {
	if req.bucketInfo != nil {
		return *req.bucketInfo, nil
	}
	b, err := s.store.HeadBucket(req.Context(), req.bucket)
	if err != nil {
		return objstore.BucketInfo{}, err
	}
	req.bucketInfo = &b
	return b, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.ContentLength == 0 && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		// net/http sends "100 Continue" only when a body is read, and an
		// empty one never is; botocore (aws CLI, boto3) then mistakes the
		// next response on this connection for the 100 and stalls
		// (boto/botocore#3755). Answer the expectation explicitly.
		w.WriteHeader(http.StatusContinue)
	}
	rw := httpx.NewRecorder(w)
	req := &request{Request: r, id: s.requestID()}
	rw.Header().Set("x-amz-request-id", req.id)
	rw.Header().Set("x-amz-id-2", s.hostID)
	rw.Header().Set("Server", "Cairn")
	req.bucket, req.key = s.resolve(r)
	s.corsHeaders(rw, req)
	err := s.serve(rw, req)
	if err != nil {
		s.writeError(rw, req, err)
	}
	s.logRequest(req, rw, start, err)
}

func (s *Server) serve(w *recorder, req *request) error {
	h, api := s.route(req)
	req.api = api
	if !utf8.ValidString(req.bucket) || !utf8.ValidString(req.key) {
		// A percent-escape that is not UTF-8 names no bucket or key S3
		// can hold: it answers before reading anything else.
		return errInvalidURI
	}
	auth, body, err := s.authenticate(req.Request, h != nil)
	if err != nil && api != "PreflightCORS" {
		// A CORS preflight is never authenticated (on a presigned URL it
		// carries the signature of another method): the rules decide. A
		// browser upload (PostObject) is signed inside its form, not in its
		// headers: it arrives here anonymous, and postObject checks the
		// form's signature and authorizes.
		return err
	}
	// The body is not closed here: net/http closes it once the response
	// is flushed. Closing it first reads what is left of it (up to 256
	// KiB) before the answer goes out, and a client that sent
	// "Expect: 100-continue" and waits for the answer sends nothing: an
	// error (or any answer that does not read the body) would stall
	// until the client gives up (ceph s3-tests test_100_continue).
	req.auth, req.body = auth, body
	if err := s.takeSession(req); err != nil {
		return err
	}
	if h == nil {
		return api2err(api)
	}
	if objstore.IsSystemBucket(req.bucket) {
		return errAccessDenied // the server's own state is not S3-addressable
	}
	if req.bucket == adminBucket {
		return h(w, req) // root only, checked by the admin handler
	}
	if api == "PostObject" {
		return h(w, req) // the form's signer is known only once postObject has read it: it authorizes
	}
	if api == "PreflightCORS" {
		return h(w, req) // unauthenticated by definition: the bucket's CORS rules decide
	}
	if api == "IAM" {
		return h(w, req) // the IAM API decides its actions on users (iamapi.go), STS its own (sts.go)
	}
	if auth.Service == "iam" || auth.Service == "sts" {
		return errAccessDenied // a signature for IAM or STS is not one for S3
	}
	if err := s.authorize(req); err != nil {
		return err
	}
	return h(w, req)
}

func api2err(api string) error {
	if api == "MethodNotAllowed" {
		return errMethodNotAllowed
	}
	return errNotImplemented
}

func resource(bucket, key string) string {
	switch {
	case bucket == "":
		return "arn:aws:s3:::*"
	case key == "":
		return "arn:aws:s3:::" + bucket
	}
	return "arn:aws:s3:::" + bucket + "/" + key
}

// resolve finds bucket and key, virtual-hosted-style when the host is a
// subdomain of a configured domain, path-style otherwise.
func (s *Server) resolve(r *http.Request) (bucket, key string) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	path := r.URL.Path
	for _, d := range s.opt.Domains {
		if b, ok := strings.CutSuffix(host, "."+d); ok && b != "" {
			return b, strings.TrimPrefix(path, "/")
		}
	}
	path = strings.TrimPrefix(path, "/")
	bucket, key, _ = strings.Cut(path, "/")
	return bucket, key
}

func (s *Server) requestID() string {
	return fmt.Sprintf("%s%08X", strings.ToUpper(s.hostID[:8]), s.reqSeq.Add(1))
}

// writeError sends err as S3 error XML (headers only for HEAD).
func (s *Server) writeError(w *recorder, req *request, err error) {
	api := toAPIError(err)
	if w.Wrote() {
		return // the body had started: nothing sane to add
	}
	if api.Status == http.StatusNotModified {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Del("ETag")
	if api.Status != http.StatusMethodNotAllowed || w.Header().Get("x-amz-delete-marker") == "" {
		w.Header().Del("Last-Modified") // a named delete marker's 405 keeps its (objectError)
	}
	if req.Method == http.MethodHead {
		w.Header().Del("Content-Length")
		w.WriteHeader(api.Status)
		return
	}
	msg := api.Message
	if api.Status == http.StatusInternalServerError {
		msg = withRequestID(msg, req.id)
	}
	res := errorResponse{Code: api.Code, Message: msg, Resource: req.URL.Path,
		BucketName: req.bucket, Key: req.key, RequestID: req.id, HostID: s.hostID}
	var doc bytes.Buffer
	doc.WriteString(xml.Header)
	_ = xml.NewEncoder(&doc).Encode(res)
	// A length, not chunks: the answer is whole once flushed, before any
	// of a refused body is drained.
	w.Header().Set("Content-Length", strconv.Itoa(doc.Len()))
	w.WriteHeader(api.Status)
	_, _ = w.Write(doc.Bytes())
	drainRefused(w, req.Request)
}

func (s *Server) logRequest(req *request, w *recorder, start time.Time, err error) {
	d := time.Since(start)
	if s.opt.Metrics != nil {
		code := ""
		if err != nil {
			code = toAPIError(err).Code
		}
		s.opt.Metrics.observe(req.api, w.Status, d, req.bodyBytes(), w.Bytes, code)
	}
	ev := s.opt.Logger.Info()
	if w.Status >= 500 {
		ev = s.opt.Logger.Error()
	}
	ev = ev.Str("rid", req.id).Str("api", req.api).Str("method", req.Method).
		Str("bucket", req.bucket).Str("key", req.key).Int("status", w.Status).
		Int64("out", w.Bytes).Dur("dur", d).Str("remote", req.RemoteAddr)
	if req.auth.AccessKey != "" {
		ev = ev.Str("user", req.auth.AccessKey)
	}
	if err != nil && w.Status >= 400 {
		ev = ev.Str("error", err.Error())
	}
	ev.Msg("s3")
}

func (r *request) bodyBytes() int64 {
	if r.body == nil {
		return 0
	}
	return r.body.Size()
}

// recorder is the shared response recorder (status and bytes for the
// access log and the metrics).
type recorder = httpx.Recorder

// writeXML sends v as an XML body with status 200.
func writeXML(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/xml")
	if _, err := w.Write([]byte(xml.Header)); err != nil {
		return err
	}
	return xml.NewEncoder(w).Encode(v)
}
