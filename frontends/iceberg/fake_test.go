package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

// fakeCatalog is an in-memory Catalog for handler tests. Paging: the token
// is the last key returned.
type fakeCatalog struct {
	mu         sync.Mutex
	warehouses map[string]bool
	namespaces map[string]map[string]string // wh + "/" + ns key -> props
	tables     map[string]json.RawMessage   // wh + "/" + ns key + "/" + name
	views      map[string]json.RawMessage
	idem       map[string]idemEntry
	// maint holds the maintenance jobs of a warehouse (key wh + "/") or
	// of a table (key idKey); status the outcomes tests set for a table.
	maint  map[string]map[catalog.JobKind]catalog.JobConfig
	status map[string]map[catalog.JobKind]catalog.JobStatus
	// policies holds resource policies by policyKey.
	policies map[string]fakePolicy
	seq      int            // tables created, for their table-uuid
	calls    map[string]int // method -> count
	failNext error          // returned once by the next mutating call
}

type idemEntry struct {
	status int
	body   []byte
}

var _ Catalog = (*fakeCatalog)(nil)

func newFakeCatalog(warehouses ...string) *fakeCatalog {
	f := &fakeCatalog{warehouses: map[string]bool{}, namespaces: map[string]map[string]string{},
		tables: map[string]json.RawMessage{}, views: map[string]json.RawMessage{},
		idem: map[string]idemEntry{}, calls: map[string]int{},
		maint: map[string]map[catalog.JobKind]catalog.JobConfig{}, status: map[string]map[catalog.JobKind]catalog.JobStatus{},
		policies: map[string]fakePolicy{}}
	for _, w := range warehouses {
		f.warehouses[w] = true
	}
	return f
}

func nsKey(wh string, ns []string) string { return wh + "/" + strings.Join(ns, "\x1f") }
func idKey(wh string, id catalog.Ident) string {
	return nsKey(wh, id.Namespace) + "/" + id.Name
}

// enter locks, counts the call and checks the warehouse.
func (f *fakeCatalog) enter(op, wh string) error {
	f.mu.Lock()
	f.calls[op]++
	if wh != "" && !f.warehouses[wh] {
		return fmt.Errorf("%w: %q", catalog.ErrNoSuchWarehouse, wh)
	}
	if err := f.failNext; err != nil {
		f.failNext = nil
		return err
	}
	return nil
}

func (f *fakeCatalog) needNS(wh string, ns []string) error {
	if _, ok := f.namespaces[nsKey(wh, ns)]; !ok {
		return fmt.Errorf("%w: %v", catalog.ErrNoSuchNamespace, ns)
	}
	return nil
}

func (f *fakeCatalog) CreateWarehouse(ctx context.Context, name string) (catalog.Warehouse, error) {
	defer f.mu.Unlock()
	if err := f.enter("CreateWarehouse", ""); err != nil {
		return catalog.Warehouse{}, err
	}
	if name == "bad_name!" {
		return catalog.Warehouse{}, fmt.Errorf("%w: bucket name", catalog.ErrBadRequest)
	}
	if f.warehouses[name] {
		return catalog.Warehouse{}, fmt.Errorf("%w: warehouse %q", catalog.ErrAlreadyExists, name)
	}
	f.warehouses[name] = true
	return catalog.Warehouse{Name: name}, nil
}

