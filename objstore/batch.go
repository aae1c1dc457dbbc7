package objstore

// Several conditional puts of one bucket committed in one index
// transaction: all of them or none.

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/cairnstore/cairn/objstore/meta"
)

// maxBatchPuts bounds a PutBatch: the catalog's multi-table commits write
// one record per table, far fewer.
const maxBatchPuts = 1000

// BatchPut is one put of a PutBatch: a body in memory and its options.
// Of PutOptions it takes ContentType, Meta, Attrs, IfMatch, IfNoneMatch
// and ContentMD5.
type BatchPut struct {
	Key  string
	Body []byte
	Opt  PutOptions
}

// PutBatch writes puts, each a new version of its key in bucket, and
// installs them in one index transaction: either every put's condition
// holds and every version lands, or none does and the call returns the
// first refusal (ErrPreconditionFailed, ErrNoSuchKey, ...) with nothing
// visible. The data is flushed before the transaction, so a crash leaves
// all of the versions or none, and at most unreferenced data for the
// sweep. Keys must be distinct; at most maxBatchPuts. The catalog's
// object backing commits a multi-table transaction with it.
func (s *Store) PutBatch(ctx context.Context, bucket string, puts []BatchPut) ([]ObjectInfo, error) {
	if err := checkBatch(puts); err != nil {
		return nil, err
	}
	for _, p := range puts {
		if err := s.pending.waitKey(ctx, bucket, p.Key); err != nil {
			return nil, err
		}
		if err := s.precheckWrite(ctx, bucket, p.Key, p.Opt.IfMatch, p.Opt.IfNoneMatch); err != nil {
			return nil, err
		}
	}
	datas := make([]*newData, 0, len(puts))
	discardAll := func() {
		for _, d := range datas {
			s.discard(d)
		}
	}
	versions := make([]*meta.Version, len(puts))
	installs := make([]func(tx meta.Tx) error, len(puts))
	for i, p := range puts {
		d, sum, err := s.writeData(ctx, bucket, p.Key, bytes.NewReader(p.Body), int64(len(p.Body)), p.Opt.ContentMD5, false)
		if err != nil {
			discardAll()
			return nil, err
		}
		if d != nil {
			datas = append(datas, d)
		}
		versions[i], installs[i] = s.putVersion(bucket, p.Key, d, sum, p.Opt)
	}
	r := s.batchReq(datas, func(tx meta.Tx) error {
		for _, install := range installs {
			if err := install(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err := s.send(ctx, r); err != nil {
		discardAll()
		return nil, err
	}
	err := <-r.done
	s.closeMu.RUnlock()
	if err != nil {
		for _, d := range datas {
			s.discardUnlessApplied(d, err)
		}
		return nil, err
	}
	for _, d := range datas {
		if len(d.shards) < len(s.drives) {
			s.queueHeal(d.id.String())
		}
	}
	infos := make([]ObjectInfo, len(puts))
	for i, p := range puts {
		infos[i] = toInfo(bucket, p.Key, versions[i], true)
		s.notify(Event{Op: OpPut, Bucket: bucket, Key: p.Key})
	}
	return infos, nil
}

// checkBatch refuses a batch that is empty, too large, names a key twice
// or an invalid one, or asks for what only single puts do.
func checkBatch(puts []BatchPut) error {
	if len(puts) == 0 || len(puts) > maxBatchPuts {
		return fmt.Errorf("%w: a batch holds 1 to %d puts, not %d", ErrInvalidArgument, maxBatchPuts, len(puts))
	}
	seen := make(map[string]bool, len(puts))
	for _, p := range puts {
		if err := ValidateKey(p.Key); err != nil {
			return err
		}
		if seen[p.Key] {
			return fmt.Errorf("%w: key %q is put twice in one batch", ErrInvalidArgument, p.Key)
		}
		seen[p.Key] = true
		if p.Opt.FinalMeta != nil || p.Opt.ETag != nil || p.Opt.Completing != nil || p.Opt.OnWait != nil {
			return fmt.Errorf("%w: a batched put takes no FinalMeta, ETag, Completing or OnWait", ErrInvalidArgument)
		}
	}
	return nil
}

// batchReq is the commit request of fn with the data of several puts:
// their data records go in the transaction before fn, and the batch
// flushes every drive any of them wrote (whole filesystems: the data may
// be shard files or pack segments), each put's quorum of them required.
func (s *Store) batchReq(datas []*newData, fn func(tx meta.Tx) error) *commitReq {
	r := &commitReq{}
	for _, d := range datas {
		for _, sh := range d.shards {
			if !slices.Contains(r.shards, sh) {
				r.shards = append(r.shards, sh)
			}
		}
		r.quorum = max(r.quorum, d.quorum)
	}
	slices.Sort(r.shards)
	records := make([]func(tx meta.Tx) error, len(datas))
	for i, d := range datas {
		records[i] = s.dataReq(d, func(meta.Tx) error { return nil }).fn
	}
	r.fn = func(tx meta.Tx) error {
		for _, rec := range records {
			if err := rec(tx); err != nil {
				return err
			}
		}
		return fn(tx)
	}
	return r
}
