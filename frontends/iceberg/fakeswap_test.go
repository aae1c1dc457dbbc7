package iceberg

import (
	"context"
	"fmt"

	"github.com/cairnstore/cairn/catalog"
)

// SwapMetadataLocation answers as catalog.Service does: the fake's
// tables are always at version token "v0"; another token is a lost
// compare-and-swap, a location outside the warehouse a bad request.
func (f *fakeCatalog) SwapMetadataLocation(ctx context.Context, wh string, id catalog.Ident, token, loc string) (catalog.TableResult, error) {
	defer f.mu.Unlock()
	if err := f.enter("SwapMetadataLocation", wh); err != nil {
		return catalog.TableResult{}, err
	}
	meta, ok := f.tables[idKey(wh, id)]
	switch {
	case !ok:
		return catalog.TableResult{}, fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, id)
	case token != "v0":
		return catalog.TableResult{}, fmt.Errorf("%w: version token %q is stale", catalog.ErrCommitFailed, token)
	}
	if _, err := catalog.ObjectKey(wh, loc); err != nil {
		return catalog.TableResult{}, err
	}
	return catalog.TableResult{MetadataLocation: loc, Metadata: meta, ETag: "v1"}, nil
}
