package s3

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/cairnstore/cairn/frontends/s3/postform"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// A browser upload (POST object) may carry the file's checksum as a form
// field, x-amz-checksum-<algo>, as a PUT carries it as a header (AWS's
// POST Object form fields list them). The form is no signed request: the
// sigv4 body reader that checks a PUT's checksum never sees the file, so
// it is checked here, as the file streams into the store, and kept as a
// PUT's is.

// formChecksum is the checksum a form declares for its file.
type formChecksum struct {
	algo, value string // algo lowercase; "" when the form names none
	want        []byte // value decoded
}

// isChecksumField reports whether a form field is a checksum value field.
func isChecksumField(name string) bool {
	algo, ok := strings.CutPrefix(name, "x-amz-checksum-")
	return ok && algo != "algorithm" && algo != "type" && algo != "mode"
}

// parseFormChecksum reads the form's checksum fields (lower-case names):
// at most one x-amz-checksum-<algo> of a known algorithm (else
// InvalidRequest); a value that is not base64 of the algorithm's length
// can match no file and is BadDigest, as on PUT.
func parseFormChecksum(fields map[string]string) (formChecksum, error) {
	var c formChecksum
	for name, v := range fields {
		if !isChecksumField(name) {
			continue
		}
		if c.algo != "" {
			return formChecksum{}, fmt.Errorf("%w: more than one x-amz-checksum-* field", sigv4.ErrInvalidChecksum)
		}
		algo := strings.TrimPrefix(name, "x-amz-checksum-")
		h, err := sigv4.NewChecksum(algo)
		if err != nil {
			return formChecksum{}, err
		}
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(raw) != h.Size() {
			return formChecksum{}, fmt.Errorf("%w: %s field %q is not base64 of %d bytes", sigv4.ErrChecksumMismatch, name, truncateField(v), h.Size())
		}
		c = formChecksum{algo: algo, value: v, want: raw}
	}
	return c, nil
}

func truncateField(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// policyFields drops the checksum fields the policy names no condition
// for: a checksum describes the file, as the file field does, and S3
// takes it without one (ceph s3-tests test_post_object_upload_checksum).
func policyFields(p postform.Policy, fields map[string]string) {
	named := map[string]bool{}
	for _, c := range p.Conditions {
		named[c.Field] = true
	}
	for name := range fields {
		if (isChecksumField(name) || name == "x-amz-checksum-algorithm") && !named[name] {
			delete(fields, name)
		}
	}
}

// verify returns r checked against the checksum: a mismatch is the read
// error at the end of the file (sigv4.ErrChecksumMismatch, BadDigest), so
// the store keeps nothing. The zero formChecksum returns r.
func (c formChecksum) verify(r io.Reader) io.Reader {
	if c.algo == "" {
		return r
	}
	h, _ := sigv4.NewChecksum(c.algo) // known: parseFormChecksum made it
	return &checksumReader{r: r, h: h, c: c}
}

// meta keeps the verified checksum as a PUT's (FinalMeta).
func (c formChecksum) meta() func(map[string]string) {
	if c.algo == "" {
		return nil
	}
	return func(m map[string]string) { m["x-amz-checksum-"+c.algo] = c.value }
}

type checksumReader struct {
	r   io.Reader
	h   hash.Hash
	c   formChecksum
	err error
}

func (cr *checksumReader) Read(p []byte) (int, error) {
	if cr.err != nil {
		return 0, cr.err
	}
	n, err := cr.r.Read(p)
	cr.h.Write(p[:n])
	if err == io.EOF {
		if got := cr.h.Sum(nil); !bytes.Equal(got, cr.c.want) {
			err = fmt.Errorf("%w: x-amz-checksum-%s field %s, file %s", sigv4.ErrChecksumMismatch, cr.c.algo, cr.c.value, sigv4.EncodeChecksum(got))
		}
	}
	if err != nil {
		cr.err = err
	}
	return n, err
}
