package s3

import (
	"encoding/xml"
	"net/http"

	"github.com/cairnstore/cairn/frontends/s3/sse"
)

// Bucket default encryption: Put/Get/DeleteBucketEncryption keep the
// bucket's ServerSideEncryptionConfiguration, as the client sent it
// re-encoded, in Config[cfgEncryption]. Writes without encryption headers
// (PUT, copy, CreateMultipartUpload) are encrypted as its one rule says.
// Object encryption itself is in sseheaders.go (the request headers),
// sseobject.go (PUT, GET, HEAD, copy) and ssemultipart.go (uploads); the
// crypto and formats are package sse's.

// sseConfiguration is the ServerSideEncryptionConfiguration document.
type sseConfiguration struct {
	XMLName xml.Name  `xml:"ServerSideEncryptionConfiguration"`
	NS      string    `xml:"xmlns,attr,omitempty"`
	Rules   []sseRule `xml:"Rule"`
}

type sseRule struct {
	Default *struct {
		SSEAlgorithm   string `xml:"SSEAlgorithm"`
		KMSMasterKeyID string `xml:"KMSMasterKeyID,omitempty"`
	} `xml:"ApplyServerSideEncryptionByDefault"`
	BucketKeyEnabled *bool `xml:"BucketKeyEnabled"`
}

var errNoSSEConfig = &APIError{"ServerSideEncryptionConfigurationNotFoundError", http.StatusNotFound, "The server side encryption configuration was not found."}

// parseSSEConfig reads and checks a ServerSideEncryptionConfiguration:
// one rule with an algorithm (AES256 or aws:kms), a KMS key only with
// aws:kms, naming a key of the ring.
func (s *Server) parseSSEConfig(raw []byte) (sseConfiguration, error) {
	var c sseConfiguration
	if err := decodeXMLBytes(raw, &c); err != nil {
		return c, err
	}
	if len(c.Rules) != 1 || c.Rules[0].Default == nil {
		return c, errMalformedXML
	}
	d := c.Rules[0].Default
	switch d.SSEAlgorithm {
	case "AES256":
		if d.KMSMasterKeyID != "" {
			return c, apiErr("InvalidArgument", 400, "a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms")
		}
	case "aws:kms":
		if d.KMSMasterKeyID != "" {
			if name := kmsKeyName(d.KMSMasterKeyID); !s.opt.SSE.HasKMSKey(name) {
				return c, kmsNotFound(d.KMSMasterKeyID)
			}
		}
	default:
		return c, errMalformedXML
	}
	c.NS = s3NS
	return c, nil
}

func (s *Server) getBucketEncryption(w *recorder, req *request) error {
	b, err := s.bucketOf(req)
	if err != nil {
		return err
	}
	raw := b.Config[cfgEncryption]
	if len(raw) == 0 {
		return errNoSSEConfig
	}
	c, err := s.parseSSEConfig(raw)
	if err != nil {
		return err
	}
	return writeXML(w, c)
}

func (s *Server) putBucketEncryption(w *recorder, req *request) error {
	if _, err := s.bucketOf(req); err != nil {
		return err
	}
	var c sseConfiguration
	if err := decodeXML(req, &c, false); err != nil {
		return err
	}
	raw, err := xml.Marshal(c)
	if err != nil {
		return err
	}
	if c, err = s.parseSSEConfig(raw); err != nil {
		return err
	}
	if raw, err = xml.Marshal(c); err != nil {
		return err
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgEncryption, raw); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucketEncryption(w *recorder, req *request) error {
	if _, err := s.bucketOf(req); err != nil {
		return err
	}
	if err := s.store.SetBucketConfig(req.Context(), req.bucket, cfgEncryption, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// bucketDefaultSSE is the encryption the bucket's configuration gives a
// write without encryption headers (Kind "" when none).
func (s *Server) bucketDefaultSSE(req *request) (sseRequest, error) {
	b, err := s.bucketOf(req)
	if err != nil {
		return sseRequest{}, err
	}
	raw := b.Config[cfgEncryption]
	if len(raw) == 0 {
		return sseRequest{}, nil
	}
	c, err := s.parseSSEConfig(raw)
	if err != nil {
		return sseRequest{}, err
	}
	r := c.Rules[0]
	out := sseRequest{fromDefault: true}
	switch r.Default.SSEAlgorithm {
	case "AES256":
		out.kind = sse.KindS3
	case "aws:kms":
		out.kind, out.kmsKeyID = sse.KindKMS, r.Default.KMSMasterKeyID
		out.bucketKey = r.BucketKeyEnabled != nil && *r.BucketKeyEnabled
	}
	return out, nil
}
