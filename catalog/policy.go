package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Resource policies: one per warehouse (S3 Tables' table bucket policy)
// and one per table (its table policy), each an IAM-style JSON document
// kept as it was put, in a KindPolicy record (key policyKey). The catalog
// stores and validates them (policycheck.go); it never evaluates them:
// whoever authorizes requests reads them with ResourcePolicies.

// MaxPolicySize is the largest resource policy document, in bytes (S3
// Tables' limit on resourcePolicy).
const MaxPolicySize = 20480

// policyRec is a KindPolicy record.
type policyRec struct {
	Document string    `json:"document"`
	Updated  time.Time `json:"updated"`
}

// warehousePolicyKey is the warehouse's record; table keys always hold
// tableSep, so it names no table.
const warehousePolicyKey = "warehouse"

func policyKey(id *Ident) string {
	if id == nil {
		return warehousePolicyKey
	}
	return identKey(*id)
}

// readPolicy reads a policy record: "" when there is none.
func (s *Service) readPolicy(ctx context.Context, wh string, id *Ident) (string, error) {
	var rec policyRec
	_, err := s.getJSON(ctx, wh, KindPolicy, policyKey(id), &rec)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("catalog: reading the resource policy of %s: %w", policyTarget(wh, id), err)
	}
	return rec.Document, nil
}

// policyTarget names a policy's warehouse or table in messages.
func policyTarget(wh string, id *Ident) string {
	if id == nil {
		return "table bucket " + wh
	}
	return "table " + id.String() + " of table bucket " + wh
}

// ResourcePolicy implements Catalog.
func (s *Service) ResourcePolicy(ctx context.Context, wh string, id *Ident) (string, error) {
	if err := s.checkTarget(ctx, wh, id); err != nil {
		return "", err
	}
	doc, err := s.readPolicy(ctx, wh, id)
	if err != nil {
		return "", err
	}
	if doc == "" {
		return "", fmt.Errorf("%w: %s has no resource policy", ErrNoSuchPolicy, policyTarget(wh, id))
	}
	return doc, nil
}

// SetResourcePolicy implements Catalog.
func (s *Service) SetResourcePolicy(ctx context.Context, wh string, id *Ident, arn, doc string) error {
	if err := s.checkPolicy(wh, id, arn, doc); err != nil {
		return err
	}
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	if err := s.checkTarget(ctx, wh, id); err != nil {
		return err
	}
	_, err = s.putJSON(ctx, wh, KindPolicy, policyKey(id), policyRec{Document: doc, Updated: s.now().UTC()}, AnyVersion)
	if err != nil {
		return fmt.Errorf("catalog: keeping the resource policy of %s: %w", policyTarget(wh, id), err)
	}
	return nil
}

// DeleteResourcePolicy implements Catalog.
func (s *Service) DeleteResourcePolicy(ctx context.Context, wh string, id *Ident) error {
	release, err := s.enter(ctx, wh)
	if err != nil {
		return err
	}
	defer release()
	if err := s.checkTarget(ctx, wh, id); err != nil {
		return err
	}
	if err := s.b.Delete(ctx, wh, KindPolicy, policyKey(id), AnyVersion); err != nil {
		return fmt.Errorf("catalog: forgetting the resource policy of %s: %w", policyTarget(wh, id), err)
	}
	return nil
}

// ResourcePolicies implements Catalog.
func (s *Service) ResourcePolicies(ctx context.Context, wh string, id *Ident) (warehouse, table string, err error) {
	if wh == "" {
		return "", "", nil
	}
	if warehouse, err = s.readPolicy(ctx, wh, nil); err != nil || id == nil {
		return warehouse, "", err
	}
	if validIdent(*id) != nil {
		return warehouse, "", nil // names no table, so no table's policy
	}
	table, err = s.readPolicy(ctx, wh, id)
	return warehouse, table, err
}
