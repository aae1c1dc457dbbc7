package iceberg

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairnstore/cairn/catalog"
)

// fakePolicy is a policy the fake keeps, and the ARN it was put with.
type fakePolicy struct {
	doc, arn string
}

// policyKey is the fake's key of a warehouse's (id nil) or a table's
// resource policy.
func policyKey(wh string, id *catalog.Ident) string { return maintKey(wh, id) }

// ResourcePolicy answers as catalog.Service does: ErrNoSuchTable for an
// unknown table, ErrNoSuchPolicy when there is none.
func (f *fakeCatalog) ResourcePolicy(ctx context.Context, wh string, id *catalog.Ident) (string, error) {
	defer f.mu.Unlock()
	if err := f.enter("ResourcePolicy", wh); err != nil {
		return "", err
	}
	if err := f.needTarget(wh, id); err != nil {
		return "", err
	}
	p, ok := f.policies[policyKey(wh, id)]
	if !ok {
		return "", fmt.Errorf("%w: %s", catalog.ErrNoSuchPolicy, policyKey(wh, id))
	}
	return p.doc, nil
}

// SetResourcePolicy keeps doc and the ARN; like catalog.Service it
// refuses, with ErrBadRequest, a document larger than
// catalog.MaxPolicySize or that is not a JSON object with a Statement.
func (f *fakeCatalog) SetResourcePolicy(ctx context.Context, wh string, id *catalog.Ident, arn, doc string) error {
	defer f.mu.Unlock()
	if err := f.enter("SetResourcePolicy", wh); err != nil {
		return err
	}
	var d struct {
		Statement json.RawMessage
	}
	if len(doc) > catalog.MaxPolicySize || json.Unmarshal([]byte(doc), &d) != nil || d.Statement == nil {
		return fmt.Errorf("%w: malformed resource policy", catalog.ErrBadRequest)
	}
	if err := f.needTarget(wh, id); err != nil {
		return err
	}
	f.policies[policyKey(wh, id)] = fakePolicy{doc: doc, arn: arn}
	return nil
}

// DeleteResourcePolicy forgets the policy; none is no error.
func (f *fakeCatalog) DeleteResourcePolicy(ctx context.Context, wh string, id *catalog.Ident) error {
	defer f.mu.Unlock()
	if err := f.enter("DeleteResourcePolicy", wh); err != nil {
		return err
	}
	if err := f.needTarget(wh, id); err != nil {
		return err
	}
	delete(f.policies, policyKey(wh, id))
	return nil
}