func (f *fakeCatalog) ListWarehouses(ctx context.Context) ([]catalog.Warehouse, error) {
	defer f.mu.Unlock()
	_ = f.enter("ListWarehouses", "")
	var out []catalog.Warehouse
	for w := range f.warehouses {
		out = append(out, catalog.Warehouse{Name: w})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeCatalog) DeleteWarehouse(ctx context.Context, name string) error {
	defer f.mu.Unlock()
	if err := f.enter("DeleteWarehouse", name); err != nil {
		return err
	}
	delete(f.warehouses, name)
	return nil
}

func (f *fakeCatalog) GetWarehouse(ctx context.Context, name string) (catalog.Warehouse, error) {
	defer f.mu.Unlock()
	if err := f.enter("GetWarehouse", name); err != nil {
		return catalog.Warehouse{}, err
	}
	return catalog.Warehouse{Name: name, Created: time.Unix(1_700_000_000, 0).UTC()}, nil
}

func (f *fakeCatalog) Config(ctx context.Context, wh string) (map[string]string, map[string]string, error) {
	defer f.mu.Unlock()
	if err := f.enter("Config", wh); err != nil {
		return nil, nil, err
	}
	return map[string]string{"s3.path-style-access": "true", "s3.endpoint": "http://cairn.test"}, map[string]string{"prefix": wh}, nil
}

// page returns the keys after token, at most size (0: all).
func page(keys []string, token string, size int) ([]string, string) {
	sort.Strings(keys)
	i := 0
	if token != "" {
		i = sort.SearchStrings(keys, token)
		if i < len(keys) && keys[i] == token {
			i++
		}
	}
	keys = keys[i:]
	if size > 0 && len(keys) > size {
		return keys[:size], keys[size-1]
	}
	return keys, ""
}

func (f *fakeCatalog) ListNamespaces(ctx context.Context, wh string, parent []string, token string, size int) ([][]string, string, error) {
	defer f.mu.Unlock()
	if err := f.enter("ListNamespaces", wh); err != nil {
		return nil, "", err
	}
	if len(parent) > 0 {
		if err := f.needNS(wh, parent); err != nil {
			return nil, "", err
		}
	}
	var keys []string
	for k := range f.namespaces {
		w, ns, _ := strings.Cut(k, "/")
		levels := strings.Split(ns, "\x1f")
		if w == wh && len(levels) == len(parent)+1 && slices.Equal(levels[:len(parent)], parent) {
			keys = append(keys, ns)
		}
	}
	keys, next := page(keys, token, size)
	out := [][]string{}
	for _, k := range keys {
		out = append(out, strings.Split(k, "\x1f"))
	}
	return out, next, nil
}

func (f *fakeCatalog) CreateNamespace(ctx context.Context, wh string, ns []string, props map[string]string) error {
	defer f.mu.Unlock()
	if err := f.enter("CreateNamespace", wh); err != nil {
		return err
	}
	if _, ok := f.namespaces[nsKey(wh, ns)]; ok {
		return fmt.Errorf("%w: namespace %v", catalog.ErrAlreadyExists, ns)
	}
	f.namespaces[nsKey(wh, ns)] = props
	return nil
}

func (f *fakeCatalog) LoadNamespace(ctx context.Context, wh string, ns []string) (map[string]string, error) {
	defer f.mu.Unlock()
	if err := f.enter("LoadNamespace", wh); err != nil {
		return nil, err
	}
	if err := f.needNS(wh, ns); err != nil {
		return nil, err
	}
	return f.namespaces[nsKey(wh, ns)], nil
}

func (f *fakeCatalog) NamespaceExists(ctx context.Context, wh string, ns []string) (bool, error) {
	defer f.mu.Unlock()
	if err := f.enter("NamespaceExists", wh); err != nil {
		return false, err
	}
	return f.needNS(wh, ns) == nil, nil
}

func (f *fakeCatalog) DropNamespace(ctx context.Context, wh string, ns []string) error {
	defer f.mu.Unlock()
	if err := f.enter("DropNamespace", wh); err != nil {
		return err
	}
	if err := f.needNS(wh, ns); err != nil {
		return err
	}
	for k := range f.tables {
		if strings.HasPrefix(k, nsKey(wh, ns)+"/") {
			return fmt.Errorf("%w: %v", catalog.ErrNamespaceNotEmpty, ns)
		}
	}
	delete(f.namespaces, nsKey(wh, ns))
	return nil
}

func (f *fakeCatalog) UpdateNamespaceProperties(ctx context.Context, wh string, ns []string, removals []string, updates map[string]string) ([]string, []string, []string, error) {
	defer f.mu.Unlock()
	if err := f.enter("UpdateNamespaceProperties", wh); err != nil {
		return nil, nil, nil, err
	}
	if err := f.needNS(wh, ns); err != nil {
		return nil, nil, nil, err
	}
	props := f.namespaces[nsKey(wh, ns)]
	var updated, removed, missing []string
	for _, r := range removals {
		if _, ok := updates[r]; ok {
			return nil, nil, nil, fmt.Errorf("%w: %q in both", catalog.ErrUnprocessable, r)
		}
		if _, ok := props[r]; ok {
			delete(props, r)
			removed = append(removed, r)
		} else {
			missing = append(missing, r)
		}
	}
	for k, v := range updates {
		props[k] = v
		updated = append(updated, k)
	}
	return updated, removed, missing, nil
}

func (f *fakeCatalog) listIdents(m map[string]json.RawMessage, wh string, ns []string, token string, size int) ([]catalog.Ident, string, error) {
	if err := f.needNS(wh, ns); err != nil {
		return nil, "", err
	}
	var names []string
	for k := range m {
		if n, ok := strings.CutPrefix(k, nsKey(wh, ns)+"/"); ok {
			names = append(names, n)
		}
	}
	names, next := page(names, token, size)
	var out []catalog.Ident
	for _, n := range names {
		out = append(out, catalog.Ident{Namespace: ns, Name: n})
	}
	return out, next, nil
}

func (f *fakeCatalog) ListTables(ctx context.Context, wh string, ns []string, token string, size int) ([]catalog.Ident, string, error) {
	defer f.mu.Unlock()
	if err := f.enter("ListTables", wh); err != nil {
		return nil, "", err
	}
	return f.listIdents(f.tables, wh, ns, token, size)
}

func (f *fakeCatalog) CreateTable(ctx context.Context, wh string, ns []string, body []byte) (catalog.TableResult, error) {
	defer f.mu.Unlock()
	if err := f.enter("CreateTable", wh); err != nil {
		return catalog.TableResult{}, err
	}
	if err := f.needNS(wh, ns); err != nil {
		return catalog.TableResult{}, err
	}
	var req struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Name == "" {
		return catalog.TableResult{}, fmt.Errorf("%w: name is required", catalog.ErrBadRequest)
	}
	id := catalog.Ident{Namespace: ns, Name: req.Name}
	if _, ok := f.tables[idKey(wh, id)]; ok {
		return catalog.TableResult{}, fmt.Errorf("%w: table %s", catalog.ErrAlreadyExists, id)
	}
	f.seq++
	meta := json.RawMessage(fmt.Sprintf(`{"format-version":2,"table-uuid":"00000000-0000-0000-0000-%012d","location":"s3://%s/t","last-updated-ms":1700000000000}`, f.seq, wh))
	f.tables[idKey(wh, id)] = meta
	return catalog.TableResult{MetadataLocation: "s3://" + wh + "/t/metadata/00000.metadata.json", Metadata: meta, ETag: "v0"}, nil
}

func (f *fakeCatalog) LoadTable(ctx context.Context, wh string, id catalog.Ident, snapshots string) (catalog.TableResult, error) {
	defer f.mu.Unlock()
	if err := f.enter("LoadTable", wh); err != nil {
		return catalog.TableResult{}, err
	}
	if err := f.needNS(wh, id.Namespace); err != nil { // as catalog.Service answers
		return catalog.TableResult{}, err
	}
	meta, ok := f.tables[idKey(wh, id)]
	if !ok {
		return catalog.TableResult{}, fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, id)
	}
	return catalog.TableResult{MetadataLocation: "s3://" + wh + "/t/metadata/00000.metadata.json", Metadata: meta, ETag: "v0"}, nil
}

