package maintain

import (
	"context"

	"github.com/apache/iceberg-go/table"

	"github.com/cairnstore/cairn/catalog"
)

// LoadTable exposes loadTable to the tests.
func (r *Runner) LoadTable(ctx context.Context, wh string, id catalog.Ident) (*table.Table, error) {
	return r.loadTable(ctx, wh, id)
}
