package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/rs/zerolog"
)

// Service is the catalog: warehouses, namespaces, tables and views kept in
// a Backing, with metadata files in the warehouses' buckets of a Store.
// It is safe for concurrent use; all coordination goes through the
// backing's conditional writes, so several Services on one backing agree.
type Service struct {
	store *objstore.Store
	b     Backing
	opt   Options
	log   zerolog.Logger
	cache *metaCache

	// batch is b when it can write several records at once
	// (BatchBacking), which multi-table transactions need; nil otherwise.
	batch BatchBacking
	// snapshot: b rewrites a whole warehouse per write (SnapshotBacking),
	// so commits flip without a staged record.
	snapshot bool

	mu       sync.Mutex
	inflight map[string]bool // commit ids this Service has started

	stats commitCounters // metrics.go
}

// New returns a Service over store and b.
func New(store *objstore.Store, b Backing, opt Options) (*Service, error) {
	if store == nil || b == nil {
		return nil, errors.New("catalog: New needs a store and a backing")
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Region == "" {
		opt.Region = "us-east-1"
	}
	batch, _ := b.(BatchBacking)
	_, snapshot := b.(SnapshotBacking)
	return &Service{store: store, b: b, opt: opt, log: opt.Logger, batch: batch, snapshot: snapshot,
		cache: newMetaCache(64 << 20), inflight: map[string]bool{}}, nil
}

func (s *Service) now() time.Time { return s.opt.Now() }

// marshalLoadResult renders LoadTableResult / LoadViewResult.
func marshalLoadResult(loc string, meta json.RawMessage, cfg map[string]string, creds []StorageCredential) ([]byte, error) {
	var l *string
	if loc != "" {
		l = &loc
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	if len(meta) == 0 {
		meta = json.RawMessage("null")
	}
	return json.Marshal(struct {
		MetadataLocation   *string             `json:"metadata-location"`
		Metadata           json.RawMessage     `json:"metadata"`
		Config             map[string]string   `json:"config"`
		StorageCredentials []StorageCredential `json:"storage-credentials,omitempty"`
	}{l, meta, cfg, creds})
}

// Config implements Catalog.
func (s *Service) Config(ctx context.Context, wh string) (map[string]string, map[string]string, error) {
	if _, err := s.GetWarehouse(ctx, wh); err != nil {
		return nil, nil, err
	}
	defaults := s.fileIOConfig()
	overrides := map[string]string{"prefix": wh}
	return defaults, overrides, nil
}

// fileIOConfig is what clients need to reach the S3 face for data files.
func (s *Service) fileIOConfig() map[string]string {
	m := map[string]string{
		"s3.path-style-access": "true",
		"s3.region":            s.opt.Region,
		"client.region":        s.opt.Region,
	}
	if s.opt.S3Endpoint != "" {
		m["s3.endpoint"] = s.opt.S3Endpoint
	}
	return m
}

// backingErr turns a backing error into a catalog error: notFound for
// ErrNotFound, ErrCommitFailed-style conflicts are left to callers.
func backingErr(err error, notFound error) error {
	if errors.Is(err, ErrNotFound) && notFound != nil {
		return fmt.Errorf("%w: %w", notFound, err)
	}
	return err
}
