package migrate

import (
	"context"

	"github.com/cairnstore/cairn/catalog"
)

// Fences on a cluster.
//
// On a store other processes write to (the nodes of a cluster:
// objstore.Store.Shared), another node's cutover may write a fence
// document after this process loaded them: Enter reads the documents
// that concern the write again before it lets it in, so that a write
// that starts after a fence went up on any node is refused. The locks
// that drain writers already in flight are this process's alone: a
// catalog write in flight on another node when a cutover starts is not
// waited for, so on a cluster the cutover runbook stops the catalog's
// writers first.

// reload reads again the global fence and, for wh other than "" (the
// registry), wh's fence, replacing the copies in memory.
func (f *Fences) reload(ctx context.Context, wh string) error {
	data, err := f.read(ctx, globalFenceKey)
	if err != nil {
		return err
	}
	var g *GlobalFence
	var gbad error
	if data != nil {
		g, gbad = decodeGlobalFence(data)
	}
	var fc *catalog.Fence
	var bad error
	if wh != "" {
		if data, err = f.read(ctx, fenceKey(wh)); err != nil {
			return err
		}
		if data != nil {
			fc, bad = decodeFence(data, wh)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gfence, f.gbad = g, gbad
	if wh == "" {
		return nil
	}
	delete(f.fences, wh)
	delete(f.bad, wh)
	switch {
	case bad != nil:
		f.bad[wh] = bad
	case fc != nil:
		f.fences[wh] = fc
	}
	return nil
}
