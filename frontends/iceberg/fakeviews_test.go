package iceberg

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairnstore/cairn/catalog"
)

// The view methods of fakeCatalog.

func (f *fakeCatalog) ListViews(ctx context.Context, wh string, ns []string, token string, size int) ([]catalog.Ident, string, error) {
	defer f.mu.Unlock()
	if err := f.enter("ListViews", wh); err != nil {
		return nil, "", err
	}
	return f.listIdents(f.views, wh, ns, token, size)
}

func (f *fakeCatalog) CreateView(ctx context.Context, wh string, ns []string, body []byte) (catalog.ViewResult, error) {
	defer f.mu.Unlock()
	if err := f.enter("CreateView", wh); err != nil {
		return catalog.ViewResult{}, err
	}
	var req struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(body, &req)
	meta := json.RawMessage(`{"format-version":1}`)
	f.views[idKey(wh, catalog.Ident{Namespace: ns, Name: req.Name})] = meta
	return catalog.ViewResult{MetadataLocation: "s3://" + wh + "/v/metadata/00000.metadata.json", Metadata: meta}, nil
}

func (f *fakeCatalog) LoadView(ctx context.Context, wh string, id catalog.Ident) (catalog.ViewResult, error) {
	defer f.mu.Unlock()
	if err := f.enter("LoadView", wh); err != nil {
		return catalog.ViewResult{}, err
	}
	if err := f.needNS(wh, id.Namespace); err != nil { // as catalog.Service answers
		return catalog.ViewResult{}, err
	}
	meta, ok := f.views[idKey(wh, id)]
	if !ok {
		return catalog.ViewResult{}, fmt.Errorf("%w: %s", catalog.ErrNoSuchView, id)
	}
	return catalog.ViewResult{MetadataLocation: "s3://" + wh + "/v/metadata/00000.metadata.json", Metadata: meta}, nil
}

func (f *fakeCatalog) ViewExists(ctx context.Context, wh string, id catalog.Ident) (bool, error) {
	defer f.mu.Unlock()
	if err := f.enter("ViewExists", wh); err != nil {
		return false, err
	}
	_, ok := f.views[idKey(wh, id)]
	return ok, nil
}

func (f *fakeCatalog) ReplaceView(ctx context.Context, wh string, id catalog.Ident, body []byte) (catalog.ViewResult, error) {
	defer f.mu.Unlock()
	if err := f.enter("ReplaceView", wh); err != nil {
		return catalog.ViewResult{}, err
	}
	meta, ok := f.views[idKey(wh, id)]
	if !ok {
		return catalog.ViewResult{}, fmt.Errorf("%w: %s", catalog.ErrNoSuchView, id)
	}
	return catalog.ViewResult{MetadataLocation: "s3://" + wh + "/v/metadata/00001.metadata.json", Metadata: meta}, nil
}

func (f *fakeCatalog) DropView(ctx context.Context, wh string, id catalog.Ident) error {
	defer f.mu.Unlock()
	if err := f.enter("DropView", wh); err != nil {
		return err
	}
	if _, ok := f.views[idKey(wh, id)]; !ok {
		return fmt.Errorf("%w: %s", catalog.ErrNoSuchView, id)
	}
	delete(f.views, idKey(wh, id))
	return nil
}

func (f *fakeCatalog) RenameView(ctx context.Context, wh string, from, to catalog.Ident) error {
	defer f.mu.Unlock()
	if err := f.enter("RenameView", wh); err != nil {
		return err
	}
	meta, ok := f.views[idKey(wh, from)]
	if !ok {
		return fmt.Errorf("%w: %s", catalog.ErrNoSuchView, from)
	}
	delete(f.views, idKey(wh, from))
	f.views[idKey(wh, to)] = meta
	return nil
}
