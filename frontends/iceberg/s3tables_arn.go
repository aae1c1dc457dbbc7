package iceberg

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/cairnstore/cairn/catalog"
)

// S3 Tables names table buckets and tables by ARN:
//
//	arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME
//	arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME/table/TABLE-ID
//
// TABLE-ID is the table's table-uuid. ARNs arrive percent-encoded in one
// path segment (the SDKs encode ":" and "/"); splitPath decodes them.
// The region and account of an ARN are not checked: every table bucket
// is in the one account, and a client may have built the ARN from its own
// settings.

// s3tARN is a parsed S3 Tables ARN.
type s3tARN struct {
	bucket string
	table  string // the table id; "" for a table bucket's ARN
}

// bucketARN is the ARN of table bucket name.
func (t *s3Tables) bucketARN(name string) string { return t.opt.BucketARN(name) }

// tableARN is the ARN of the table tableID of table bucket name.
func (t *s3Tables) tableARN(bucket, tableID string) string { return t.opt.TableARN(bucket, tableID) }

// withDefaults fills the fields left empty.
func (o S3TablesOptions) withDefaults() S3TablesOptions {
	if o.Region == "" {
		o.Region = DefaultS3TablesRegion
	}
	if o.AccountID == "" {
		o.AccountID = DefaultS3TablesAccount
	}
	return o
}

// BucketARN is the ARN the face gives table bucket name, which resource
// policies name it by.
func (o S3TablesOptions) BucketARN(name string) string {
	o = o.withDefaults()
	return "arn:aws:s3tables:" + o.Region + ":" + o.AccountID + ":bucket/" + name
}

// TableARN is the ARN the face gives the table tableID (S3TablesTableID)
// of table bucket name.
func (o S3TablesOptions) TableARN(bucket, tableID string) string {
	return o.BucketARN(bucket) + "/table/" + tableID
}

// parseARN parses a table bucket's or a table's ARN. Errors are 400s
// saying what an ARN looks like.
func parseARN(s string) (s3tARN, error) {
	bad := func(why string) (s3tARN, error) {
		return s3tARN{}, badRequest("%q is not an S3 Tables ARN (%s): use arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME "+
			"for a table bucket, and that followed by /table/TABLE-ID for a table, as CreateTableBucket, ListTableBuckets and GetTable answer them",
			clipQuoted(s), why)
	}
	f := strings.SplitN(s, ":", 6)
	switch {
	case len(f) != 6:
		return bad("it has not six fields separated by ':'")
	case f[0] != "arn":
		return bad("it does not start with arn:")
	case f[1] != "aws" && !strings.HasPrefix(f[1], "aws-"):
		return bad("its partition is not aws")
	case f[2] != "s3tables":
		return bad("its service is not s3tables")
	}
	name, ok := strings.CutPrefix(f[5], "bucket/")
	if !ok {
		return bad("its resource does not start with bucket/")
	}
	name, rest, isTable := strings.Cut(name, "/")
	a := s3tARN{bucket: name}
	if isTable {
		id, ok := strings.CutPrefix(rest, "table/")
		if !ok || id == "" || strings.Contains(id, "/") {
			return bad("what follows the bucket name is not /table/TABLE-ID")
		}
		a.table = id
	}
	if err := checkName(name); err != nil {
		return bad("its bucket name is empty or holds control characters")
	}
	return a, nil
}

// parseBucketARN returns the table bucket a table bucket's ARN names.
func parseBucketARN(s string) (string, error) {
	a, err := parseARN(s)
	if err != nil {
		return "", err
	}
	if a.table != "" {
		return "", badRequest("%q is a table's ARN: this operation takes the table bucket's (arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME)", clipQuoted(s))
	}
	return a.bucket, nil
}

// clipQuoted bounds a value quoted back in a message.
func clipQuoted(s string) string {
	const limit = 300
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}

// S3TablesTableID is the id in the ARN of table id whose metadata has
// table-uuid uuid ("" when it has none): see s3tTableID.
func S3TablesTableID(uuid string, id catalog.Ident) string {
	return s3tTableID(uuid, strings.Join(id.Namespace, UnitSeparator), id.Name)
}

// s3tTableID is the id of a table in its ARN: its table-uuid, or for
// metadata without one (format version 1 may lack it) a digest of its
// identifier, which stays the same until the table is renamed.
func s3tTableID(uuid string, ns, name string) string {
	if uuid != "" {
		return uuid
	}
	sum := sha256.Sum256([]byte(ns + UnitSeparator + name))
	return hex.EncodeToString(sum[:16])
}
