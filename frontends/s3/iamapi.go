package s3

import (
	"encoding/xml"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairnstore/cairn/frontends/s3/access"
	"github.com/cairnstore/cairn/frontends/s3/iam"
)

// The IAM user-policy API: the AWS IAM query protocol (POST / with a form
// body Action=...&Version=2010-05-08, signed for service "iam", XML
// answers in the IAM namespace) at the S3 endpoint, for the inline
// policies of the user directory's users (iam.Directory.PutUserPolicy):
// PutUserPolicy, GetUserPolicy, ListUserPolicies, DeleteUserPolicy. The
// root may manage every user's; a user what its own policy allows of the
// actions iam:PutUserPolicy, ... on arn:aws:iam::000000000000:user/<name>
// (nobody may grant itself more than that). Errors are IAM's:
// <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/>.

const (
	iamNS      = "https://iam.amazonaws.com/doc/2010-05-08/"
	iamVersion = "2010-05-08"
	// maxIAMForm bounds the form body: a policy document and names.
	maxIAMForm = 16 << 10
)

// isIAMQuery reports whether a request to the service root is an IAM
// query-protocol call (a form POST); S3 has no POST on "/".
func isIAMQuery(req *request) bool {
	ct, _, _ := strings.Cut(req.Header.Get("Content-Type"), ";")
	return req.Method == http.MethodPost && strings.EqualFold(strings.TrimSpace(ct), "application/x-www-form-urlencoded")
}

// iamError is an IAM error answer.
type iamError struct {
	status        int
	code, message string
}

func (e *iamError) Error() string { return e.code + ": " + e.message }

