package s3

import (
	"encoding/base64"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
	"github.com/cairnstore/cairn/objstore"
)

// A multipart upload's checksum (x-amz-checksum-algorithm and
// x-amz-checksum-type on CreateMultipartUpload) is kept in the upload's,
// then the object's, Attrs.Sys[sysChecksum] as "<algo> <TYPE>" (algo
// lowercase, as in the header names). Parts keep their checksum in the
// store's part record as "<algo>:<base64>"; the completed object keeps
// the whole object's in its x-amz-checksum-<algo> metadata (composite:
// "<base64>-<parts>") and its parts', in order and space-separated, in
// Sys[sysPartSums], for GetObjectAttributes.
const (
	sysChecksum = "s3.checksum"
	sysPartSums = "s3.partsums"
)

// Checksum types.
const (
	checksumComposite  = "COMPOSITE"
	checksumFullObject = "FULL_OBJECT"
)

// uploadChecksum is a multipart upload's checksum algorithm and type.
type uploadChecksum struct{ algo, typ string }

func (c uploadChecksum) String() string { return c.algo + " " + c.typ }

// parseUploadChecksum reads CreateMultipartUpload's checksum headers.
func parseUploadChecksum(h http.Header) (uploadChecksum, error) {
	algo := strings.ToLower(h.Get("x-amz-checksum-algorithm"))
	typ := strings.ToUpper(h.Get("x-amz-checksum-type"))
	if algo == "" {
		if typ != "" {
			return uploadChecksum{}, apiErr("InvalidRequest", 400, "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
		}
		return uploadChecksum{}, nil
	}
	if _, err := sigv4.NewChecksum(algo); err != nil {
		return uploadChecksum{}, apiErr("InvalidRequest", 400, "Checksum algorithm %q is not supported: use CRC32, CRC32C, CRC64NVME, SHA1 or SHA256.", h.Get("x-amz-checksum-algorithm"))
	}
	switch typ {
	case "":
		typ = checksumComposite
		if algo == sigv4.ChecksumCRC64NVME {
			typ = checksumFullObject
		}
	case checksumComposite:
		if algo == sigv4.ChecksumCRC64NVME {
			return uploadChecksum{}, apiErr("InvalidRequest", 400, "The COMPOSITE checksum type cannot be used with the crc64nvme checksum algorithm.")
		}
	case checksumFullObject:
		if !sigv4.IsCRC(algo) {
			return uploadChecksum{}, apiErr("InvalidRequest", 400, "The FULL_OBJECT checksum type cannot be used with the %s checksum algorithm.", algo)
		}
	default:
		return uploadChecksum{}, apiErr("InvalidRequest", 400, "Value for x-amz-checksum-type header is invalid: use COMPOSITE or FULL_OBJECT.")
	}
	return uploadChecksum{algo: algo, typ: typ}, nil
}

// decodeUploadChecksum reads what uploadChecksum.String wrote; the zero
// value when the record is absent or unreadable (the upload then has no
// checksum, which is what it had when written by an older server).
func decodeUploadChecksum(sys map[string]string) uploadChecksum {
	algo, typ, ok := strings.Cut(sys[sysChecksum], " ")
	if !ok {
		return uploadChecksum{}
	}
	return uploadChecksum{algo: algo, typ: typ}
}

func checksumHeaders(h http.Header, c uploadChecksum) {
	if c.algo != "" {
		h.Set("x-amz-checksum-algorithm", strings.ToUpper(c.algo))
		h.Set("x-amz-checksum-type", c.typ)
	}
}

// partChecksum prepares an UploadPart's checksum: the one the client sent,
// or, when the upload has an algorithm and the client sent none, one Cairn
// computes over the body (returned as the body to read instead). A part
// checksum of another algorithm than the upload's is refused.
func partChecksum(req *request, body io.Reader, up uploadChecksum) (io.Reader, func() string, error) {
	declared := ""
	if req.body != nil {
		declared = req.body.DeclaredChecksum()
	}
	if up.algo != "" && declared != "" && declared != up.algo {
		return nil, nil, apiErr("InvalidRequest", 400, "Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: %s", up.algo, declared)
	}
	if declared != "" || up.algo == "" {
		return body, func() string {
			if req.body == nil {
				return ""
			}
			if algo, v, ok := req.body.Checksum(); ok {
				return algo + ":" + v
			}
			return ""
		}, nil
	}
	h, err := sigv4.NewChecksum(up.algo)
	if err != nil {
		return nil, nil, err
	}
	return io.TeeReader(body, h), func() string { return up.algo + ":" + sigv4.EncodeChecksum(h.Sum(nil)) }, nil
}

// splitPartSum splits a kept part checksum into algorithm and value.
func splitPartSum(s string) (algo, value string) {
	algo, value, _ = strings.Cut(s, ":")
	return algo, value
}

// completeChecksum returns the Completing hook of a complete: it computes
// the object's checksum from its parts' (composite: the checksum of the
// concatenated part checksums; full object: their CRCs combined), checks
// it against the one the client sent for the whole object, if any, and
// keeps it. plain gives a part's plaintext size from its stored one (they
// differ for encrypted parts). out receives the value for the response.
func completeChecksum(up uploadChecksum, plain func(int64) int64, clientAlgo, clientSum string, out *string) func([]objstore.PartInfo, map[string]string, *objstore.Attrs) error {
	if up.algo == "" {
		return nil
	}
	return func(parts []objstore.PartInfo, m map[string]string, a *objstore.Attrs) error {
		var (
			acc  []byte
			comp hash.Hash
			sums = make([]string, 0, len(parts))
		)
		if up.typ == checksumComposite {
			comp, _ = sigv4.NewChecksum(up.algo)
		}
		for _, p := range parts {
			algo, v := splitPartSum(p.Checksum)
			if algo != up.algo {
				return apiErr("InvalidRequest", 400, "The upload was created using a %s checksum, and part %d has none (copied parts have none): upload it again with UploadPart.", up.algo, p.Number)
			}
			raw, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return fmt.Errorf("part %d: kept checksum %q: %w", p.Number, v, err)
			}
			sums = append(sums, v)
			switch {
			case comp != nil:
				comp.Write(raw)
			case acc == nil:
				acc = raw
			default:
				if acc, err = sigv4.CombineChecksums(up.algo, acc, raw, plain(p.Size)); err != nil {
					return err
				}
			}
		}
		value := ""
		if comp != nil {
			value = sigv4.EncodeChecksum(comp.Sum(nil)) + "-" + strconv.Itoa(len(parts))
		} else {
			value = sigv4.EncodeChecksum(acc)
		}
		if clientSum != "" && clientAlgo == up.algo && strings.TrimSuffix(clientSum, "-"+strconv.Itoa(len(parts))) != strings.TrimSuffix(value, "-"+strconv.Itoa(len(parts))) {
			return apiErr("BadDigest", 400, "The %s you specified for the object did not match what was computed from its parts.", "x-amz-checksum-"+up.algo)
		}
		m["x-amz-checksum-"+up.algo] = value
		setSys(a, sysChecksum, up.String())
		setSys(a, sysPartSums, strings.Join(sums, " "))
		*out = value
		return nil
	}
}

