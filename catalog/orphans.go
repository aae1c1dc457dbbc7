package catalog

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// orphanMinAge is how old an unreferenced metadata file must be before
// recovery removes it: a commit writes its new metadata file before it
// records the staged commit, so a younger file may belong to a commit
// still on its way.
const orphanMinAge = 15 * time.Minute

// examineOrphans finds the metadata files a commit stopped between its
// metadata write and its staged record left behind: files in a table's
// or view's metadata directory numbered above the current one, named by
// no staged commit and older than orphanMinAge (DROP_ORPHAN). Files
// numbered below the current one are the history (or were pruned from
// the metadata-log on purpose) and are left alone.
func (s *Service) examineOrphans(ctx context.Context, wh string, in Inspection, rep *RecoveryReport) error {
	for _, e := range in.entries {
		if e.p.Location == "" || e.p.MetadataLocation == "" {
			continue
		}
		cur := metadataVersion(e.p.MetadataLocation)
		if cur < 0 {
			continue
		}
		dir, err := objectKeyOf(wh, strings.TrimRight(e.p.Location, "/")+"/metadata/")
		if err != nil {
			continue // reported as a prefix finding
		}
		after := ""
		for {
			page, err := s.store.List(ctx, wh, objstore.ListOptions{Prefix: dir, After: after, MaxKeys: 1000})
			if err != nil {
				return fmt.Errorf("catalog: list %s/%s: %w", wh, dir, err)
			}
			for _, o := range page.Objects {
				after = o.Key
				loc := "s3://" + wh + "/" + o.Key
				if !strings.HasSuffix(o.Key, ".metadata.json") || strings.Contains(strings.TrimPrefix(o.Key, dir), "/") {
					continue
				}
				if v := metadataVersion(loc); v <= cur || in.stagedTo[loc] || s.now().Sub(o.ModTime) < orphanMinAge {
					continue
				}
				id := identFromKey(e.key)
				rep.Repaired = append(rep.Repaired, RecoveryItem{Kind: "metadata", Key: loc, Ident: &id, EntryKind: e.kind,
					Action: RecoverDropOrphan, Reason: fmt.Sprintf("metadata file numbered above the current %s, named by no commit", e.p.MetadataLocation)})
			}
			if !page.IsTruncated {
				break
			}
		}
	}
	return nil
}
