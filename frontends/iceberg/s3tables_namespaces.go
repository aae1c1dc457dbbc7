package iceberg

import (
	"net/http"

	"github.com/cairnstore/cairn/catalog"
)

// The namespace operations. S3 Tables namespaces have one level: these
// list, create and drop the top-level namespaces of a table bucket
// (namespaces nested under them through the Iceberg REST face are not
// listed). The catalog keeps no creation time a client can read for a
// namespace, so createdAt is its table bucket's.

// oneLevel is the namespace a path, query or body names.
func oneLevel(what, ns string) ([]string, error) {
	if err := checkName(ns); err != nil {
		return nil, badRequest("%s %q: give a non-empty name without control characters", what, clipQuoted(ns))
	}
	return []string{ns}, nil
}

func (t *s3Tables) namespace(ns []string, w catalog.Warehouse) s3tNamespace {
	return s3tNamespace{Namespace: ns, CreatedAt: w.Created.UTC(), CreatedBy: t.opt.AccountID, OwnerAccountID: t.opt.AccountID}
}

func (t *s3Tables) createNamespace(req *request) (reply, error) {
	var in s3tCreateNamespaceRequest
	if err := s3tDecode(req.body, &in); err != nil {
		return reply{}, err
	}
	if len(in.Namespace) != 1 {
		return reply{}, badRequest("namespace must list exactly one name (S3 Tables namespaces have one level), not %d", len(in.Namespace))
	}
	ns, err := oneLevel("namespace", in.Namespace[0])
	if err != nil {
		return reply{}, err
	}
	if err := t.s.opt.Catalog.CreateNamespace(req.Context(), req.warehouse, ns, nil); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: s3tCreateNamespaceResponse{TableBucketARN: t.bucketARN(req.warehouse), Namespace: ns}}, nil
}

func (t *s3Tables) getNamespace(req *request) (reply, error) {
	ns, err := oneLevel("namespace", req.param("namespace"))
	if err != nil {
		return reply{}, err
	}
	ctx := req.Context()
	w, err := t.s.opt.Catalog.GetWarehouse(ctx, req.warehouse)
	if err != nil {
		return reply{}, err
	}
	if _, err := t.s.opt.Catalog.LoadNamespace(ctx, req.warehouse, ns); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: t.namespace(ns, w)}, nil
}

func (t *s3Tables) listNamespaces(req *request) (reply, error) {
	p, err := parsePaging(req.URL.Query(), "maxNamespaces")
	if err != nil {
		return reply{}, err
	}
	ctx := req.Context()
	w, err := t.s.opt.Catalog.GetWarehouse(ctx, req.warehouse)
	if err != nil {
		return reply{}, err
	}
	names, err := t.topNamespaces(req)
	if err != nil {
		return reply{}, err
	}
	out := s3tListNamespacesResponse{Namespaces: []s3tNamespace{}}
	names, out.ContinuationToken = p.page(names, func(k string) string { return k })
	for _, n := range names {
		out.Namespaces = append(out.Namespaces, t.namespace([]string{n}, w))
	}
	return reply{status: http.StatusOK, body: out}, nil
}

// topNamespaces lists the names of the table bucket's top-level
// namespaces.
func (t *s3Tables) topNamespaces(req *request) ([]string, error) {
	list, _, err := t.s.opt.Catalog.ListNamespaces(req.Context(), req.warehouse, nil, "", 0)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list))
	for _, ns := range list {
		if len(ns) == 1 {
			names = append(names, ns[0])
		}
	}
	return names, nil
}

func (t *s3Tables) deleteNamespace(req *request) (reply, error) {
	ns, err := oneLevel("namespace", req.param("namespace"))
	if err != nil {
		return reply{}, err
	}
	if err := t.s.opt.Catalog.DropNamespace(req.Context(), req.warehouse, ns); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}