// checkCompleteType checks CompleteMultipartUpload's x-amz-checksum-type,
// when sent, against the upload's: AWS answers a mismatch BadDigest
// (CompleteMultipartUpload, ChecksumType).
func checkCompleteType(h http.Header, up uploadChecksum) error {
	t := strings.ToUpper(h.Get("x-amz-checksum-type"))
	if t == "" || up.algo == "" || t == up.typ {
		return nil
	}
	return apiErr("BadDigest", 400, "The upload was created using the %s checksum type; the complete request names %s.", up.typ, truncateField(t))
}

// checksumType is the x-amz-checksum-type of an object's checksum.
func checksumType(info objstore.ObjectInfo) string {
	if c := decodeUploadChecksum(info.Attrs.Sys); c.typ != "" {
		return c.typ
	}
	return checksumFullObject
}

// objectChecksum is GetObjectAttributes' Checksum of an object: nil when
// it has none.
func objectChecksum(info objstore.ObjectInfo) *objectChecksumXML {
	for k, v := range info.Meta {
		if algo, ok := strings.CutPrefix(k, "x-amz-checksum-"); ok {
			out := &objectChecksumXML{ChecksumType: checksumType(info)}
			out.setChecksum(algo, v)
			return out
		}
	}
	return nil
}

// objectPartsOf is GetObjectAttributes' ObjectParts of a multipart
// object, paged by x-amz-max-parts and x-amz-part-number-marker. Every
// part is listed (number and plaintext size), with its checksum when the
// upload kept one. AWS documents that general purpose buckets list parts
// only for objects with an additional checksum, but it now gives every
// new object one (CRC64NVME by default), so parts are always listed there
// too; Cairn adds no default checksum, so it lists them regardless (ceph
// s3-tests test_get_multipart_object_attributes and its paginated and
// single-part variants).
func objectPartsOf(req *request, info objstore.ObjectInfo) (*objectParts, error) {
	out := &objectParts{TotalPartsCount: info.PartsCount, MaxParts: 1000}
	if v := req.Header.Get("x-amz-max-parts"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, apiErr("InvalidArgument", 400, "x-amz-max-parts must be an integer between 0 and 1000.")
		}
		out.MaxParts = min(n, 1000)
	}
	if v := req.Header.Get("x-amz-part-number-marker"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, apiErr("InvalidArgument", 400, "x-amz-part-number-marker must be a non-negative integer.")
		}
		out.PartNumberMarker = n
	}
	sums := strings.Fields(info.Attrs.Sys[sysPartSums])
	if len(sums) != len(info.PartSizes) {
		sums = nil // none kept (or an unreadable record): sizes only
	}
	algo := decodeUploadChecksum(info.Attrs.Sys).algo
	plain := ssePartSizer(info.Attrs)
	for i := out.PartNumberMarker; i < len(info.PartSizes); i++ {
		if len(out.Parts) == out.MaxParts {
			out.IsTruncated = true
			break
		}
		it := objectPartItem{PartNumber: i + 1, Size: plain(info.PartSizes[i])}
		if sums != nil {
			it.setChecksum(algo, sums[i])
		}
		out.Parts = append(out.Parts, it)
		out.NextPartNumberMarker = i + 1
	}
	return out, nil
}
