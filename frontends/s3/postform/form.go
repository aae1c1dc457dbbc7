package postform

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"
)

// Errors. The S3 face maps each to its S3 code (errors.go); the text
// after the sentinel's is the message.
var (
	// ErrNotMultipart: the request is not multipart/form-data
	// (S3: 412 PreconditionFailed).
	ErrNotMultipart = errors.New("POST is not multipart/form-data")
	// ErrMalformed: the body is not well-formed multipart/form-data
	// (S3: 400 MalformedPOSTRequest).
	ErrMalformed = errors.New("malformed POST form")
	// ErrFieldsTooLarge: the fields before the file exceed the bound
	// (S3: 400 MaxPostPreDataLengthExceeded).
	ErrFieldsTooLarge = errors.New("POST form fields too large")
	// ErrInvalidArgument: a field is missing or wrong (S3: 400
	// InvalidArgument).
	ErrInvalidArgument = errors.New("invalid POST form")
	// ErrInvalidPolicy: the policy document is not one S3 takes (S3: 400
	// InvalidPolicyDocument).
	ErrInvalidPolicy = errors.New("invalid POST policy")
	// ErrPolicyDenied: the form breaks its policy, or the policy expired
	// (S3: 403 AccessDenied, "Invalid according to Policy: ...").
	ErrPolicyDenied = errors.New("POST policy denies the form")
	// ErrUnknownAccessKey: the form names an access key nobody has (S3:
	// 403 InvalidAccessKeyId).
	ErrUnknownAccessKey = errors.New("POST form access key unknown")
	// ErrSignatureMismatch: the form's signature is wrong (S3: 403
	// SignatureDoesNotMatch).
	ErrSignatureMismatch = errors.New("POST form signature does not match")
)

// Form is a POST object form read up to its file part.
type Form struct {
	// Fields are the fields before the file, by lower-case name.
	Fields map[string]string
	// FileName is the file part's file name ("" when it has none).
	FileName string
	// File is the file part's content, not yet read: the caller streams
	// it (S3 ignores anything after the file).
	File io.Reader
}

// Read parses the multipart/form-data body of a POST object request
// (contentType is the request's Content-Type) up to the file part,
// holding at most maxFields bytes of field names and values.
func Read(body io.Reader, contentType string, maxFields int64) (*Form, error) {
	media, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.EqualFold(media, "multipart/form-data") {
		return nil, fmt.Errorf("%w: Bucket POST must be of the enclosure-type multipart/form-data", ErrNotMultipart)
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, fmt.Errorf("%w: the multipart/form-data Content-Type has no boundary", ErrMalformed)
	}
	mr := multipart.NewReader(body, boundary)
	f := &Form{Fields: map[string]string{}}
	left := maxFields
	for {
		p, err := mr.NextPart()
		// A bare io.EOF is the closing boundary; a body that never had
		// one is a wrapped EOF, and malformed.
		if err == io.EOF { //nolint:errorlint // see above
			return nil, fmt.Errorf("%w: POST requires exactly one file upload per request", ErrInvalidArgument)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: The body of your POST request is not well-formed multipart/form-data. (%v)", ErrMalformed, err)
		}
		name := strings.ToLower(p.FormName())
		if name == "" {
			return nil, fmt.Errorf("%w: The body of your POST request is not well-formed multipart/form-data. (a part has no form field name)", ErrMalformed)
		}
		if name == "file" {
			f.FileName = p.FileName()
			f.File = p
			return f, nil
		}
		left -= int64(len(name))
		if left < 0 {
			return nil, fmt.Errorf("%w: Your POST request fields preceding the upload file were too large", ErrFieldsTooLarge)
		}
		v, err := io.ReadAll(io.LimitReader(p, left+1))
		if err != nil {
			return nil, fmt.Errorf("%w: The body of your POST request is not well-formed multipart/form-data. (%v)", ErrMalformed, err)
		}
		if left -= int64(len(v)); left < 0 {
			return nil, fmt.Errorf("%w: Your POST request fields preceding the upload file were too large", ErrFieldsTooLarge)
		}
		if _, dup := f.Fields[name]; dup {
			return nil, fmt.Errorf("%w: The form field %s appears more than once", ErrInvalidArgument, clip(name))
		}
		f.Fields[name] = string(v)
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Key is the key field with every ${filename} replaced by the file part's
// file name.
func (f *Form) Key() (string, error) {
	k, ok := f.Fields["key"]
	if !ok {
		return "", fmt.Errorf("%w: Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields", ErrInvalidArgument)
	}
	k = strings.ReplaceAll(k, "${filename}", f.FileName)
	if k == "" {
		return "", fmt.Errorf("%w: User key must have a length greater than 0", ErrInvalidArgument)
	}
	return k, nil
}