type iamErrorResponse struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	NS      string   `xml:"xmlns,attr"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}

type iamMetadata struct {
	RequestID string `xml:"RequestId"`
}

type iamEmptyResponse struct {
	XMLName  xml.Name
	NS       string      `xml:"xmlns,attr"`
	Metadata iamMetadata `xml:"ResponseMetadata"`
}

type getUserPolicyResponse struct {
	XMLName xml.Name `xml:"GetUserPolicyResponse"`
	NS      string   `xml:"xmlns,attr"`
	Result  struct {
		UserName       string `xml:"UserName"`
		PolicyName     string `xml:"PolicyName"`
		PolicyDocument string `xml:"PolicyDocument"` // URL-encoded, as IAM sends it
	} `xml:"GetUserPolicyResult"`
	Metadata iamMetadata `xml:"ResponseMetadata"`
}

type listUserPoliciesResponse struct {
	XMLName xml.Name `xml:"ListUserPoliciesResponse"`
	NS      string   `xml:"xmlns,attr"`
	Result  struct {
		PolicyNames []string `xml:"PolicyNames>member"`
		IsTruncated bool     `xml:"IsTruncated"`
	} `xml:"ListUserPoliciesResult"`
	Metadata iamMetadata `xml:"ResponseMetadata"`
}

// iamQuery serves one IAM call, answering its errors in IAM's form.
func (s *Server) iamQuery(w *recorder, req *request) error {
	return queryError(w, req, iamNS, s.iamCall(w, req), iamErrorOf)
}

// queryError answers err of a query-protocol call (IAM's, STS's) in its
// form, <ErrorResponse> in namespace ns, mapping errors that are not
// already an *iamError with errorOf; nil when err is.
func queryError(w *recorder, req *request, ns string, err error, errorOf func(error) *iamError) error {
	if err == nil {
		return nil
	}
	var ie *iamError
	if !errors.As(err, &ie) {
		ie = errorOf(err)
	}
	res := iamErrorResponse{NS: ns, RequestID: req.id}
	res.Error.Type, res.Error.Code, res.Error.Message = "Sender", ie.code, ie.message
	if ie.status >= 500 {
		res.Error.Type = "Receiver"
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(ie.status)
	if _, werr := w.Write([]byte(xml.Header)); werr != nil {
		return werr
	}
	return xml.NewEncoder(w).Encode(res)
}

// queryCaller checks what every query-protocol call needs: a user
// directory, and a signed request.
func (s *Server) queryCaller(req *request) error {
	if s.opt.Users == nil {
		return &iamError{http.StatusNotImplemented, "NotImplemented", "This server has no user directory."}
	}
	if req.auth.AccessKey == "" {
		return &iamError{http.StatusForbidden, "MissingAuthenticationToken", "Request is missing Authentication Token"}
	}
	return nil
}

// queryForm reads a query-protocol call's form body, of API version
// version when it names one.
func queryForm(req *request, version string) (url.Values, error) {
	raw, err := readBody(req, maxIAMForm)
	var tooLarge *APIError
	if errors.As(err, &tooLarge) {
		return nil, &iamError{http.StatusBadRequest, "ValidationError", "The request body is too large."}
	}
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, &iamError{http.StatusBadRequest, "MalformedQueryString", err.Error()}
	}
	if v := form.Get("Version"); v != "" && v != version {
		return nil, &iamError{http.StatusBadRequest, "InvalidParameterValue", "Version " + v + " is not " + version + "."}
	}
	return form, nil
}

// iamErrorOf maps the user directory's errors to IAM's codes.
func iamErrorOf(err error) *iamError {
	switch {
	case errors.Is(err, iam.ErrNoSuchUser), errors.Is(err, iam.ErrNoSuchPolicy):
		return &iamError{http.StatusNotFound, "NoSuchEntity", err.Error()}
	case errors.Is(err, iam.ErrInvalidPolicy):
		return &iamError{http.StatusBadRequest, "MalformedPolicyDocument", err.Error()}
	case errors.Is(err, iam.ErrInvalidName):
		return &iamError{http.StatusBadRequest, "ValidationError", err.Error()}
	case errors.Is(err, iam.ErrPolicyTooLarge):
		return &iamError{http.StatusConflict, "LimitExceeded", err.Error()}
	case errors.Is(err, errAccessDenied):
		return &iamError{http.StatusForbidden, "AccessDenied", "User is not authorized to perform this action"}
	}
	return &iamError{http.StatusInternalServerError, "ServiceFailure", "The request processing has failed because of an unknown error."}
}

func (s *Server) iamCall(w *recorder, req *request) error {
	if err := s.queryCaller(req); err != nil {
		return err
	}
	if req.auth.Service != "iam" {
		return &iamError{http.StatusBadRequest, "InvalidClientTokenId", "The request is not signed for service iam."}
	}
	form, err := queryForm(req, iamVersion)
	if err != nil {
		return err
	}
	action := form.Get("Action")
	user, name := form.Get("UserName"), form.Get("PolicyName")
	switch action {
	case "PutUserPolicy", "GetUserPolicy", "DeleteUserPolicy":
		if name == "" {
			return &iamError{http.StatusBadRequest, "ValidationError", "PolicyName is required."}
		}
		fallthrough
	case "ListUserPolicies":
		if user == "" {
			return &iamError{http.StatusBadRequest, "ValidationError", "UserName is required."}
		}
	case "":
		return &iamError{http.StatusBadRequest, "MissingAction", "Action is required."}
	default:
		return &iamError{http.StatusBadRequest, "InvalidAction", "The action " + action + " is not valid for this web service."}
	}
	if !s.mayIAM(req, "iam:"+action, access.UserARN(user)) {
		return errAccessDenied
	}
	users, ctx := s.opt.Users, req.Context()
	switch action {
	case "PutUserPolicy":
		doc := form.Get("PolicyDocument")
		if doc == "" {
			return &iamError{http.StatusBadRequest, "ValidationError", "PolicyDocument is required."}
		}
		if err := users.PutUserPolicy(ctx, user, name, []byte(doc)); err != nil {
			return err
		}
		return writeXML(w, iamEmptyResponse{XMLName: xml.Name{Local: "PutUserPolicyResponse"}, NS: iamNS, Metadata: iamMetadata{req.id}})
	case "DeleteUserPolicy":
		if err := users.DeleteUserPolicy(ctx, user, name); err != nil {
			return err
		}
		return writeXML(w, iamEmptyResponse{XMLName: xml.Name{Local: "DeleteUserPolicyResponse"}, NS: iamNS, Metadata: iamMetadata{req.id}})
	case "GetUserPolicy":
		doc, err := users.GetUserPolicy(user, name)
		if err != nil {
			return err
		}
		res := getUserPolicyResponse{NS: iamNS, Metadata: iamMetadata{req.id}}
		res.Result.UserName, res.Result.PolicyName, res.Result.PolicyDocument = user, name, url.PathEscape(doc)
		return writeXML(w, res)
	default: // ListUserPolicies
		names, err := users.ListUserPolicies(user)
		if err != nil {
			return err
		}
		res := listUserPoliciesResponse{NS: iamNS, Metadata: iamMetadata{req.id}}
		res.Result.PolicyNames = names
		return writeXML(w, res)
	}
}

// mayIAM decides an IAM action on a user's ARN: the root may, a user when
// its own policy allows (there is no resource policy on users).
func (s *Server) mayIAM(req *request, act, resource string) bool {
	principal := req.auth.AccessKey
	if req.session != nil {
		return false // temporary credentials do not manage users
	}
	if s.isRoot(principal) {
		return true
	}
	pol, ok := s.opt.Users.UserPolicy(principal)
	if !ok {
		return false
	}
	r := &access.Request{Principal: principal, Action: act, Resource: resource, Values: s.condValues(req, &objectRef{s: s, req: req})}
	allowed, _ := access.Decide(&access.Input{Req: r, User: pol, AccountBucket: true})
	return allowed
}
