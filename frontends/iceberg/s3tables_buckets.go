package iceberg

import (
	"net/http"

	"github.com/cairnstore/cairn/catalog"
)

// The table bucket operations. Creating and deleting one is for the root
// user (s3tRoutes); listing shows the table buckets the caller may read.

func (t *s3Tables) bucket(w catalog.Warehouse) s3tBucket {
	return s3tBucket{ARN: t.bucketARN(w.Name), Name: w.Name, OwnerAccountID: t.opt.AccountID,
		CreatedAt: w.Created.UTC(), Type: s3tCustomer}
}

func (t *s3Tables) createTableBucket(req *request) (reply, error) {
	var in s3tCreateBucketRequest
	if err := s3tDecode(req.body, &in); err != nil {
		return reply{}, err
	}
	if in.Name == "" {
		return reply{}, badRequest("name is required: the table bucket's name, which is also the name of its S3 bucket")
	}
	req.warehouse = in.Name
	if err := checkBucketOptions(in.EncryptionConfiguration, in.StorageClassConfiguration, in.Tags); err != nil {
		return reply{}, err
	}
	w, err := t.s.opt.Catalog.CreateWarehouse(req.Context(), in.Name)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: s3tARNResponse{ARN: t.bucketARN(w.Name)}}, nil
}

// checkBucketOptions refuses the settings of CreateTableBucket and
// CreateTable that Cairn does not apply, rather than ignore them.
func checkBucketOptions(encryption []byte, class *s3tStorageClass, tags map[string]string) error {
	switch {
	case jsonPresent(encryption):
		return badRequest("encryptionConfiguration is not supported: leave it out, and set the default encryption of the table bucket's S3 bucket with the S3 API's PutBucketEncryption instead")
	case class != nil && class.StorageClass != "" && class.StorageClass != "STANDARD":
		return badRequest("storage class %q is not supported: leave storageClassConfiguration out, or give STANDARD", clipQuoted(class.StorageClass))
	case len(tags) > 0:
		return badRequest("tags are not supported on table buckets and tables: leave them out")
	}
	return nil
}

// jsonPresent reports whether an optional JSON member was given (not absent,
// not null).
func jsonPresent(raw []byte) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func (t *s3Tables) listTableBuckets(req *request) (reply, error) {
	q := req.URL.Query()
	p, err := parsePaging(q, "maxBuckets")
	if err != nil {
		return reply{}, err
	}
	out := s3tListBucketsResponse{TableBuckets: []s3tBucket{}}
	switch typ := q.Get("type"); typ {
	case "", s3tCustomer:
	case "aws":
		return reply{status: http.StatusOK, body: out}, nil // Cairn has no AWS-managed table buckets
	default:
		return reply{}, badRequest("type %q: give customer or aws, or leave it out", clipQuoted(typ))
	}
	list, err := t.s.opt.Catalog.ListWarehouses(req.Context())
	if err != nil {
		return reply{}, err
	}
	byName := map[string]catalog.Warehouse{}
	var names []string
	for _, w := range list {
		if t.mayRead(req, w.Name) {
			byName[w.Name] = w
			names = append(names, w.Name)
		}
	}
	names, out.ContinuationToken = p.page(names, func(k string) string { return k })
	for _, n := range names {
		out.TableBuckets = append(out.TableBuckets, t.bucket(byName[n]))
	}
	return reply{status: http.StatusOK, body: out}, nil
}

// mayRead reports whether the caller may read table bucket wh.
func (t *s3Tables) mayRead(req *request, wh string) bool {
	a := t.s.opt.Authorizer
	return req.principal.Root || a == nil || a.Authorize(req.principal, ActionRead, wh)
}

func (t *s3Tables) getTableBucket(req *request) (reply, error) {
	w, err := t.s.opt.Catalog.GetWarehouse(req.Context(), req.warehouse)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: t.bucket(w)}, nil
}

func (t *s3Tables) deleteTableBucket(req *request) (reply, error) {
	if err := t.s.opt.Catalog.DeleteWarehouse(req.Context(), req.warehouse); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}
