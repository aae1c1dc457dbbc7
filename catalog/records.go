package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// The JSON values of the records the catalog keeps in its backing.

// warehouseRec is a KindWarehouse record.
type warehouseRec struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

// namespaceRec is a KindNamespace record.
type namespaceRec struct {
	Properties map[string]string `json:"properties"`
	Created    time.Time         `json:"created"`
}

// pointerRec is a KindTable or KindView record: the pointer to the
// current metadata file that commits swap.
type pointerRec struct {
	MetadataLocation string    `json:"metadata-location"`
	Location         string    `json:"location"` // the table's location, s3://wh/...
	Updated          time.Time `json:"updated"`
}

// Commit states of a commitRec.
const (
	commitStaged    = "staged"
	commitCommitted = "committed"
	commitAbandoned = "abandoned"
)

// commitRec is a KindCommit record: one entry of the commit log.
type commitRec struct {
	ID    string `json:"id"`
	Kind  Kind   `json:"kind"` // KindTable or KindView
	Ident Ident  `json:"ident"`
	// FromVersion is the pointer record's version the commit started
	// from; "" when the commit creates the entry.
	FromVersion string `json:"from-version"`
	// From and To are the metadata locations before and after.
	From    string    `json:"from-metadata-location,omitempty"`
	To      string    `json:"to-metadata-location"`
	State   string    `json:"state"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// idempotencyRec is a KindIdempotency record.
type idempotencyRec struct {
	Status  int       `json:"status"`
	Body    []byte    `json:"body"`
	Expires time.Time `json:"expires"`
}

// prefixRec is a KindPrefix record.
type prefixRec struct {
	Ident Ident `json:"ident"`
	Kind  Kind  `json:"kind"`
}

// getJSON reads a record and decodes its value into v; it returns the
// record's version.
func (s *Service) getJSON(ctx context.Context, wh string, kind Kind, key string, v any) (string, error) {
	rec, err := s.b.Get(ctx, wh, kind, key)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(rec.Value, v); err != nil {
		return "", fmt.Errorf("catalog: corrupt %s record %q: %w", kind, key, err)
	}
	return rec.Version, nil
}

// putJSON encodes v and writes it under the Backing.Put condition.
func (s *Service) putJSON(ctx context.Context, wh string, kind Kind, key string, v any, ifVersion string) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("catalog: encode %s record: %w", kind, err)
	}
	return s.b.Put(ctx, wh, kind, key, b, ifVersion)
}
