package maintain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/cairnstore/cairn/catalog"
)

// catalogIO is iceberg-go's table.CatalogIO over the catalog Service, for
// one warehouse: a maintenance job's commit is an ordinary catalog commit
// (requirements checked, a new metadata file, the pointer's
// compare-and-swap), so it conflicts, retries and is fenced as any
// writer's.
type catalogIO struct {
	r  *Runner
	wh string
}

// ident converts iceberg-go's identifier (namespace levels, then name).
func ident(id table.Identifier) (catalog.Ident, error) {
	if len(id) < 2 {
		return catalog.Ident{}, fmt.Errorf("%w: table identifier %q has no namespace", catalog.ErrBadRequest, id)
	}
	return catalog.Ident{Namespace: append([]string(nil), id[:len(id)-1]...), Name: id[len(id)-1]}, nil
}

func tableIdent(id catalog.Ident) table.Identifier {
	return append(append(table.Identifier(nil), id.Namespace...), id.Name)
}

// LoadTable implements table.CatalogIO.
func (c *catalogIO) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	cid, err := ident(id)
	if err != nil {
		return nil, err
	}
	return c.r.loadTable(ctx, c.wh, cid)
}

// CommitTable implements table.CatalogIO. A lost compare-and-swap wraps
// table.ErrCommitFailed, which iceberg-go's transactions refresh and
// replay.
func (c *catalogIO) CommitTable(ctx context.Context, id table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	cid, err := ident(id)
	if err != nil {
		return nil, "", err
	}
	if reqs == nil {
		reqs = []table.Requirement{}
	}
	body, err := json.Marshal(struct {
		Requirements []table.Requirement `json:"requirements"`
		Updates      []table.Update      `json:"updates"`
	}{reqs, updates})
	if err != nil {
		return nil, "", fmt.Errorf("maintain: encode commit of %s: %w", cid, err)
	}
	res, err := c.r.svc.CommitTable(ctx, c.wh, cid, body)
	if errors.Is(err, catalog.ErrCommitFailed) {
		return nil, "", fmt.Errorf("%w: %w", table.ErrCommitFailed, err)
	}
	if err != nil {
		return nil, "", err
	}
	md, err := table.ParseMetadataBytes(res.Metadata)
	if err != nil {
		return nil, "", fmt.Errorf("maintain: metadata of %s after commit: %w", cid, err)
	}
	return md, res.MetadataLocation, nil
}

// loadTable loads a table as iceberg-go's, reading and writing its files
// in the warehouse's bucket.
func (r *Runner) loadTable(ctx context.Context, wh string, id catalog.Ident) (*table.Table, error) {
	res, err := r.svc.LoadTable(ctx, wh, id, "")
	if err != nil {
		return nil, err
	}
	md, err := table.ParseMetadataBytes(res.Metadata)
	if err != nil {
		return nil, fmt.Errorf("maintain: metadata of %s: %w", id, err)
	}
	fsys := func(ctx context.Context) (iceio.IO, error) {
		return &fileIO{ctx: ctx, store: r.store, wh: wh}, nil
	}
	return table.New(tableIdent(id), md, res.MetadataLocation, fsys, &catalogIO{r: r, wh: wh}), nil
}
