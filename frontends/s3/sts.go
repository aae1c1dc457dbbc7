package s3

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/iam"
)

// The STS API: AssumeRole in the AWS query protocol (POST / with a form
// body Action=AssumeRole&Version=2011-06-15, signed for service "sts",
// XML answers in the STS namespace) at the S3 endpoint, as MinIO serves
// it, so that catalogs which vend credentials (Polaris, Lakekeeper) and
// SDKs get temporary credentials for a user: an access key, a secret and
// a session token, valid for DurationSeconds (900 to 43200, default
// 3600), limited by the session Policy when given (the user's rights
// intersected with it). RoleArn is accepted and not used: the session
// acts for the user who signed the call. Requests signed with the
// temporary key carry the token (x-amz-security-token, header or
// presigned query); takeSession checks it. Errors are STS's.

const (
	stsNS      = "https://sts.amazonaws.com/doc/2011-06-15/"
	stsVersion = "2011-06-15"
)

// queryAPI serves a query-protocol call at the service root: STS or IAM,
// by the service the request was signed for.
func (s *Server) queryAPI(w *recorder, req *request) error {
	if req.auth.Service == "sts" {
		return s.stsQuery(w, req)
	}
	return s.iamQuery(w, req)
}

// takeSession checks the session token of a request signed with
// temporary credentials and makes the request its parent user's, limited
// by the session (request.session). Other requests are left alone.
func (s *Server) takeSession(req *request) error {
	token := req.Header.Get("X-Amz-Security-Token")
	if token == "" {
		token = req.URL.Query().Get("X-Amz-Security-Token")
	}
	return s.applySession(req, token)
}

// applySession is takeSession with the token given (a browser upload
// carries it in its form).
func (s *Server) applySession(req *request, token string) error {
	ak := req.auth.AccessKey
	if s.opt.Users == nil || !iam.IsSessionKey(ak) || s.opt.Users.Exists(ak) {
		return nil
	}
	if token == "" {
		return apiErr("InvalidAccessKeyId", http.StatusForbidden, "Temporary credentials need their session token (x-amz-security-token); send it with the access key.")
	}
	sess, err := s.opt.Users.CheckSession(ak, token, time.Now())
	switch {
	case errors.Is(err, iam.ErrExpiredToken):
		return apiErr("ExpiredToken", http.StatusBadRequest, "The provided token has expired; ask for new temporary credentials.")
	case errors.Is(err, iam.ErrInvalidToken):
		return apiErr("InvalidToken", http.StatusBadRequest, "The provided token is malformed or otherwise invalid.")
	case err != nil:
		return err
	}
	req.session = &sess
	req.auth.AccessKey = sess.Parent
	return nil
}

type assumeRoleResponse struct {
	XMLName xml.Name `xml:"AssumeRoleResponse"`
	NS      string   `xml:"xmlns,attr"`
	Result  struct {
		Credentials struct {
			AccessKeyID     string `xml:"AccessKeyId"`
			SecretAccessKey string `xml:"SecretAccessKey"`
			SessionToken    string `xml:"SessionToken"`
			Expiration      string `xml:"Expiration"`
		} `xml:"Credentials"`
		AssumedRoleUser struct {
			AssumedRoleID string `xml:"AssumedRoleId"`
			Arn           string `xml:"Arn"`
		} `xml:"AssumedRoleUser"`
		PackedPolicySize int `xml:"PackedPolicySize,omitempty"`
	} `xml:"AssumeRoleResult"`
	Metadata iamMetadata `xml:"ResponseMetadata"`
}

// roleSessionNameRe is STS's RoleSessionName: 2 to 64 of [\w+=,.@-].
var roleSessionNameRe = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)

// stsQuery serves one STS call, answering its errors in STS's form.
func (s *Server) stsQuery(w *recorder, req *request) error {
	return queryError(w, req, stsNS, s.stsCall(w, req), stsErrorOf)
}

// stsErrorOf maps the user directory's errors to STS's codes.
func stsErrorOf(err error) *iamError {
	switch {
	case errors.Is(err, iam.ErrInvalidPolicy):
		return &iamError{http.StatusBadRequest, "MalformedPolicyDocument", err.Error()}
	case errors.Is(err, iam.ErrPolicyTooLarge):
		return &iamError{http.StatusBadRequest, "PackedPolicyTooLarge", err.Error()}
	case errors.Is(err, iam.ErrInvalidUser):
		return &iamError{http.StatusBadRequest, "ValidationError", err.Error()}
	case errors.Is(err, iam.ErrNoSuchUser), errors.Is(err, errAccessDenied):
		return &iamError{http.StatusForbidden, "AccessDenied", "User is not authorized to perform sts:AssumeRole."}
	}
	return &iamError{http.StatusInternalServerError, "InternalFailure", "The request processing has failed because of an unknown error."}
}

func (s *Server) stsCall(w *recorder, req *request) error {
	if err := s.queryCaller(req); err != nil {
		return err
	}
	form, err := queryForm(req, stsVersion)
	if err != nil {
		return err
	}
	switch action := form.Get("Action"); action {
	case "AssumeRole":
	case "":
		return &iamError{http.StatusBadRequest, "MissingAction", "Action is required."}
	default:
		return &iamError{http.StatusBadRequest, "InvalidAction", "The action " + action + " is not valid for this web service; this server answers AssumeRole."}
	}
	if req.session != nil {
		return &iamError{http.StatusForbidden, "AccessDenied", "Temporary credentials cannot assume a role; sign with the user's own keys."}
	}
	dur := iam.DefaultSessionDuration
	if v := form.Get("DurationSeconds"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || time.Duration(n)*time.Second < iam.MinSessionDuration || time.Duration(n)*time.Second > iam.MaxSessionDuration {
			return &iamError{http.StatusBadRequest, "ValidationError", fmt.Sprintf("DurationSeconds must be a whole number from %d to %d.",
				int(iam.MinSessionDuration.Seconds()), int(iam.MaxSessionDuration.Seconds()))}
		}
		dur = time.Duration(n) * time.Second
	}
	name := form.Get("RoleSessionName")
	if name == "" {
		name = "cairn-session"
	} else if !roleSessionNameRe.MatchString(name) {
		return &iamError{http.StatusBadRequest, "ValidationError", "RoleSessionName must be 2 to 64 letters, digits or +=,.@_-."}
	}
	policy := form.Get("Policy")
	sess, err := s.opt.Users.AssumeRole(req.auth.AccessKey, dur, policy, time.Now())
	if err != nil {
		return err
	}
	res := assumeRoleResponse{NS: stsNS, Metadata: iamMetadata{req.id}}
	c := &res.Result.Credentials
	c.AccessKeyID, c.SecretAccessKey, c.SessionToken = sess.AccessKey, sess.SecretKey, sess.Token
	c.Expiration = sess.Expiration.Format(time.RFC3339)
	res.Result.AssumedRoleUser.AssumedRoleID = sess.AccessKey + ":" + name
	res.Result.AssumedRoleUser.Arn = "arn:aws:sts::000000000000:assumed-role/" + sess.Parent + "/" + name
	if policy != "" {
		res.Result.PackedPolicySize = len(policy) * 100 / iam.MaxSessionPolicy
	}
	return writeXML(w, res)
}