func (f *fakeCatalog) TableExists(ctx context.Context, wh string, id catalog.Ident) (bool, error) {
	defer f.mu.Unlock()
	if err := f.enter("TableExists", wh); err != nil {
		return false, err
	}
	_, ok := f.tables[idKey(wh, id)]
	return ok, nil
}

func (f *fakeCatalog) DropTable(ctx context.Context, wh string, id catalog.Ident, purge bool) error {
	defer f.mu.Unlock()
	if err := f.enter("DropTable", wh); err != nil {
		return err
	}
	if _, ok := f.tables[idKey(wh, id)]; !ok {
		return fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, id)
	}
	delete(f.tables, idKey(wh, id))
	if purge {
		f.calls["purge"]++
	}
	return nil
}

func (f *fakeCatalog) RenameTable(ctx context.Context, wh string, from, to catalog.Ident) error {
	defer f.mu.Unlock()
	if err := f.enter("RenameTable", wh); err != nil {
		return err
	}
	meta, ok := f.tables[idKey(wh, from)]
	if !ok {
		return fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, from)
	}
	if _, ok := f.tables[idKey(wh, to)]; ok {
		return fmt.Errorf("%w: %s", catalog.ErrAlreadyExists, to)
	}
	delete(f.tables, idKey(wh, from))
	f.tables[idKey(wh, to)] = meta
	return nil
}

