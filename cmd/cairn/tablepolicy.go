package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/frontends/iceberg"
	"github.com/cairnstore/cairn/frontends/s3/access"
)

// The resource policies of table buckets and tables, enforced on both
// faces of the catalog (the Iceberg REST routes and the S3 Tables API).
//
// A request of the root user is allowed. Any other is allowed when its
// user's own policy allows its catalog action (icebergAuth's mapping onto
// S3 actions: s3:GetObject to read, ...) or when the resource policies of
// its table bucket and, for a request naming a table, of that table
// together allow every S3 Tables action it performs (the face says which:
// frontends/iceberg/tablesactions.go); an explicit Deny in the user's
// policy, or in either resource policy for one of those actions, refuses
// it. Policies are evaluated by the S3 face's engine (package access,
// kind Tables): principals are "*", the account (000000000000 or its
// root ARN: every user), user ARNs arn:aws:iam::000000000000:user/KEY and
// CanonicalUser access keys, as in bucket policies. The resource is the
// table's ARN for a request naming a table (the table bucket's ARN and
// "/table/" when the table does not exist, which bucket/NAME/table/*
// matches), else the table bucket's; such a request also has the
// condition keys s3tables:namespace (the levels joined by ".") and
// s3tables:tableName.

// policyCatalog is what tablesAuth reads of the catalog
// (*catalog.Service).
type policyCatalog interface {
	ResourcePolicies(ctx context.Context, wh string, id *catalog.Ident) (warehouse, table string, err error)
	LoadTable(ctx context.Context, wh string, id catalog.Ident, snapshots string) (catalog.TableResult, error)
}

// tablesAuth is icebergAuth honouring resource policies: the Iceberg
// face's ResourceAuthorizer.
type tablesAuth struct {
	*icebergAuth
	cat policyCatalog
	// arns names table buckets and tables as the S3 Tables face does
	// (its region and account), so that policies match what it answers.
	arns iceberg.S3TablesOptions
	// policies keeps the parsed documents, by warehouse and table key.
	policies *access.Cache
}

var _ iceberg.ResourceAuthorizer = (*tablesAuth)(nil)

func newTablesAuth(a *icebergAuth, cat policyCatalog, arns iceberg.S3TablesOptions) *tablesAuth {
	return &tablesAuth{icebergAuth: a, cat: cat, arns: arns, policies: &access.Cache{}}
}

// checkTablesPolicy is catalog.Options.PolicyCheck: what the evaluator
// cannot parse is refused when it is put.
func checkTablesPolicy(doc []byte) error {
	_, err := access.ParsePolicy(doc, access.Tables)
	return err
}

// AuthorizeRequest implements iceberg.ResourceAuthorizer.
func (a *tablesAuth) AuthorizeRequest(ctx context.Context, r iceberg.AccessRequest) (bool, error) {
	if r.Principal.Root || a.users.IsRoot(r.Principal.AccessKey) {
		return true, nil
	}
	user := a.userEffect(r.Principal, r.Action, r.Warehouse)
	if user == access.Deny {
		return false, nil
	}
	if len(r.TablesActions) == 0 || r.Warehouse == "" {
		return user == access.Allow, nil
	}
	policies, err := a.resourcePolicies(ctx, r.Warehouse, r.Table)
	if err != nil {
		return false, err
	}
	if len(policies) == 0 {
		return user == access.Allow, nil
	}
	res, err := a.resource(ctx, r.Warehouse, r.Table)
	if err != nil {
		return false, err
	}
	all := true
	for _, act := range r.TablesActions {
		q := &access.Request{Principal: r.Principal.AccessKey, Action: act, Resource: res, Values: tableValues(r.Table)}
		eff := access.None
		for _, p := range policies {
			switch p.Eval(q) {
			case access.Deny:
				return false, nil
			case access.Allow:
				eff = access.Allow
			}
		}
		all = all && eff == access.Allow
	}
	return user == access.Allow || all, nil
}

// resourcePolicies are the parsed policies of the warehouse and the
// table (none, one or both).
func (a *tablesAuth) resourcePolicies(ctx context.Context, wh string, id *catalog.Ident) ([]*access.Policy, error) {
	whDoc, tableDoc, err := a.cat.ResourcePolicies(ctx, wh, id)
	if err != nil {
		return nil, fmt.Errorf("reading the resource policies of %s: %w", wh, err)
	}
	var out []*access.Policy
	for _, d := range []struct{ key, doc string }{{wh, whDoc}, {wh + "/" + tableKey(id), tableDoc}} {
		if d.doc == "" {
			continue
		}
		p, err := a.policies.TablesPolicy(d.key, []byte(d.doc))
		if err != nil {
			// Kept before this server's checks: refuse rather than
			// ignore a Deny it may hold.
			return nil, fmt.Errorf("the resource policy of %s cannot be evaluated: %w", d.key, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// tableKey is a table's key in the policy cache ("" for none).
func tableKey(id *catalog.Ident) string {
	if id == nil {
		return ""
	}
	return catalog.TableKey(*id)
}

// resource is the ARN a request is on: its table's, else its table
// bucket's.
func (a *tablesAuth) resource(ctx context.Context, wh string, id *catalog.Ident) (string, error) {
	if id == nil {
		return a.arns.BucketARN(wh), nil
	}
	res, err := a.cat.LoadTable(ctx, wh, *id, "")
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) || errors.Is(err, catalog.ErrNoSuchWarehouse):
		return a.arns.BucketARN(wh) + "/table/", nil
	case err != nil:
		return "", fmt.Errorf("loading table %s for its ARN: %w", id, err)
	}
	var m struct {
		UUID string `json:"table-uuid"`
	}
	if err := json.Unmarshal(res.Metadata, &m); err != nil {
		return "", fmt.Errorf("table %s: reading its table-uuid: %w", id, err)
	}
	return a.arns.TableARN(wh, iceberg.S3TablesTableID(m.UUID, *id)), nil
}

// tableValues are the condition keys of a request naming table id.
func tableValues(id *catalog.Ident) func(key string) ([]string, bool) {
	if id == nil {
		return nil
	}
	return func(key string) ([]string, bool) {
		switch key {
		case "s3tables:namespace":
			return []string{strings.Join(id.Namespace, ".")}, true
		case "s3tables:tablename":
			return []string{id.Name}, true
		}
		return nil, false
	}
}
