package iceberg

import (
	"net/http"

	"github.com/cairnstore/cairn/catalog"
)

// Resource policies: a table bucket's (PutTableBucketPolicy, ...) and a
// table's (PutTablePolicy, ...), kept by the catalog, which checks a
// document against the ARN the face gives its table bucket or table (its
// resources must name them). Reading, putting and deleting one needs
// write access: the route's action, or the operation's s3tables: action
// granted by a resource policy. The Authorizer enforces them
// (ResourceAuthorizer); the face only serves them.

// s3tPutPolicyRequest is the body of PutTableBucketPolicy and
// PutTablePolicy.
type s3tPutPolicyRequest struct {
	ResourcePolicy string `json:"resourcePolicy"`
}

// s3tPolicyResponse is GetTableBucketPolicyResponse and
// GetTablePolicyResponse.
type s3tPolicyResponse struct {
	ResourcePolicy string `json:"resourcePolicy"`
}

// policyTarget is the table the path names (nil for a table bucket's
// routes) and the ARN of the table bucket or table.
func (t *s3Tables) policyTarget(req *request) (*catalog.Ident, string, error) {
	if req.param("name") == "" {
		return nil, t.bucketARN(req.warehouse), nil
	}
	id, err := pathTable(req)
	if err != nil {
		return nil, "", err
	}
	l, err := t.load(req, id)
	if err != nil {
		return nil, "", err
	}
	return &id, t.tableARN(l.wh, l.tableID()), nil
}

// putPolicy serves PutTableBucketPolicy and PutTablePolicy: 200 with no
// body, as the service model has it.
func (t *s3Tables) putPolicy(req *request) (reply, error) {
	var in s3tPutPolicyRequest
	if err := s3tDecode(req.body, &in); err != nil {
		return reply{}, err
	}
	if in.ResourcePolicy == "" {
		return reply{}, badRequest(`resourcePolicy is required: {"resourcePolicy": "{\"Version\": \"2012-10-17\", \"Statement\": [...]}"}`)
	}
	id, arn, err := t.policyTarget(req)
	if err != nil {
		return reply{}, err
	}
	if err := t.s.opt.Catalog.SetResourcePolicy(req.Context(), req.warehouse, id, arn, in.ResourcePolicy); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK}, nil
}

// getPolicy serves GetTableBucketPolicy and GetTablePolicy; a table
// bucket or table without one answers NotFoundException.
func (t *s3Tables) getPolicy(req *request) (reply, error) {
	id, _, err := t.policyTarget(req)
	if err != nil {
		return reply{}, err
	}
	doc, err := t.s.opt.Catalog.ResourcePolicy(req.Context(), req.warehouse, id)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: s3tPolicyResponse{ResourcePolicy: doc}}, nil
}

// deletePolicy serves DeleteTableBucketPolicy and DeleteTablePolicy: 204,
// also when there was none (as S3's DeleteBucketPolicy).
func (t *s3Tables) deletePolicy(req *request) (reply, error) {
	id, _, err := t.policyTarget(req)
	if err != nil {
		return reply{}, err
	}
	if err := t.s.opt.Catalog.DeleteResourcePolicy(req.Context(), req.warehouse, id); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}