func (f *fakeCatalog) RegisterTable(ctx context.Context, wh string, ns []string, name, loc string, overwrite bool) (catalog.TableResult, error) {
	defer f.mu.Unlock()
	if err := f.enter("RegisterTable", wh); err != nil {
		return catalog.TableResult{}, err
	}
	meta := json.RawMessage(`{"format-version":2}`)
	f.tables[idKey(wh, catalog.Ident{Namespace: ns, Name: name})] = meta
	return catalog.TableResult{MetadataLocation: loc, Metadata: meta}, nil
}

func (f *fakeCatalog) CommitTable(ctx context.Context, wh string, id catalog.Ident, body []byte) (catalog.TableResult, error) {
	defer f.mu.Unlock()
	if err := f.enter("CommitTable", wh); err != nil {
		return catalog.TableResult{}, err
	}
	meta, ok := f.tables[idKey(wh, id)]
	if !ok {
		return catalog.TableResult{}, fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, id)
	}
	var req struct {
		Requirements []struct {
			Type string `json:"type"`
		} `json:"requirements"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return catalog.TableResult{}, fmt.Errorf("%w: %v", catalog.ErrBadRequest, err)
	}
	for _, r := range req.Requirements {
		if r.Type == "assert-fail" {
			return catalog.TableResult{}, fmt.Errorf("%w: requirement failed", catalog.ErrCommitFailed)
		}
	}
	f.calls["commits"]++
	return catalog.TableResult{MetadataLocation: fmt.Sprintf("s3://%s/t/metadata/%05d.metadata.json", wh, f.calls["commits"]), Metadata: meta}, nil
}

func (f *fakeCatalog) CommitTransaction(ctx context.Context, wh string, body []byte) error {
	defer f.mu.Unlock()
	if err := f.enter("CommitTransaction", wh); err != nil {
		return err
	}
	return fmt.Errorf("%w: more than one table change", catalog.ErrUnsupported)
}

func (f *fakeCatalog) ReportMetrics(ctx context.Context, wh string, id catalog.Ident, body []byte) error {
	defer f.mu.Unlock()
	return f.enter("ReportMetrics", wh)
}

func (f *fakeCatalog) RecallResponse(ctx context.Context, wh, key string) (int, []byte, bool, error) {
	defer f.mu.Unlock()
	if err := f.enter("RecallResponse", wh); err != nil {
		return 0, nil, false, err
	}
	e, ok := f.idem[wh+"/"+key]
	return e.status, e.body, ok, nil
}

func (f *fakeCatalog) RememberResponse(ctx context.Context, wh, key string, status int, body []byte) error {
	defer f.mu.Unlock()
	if err := f.enter("RememberResponse", wh); err != nil {
		return err
	}
	if status >= 500 {
		panic("a 5xx must never be remembered")
	}
	f.idem[wh+"/"+key] = idemEntry{status, append([]byte(nil), body...)}
	return nil
}

// fakeAuth accepts "Authorization: Test KEY"; the secret of KEY is
// "secret-KEY"; "root" is the root user. Readers may only read; writers
// may read and write; only root may administer.
type fakeAuth struct{}

func (fakeAuth) Authenticate(r *http.Request, body []byte, service string) (Principal, error) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Test ")
	if !ok || key == "" || key == "unknown" {
		return Principal{}, fmt.Errorf("%w: bad signature", ErrUnauthenticated)
	}
	return Principal{AccessKey: key, Root: key == "root"}, nil
}

func (fakeAuth) Login(id, secret string) (Principal, error) {
	if secret != "secret-"+id {
		return Principal{}, fmt.Errorf("%w: bad secret", ErrUnauthenticated)
	}
	return Principal{AccessKey: id, Root: id == "root"}, nil
}

func (fakeAuth) Authorize(p Principal, a Action, wh string) bool {
	switch {
	case p.Root:
		return true
	case a == ActionRead:
		return strings.HasPrefix(p.AccessKey, "reader") || strings.HasPrefix(p.AccessKey, "writer")
	case a == ActionWrite:
		return strings.HasPrefix(p.AccessKey, "writer")
	}
	return false
}
