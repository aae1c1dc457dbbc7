package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/objstore"
	"github.com/google/uuid"
)

// maxMetadataSize bounds a metadata file read back.
const maxMetadataSize = 256 << 20

// schemes are the URL schemes accepted for locations in a warehouse.
func schemes() []string { return []string{"s3://", "s3a://", "s3n://"} }

// objectKeyOf returns the object key a location names inside warehouse
// wh's bucket; ErrBadRequest when it is outside it.
func objectKeyOf(wh, loc string) (string, error) {
	for _, sc := range schemes() {
		if rest, ok := strings.CutPrefix(loc, sc+wh+"/"); ok {
			rest = strings.TrimLeft(rest, "/")
			if rest == "" {
				break
			}
			return rest, nil
		}
	}
	return "", fmt.Errorf("%w: location %q is not inside warehouse bucket s3://%s/", ErrBadRequest, loc, wh)
}

// NamespaceLocationProperty is the namespace property naming where its
// tables live (Spark's and Trino's LOCATION of a schema).
const NamespaceLocationProperty = "location"

// namespaceLocation is a namespace's default location: the prefix its
// tables' and views' default locations share, s3://<wh>/<ns levels
// joined by />.
func namespaceLocation(wh string, ns []string) string {
	return "s3://" + wh + "/" + strings.Join(ns, "/")
}

// defaultLocation is where a table or view lives when the request names
// no location: s3://<wh>/<ns levels joined by />/<name>.
func defaultLocation(wh string, id Ident) string {
	return namespaceLocation(wh, id.Namespace) + "/" + id.Name
}

// metadataFileLocation names metadata file number version of a table or
// view located at loc: <loc>/metadata/NNNNN-<uuid>.metadata.json.
func metadataFileLocation(loc string, version int) string {
	return strings.TrimRight(loc, "/") + fmt.Sprintf("/metadata/%05d-%s.metadata.json", version, uuid.NewString())
}

// metadataVersion parses the NNNNN of a metadata file location; -1 when
// the name does not follow the convention.
func metadataVersion(loc string) int {
	base := path.Base(loc)
	i := strings.IndexByte(base, '-')
	if i <= 0 {
		return -1
	}
	n, err := strconv.Atoi(base[:i])
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// nextMetadataLocation names the metadata file following cur for a table
// located at loc.
func nextMetadataLocation(loc, cur string) string {
	return metadataFileLocation(loc, max(metadataVersion(cur)+1, 1))
}

// writeMetadata stores a new metadata file (create only: the name holds a
// fresh uuid, an existing object means a bug or an attack).
func (s *Service) writeMetadata(ctx context.Context, wh, loc string, data []byte) error {
	key, err := objectKeyOf(wh, loc)
	if err != nil {
		return err
	}
	_, err = s.store.Put(ctx, wh, key, bytes.NewReader(data), int64(len(data)),
		objstore.PutOptions{IfNoneMatch: "*", ContentType: "application/json"})
	if err != nil {
		return fmt.Errorf("catalog: write metadata %s: %w", loc, err)
	}
	return nil
}

// readMetadata reads a metadata file of warehouse wh.
func (s *Service) readMetadata(ctx context.Context, wh, loc string) ([]byte, error) {
	if b, ok := s.cache.get(loc); ok {
		return b, nil
	}
	key, err := objectKeyOf(wh, loc)
	if err != nil {
		return nil, err
	}
	r, err := s.store.Open(ctx, wh, key, objstore.GetOptions{})
	if err != nil {
		if errors.Is(err, objstore.ErrNoSuchKey) {
			return nil, fmt.Errorf("%w: metadata file %s is missing", ErrNotFound, loc)
		}
		return nil, fmt.Errorf("catalog: read metadata %s: %w", loc, err)
	}
	defer func() { _ = r.Close() }()
	if objstore.Encrypted(r.Info()) {
		return nil, fmt.Errorf("%w: metadata file %s is encrypted with S3 server-side encryption, which the catalog does not decrypt: write it without encryption (S3 writes to a bucket with default encryption are encrypted)", ErrBadRequest, loc)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxMetadataSize))
	if err != nil {
		return nil, fmt.Errorf("catalog: read metadata %s: %w", loc, err)
	}
	s.cache.put(loc, b)
	return b, nil
}

// deleteObject removes a metadata file (best effort: callers log).
func (s *Service) deleteObject(ctx context.Context, wh, loc string) error {
	key, err := objectKeyOf(wh, loc)
	if err != nil {
		return err
	}
	s.cache.drop(loc)
	_, err = s.store.Delete(ctx, wh, key, objstore.DeleteOptions{})
	return err
}

// purgePrefix deletes every object under a table or view location.
func (s *Service) purgePrefix(ctx context.Context, wh, loc string) (int, error) {
	key, err := objectKeyOf(wh, loc)
	if err != nil {
		return 0, err
	}
	prefix := strings.TrimRight(key, "/") + "/"
	n := 0
	for {
		page, err := s.store.List(ctx, wh, objstore.ListOptions{Prefix: prefix, MaxKeys: 1000})
		if err != nil {
			return n, fmt.Errorf("catalog: purge %s: %w", loc, err)
		}
		for _, o := range page.Objects {
			if _, err := s.store.Delete(ctx, wh, o.Key, objstore.DeleteOptions{}); err != nil {
				return n, fmt.Errorf("catalog: purge %s: %w", o.Key, err)
			}
			n++
		}
		if !page.IsTruncated {
			return n, nil
		}
	}
}

// ObjectKey returns the object key a location (s3://wh/key, s3a://,
// s3n://) names inside warehouse wh's bucket; ErrBadRequest when it is
// outside it.
func ObjectKey(wh, loc string) (string, error) { return objectKeyOf(wh, loc) }
