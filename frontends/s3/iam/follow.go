package iam

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// Users changed by other processes.
//
// The nodes of a cluster share the users (the store's system bucket) and
// each keeps them in memory. Two things keep a node's copy true to the
// store: Follow applies the changes the store's watch reports (a user
// added, changed or removed on another node reaches it within the
// watch's delay, milliseconds), and Secret, which every signed request
// calls first, reads the store for an access key it does not know (a
// user added elsewhere an instant ago) and, on a store other processes
// write to (objstore.Store.Shared), compares the record's ETag with its
// copy's, so that a request sent after a change answered elsewhere is
// judged by the change: one index read per request, on a cluster only.

// missTimeout bounds the store read of an access key the directory does
// not know (Secret has no context of its own: it answers the signature
// verifiers).
const missTimeout = 5 * time.Second

// userKey is the store key of an access key's record.
func userKey(accessKey string) string { return "users/" + accessKey + ".json" }

// accessKeyOf returns the access key of a store key of the users' prefix.
func accessKeyOf(key string) (string, bool) {
	ak, ok := strings.CutSuffix(strings.TrimPrefix(key, "users/"), ".json")
	return ak, ok && strings.HasPrefix(key, "users/") && accessKeyRe.MatchString(ak)
}

// Follow applies the changes made to the users in the store (by this
// process or others) until ctx ends.
func (d *Directory) Follow(ctx context.Context) {
	ch := d.store.Watch(ctx, Bucket, "users/")
	go func() {
		for ev := range ch {
			switch ev.Op {
			case objstore.OpPut, objstore.OpDelete:
				d.refresh(ctx, ev.Key)
			case objstore.OpRename:
				d.refresh(ctx, ev.Key)
				d.refresh(ctx, ev.To)
			default: // a prefix renamed, or events lost: everything again
				if err := d.loadAll(ctx); err != nil && ctx.Err() == nil {
					d.log.Warn().Err(err).Msg("cannot reload the users after a change elsewhere; they are reloaded at the next one")
				}
			}
		}
	}()
}

// refresh sets the user of store key key to what the store holds: its
// record, or none when it is gone. It reports whether the user exists.
func (d *Directory) refresh(ctx context.Context, key string) bool {
	ak, ok := accessKeyOf(key)
	if !ok {
		return false
	}
	u, etag, err := d.load(ctx, key)
	if errors.Is(err, objstore.ErrNoSuchKey) {
		d.mu.Lock()
		delete(d.users, ak)
		d.mu.Unlock()
		return false
	}
	if err == nil && u.AccessKey != ak {
		return false // a record under another's name: not taken for either
	}
	var p Policy
	if err == nil {
		p, err = effective(u)
	}
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn().Err(err).Str("user", ak).Msg("cannot load a user changed elsewhere; the copy in memory stays")
		}
		d.mu.RLock()
		_, known := d.users[ak]
		d.mu.RUnlock()
		return known
	}
	d.mu.Lock()
	d.users[ak] = entry{u, p, etag}
	d.mu.Unlock()
	return true
}

// fresh makes the copy of accessKey's user true to the store first, on a
// store other processes write to.
func (d *Directory) fresh(accessKey string) {
	if !d.store.Shared() {
		return
	}
	d.mu.RLock()
	e := d.users[accessKey]
	d.mu.RUnlock()
	d.check(accessKey, e.etag)
}

// check compares an access key's record in the store with the copy in
// memory (etag, empty for none) and reloads it when they differ; it
// reports whether it reloaded.
func (d *Directory) check(accessKey, etag string) bool {
	if !accessKeyRe.MatchString(accessKey) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), missTimeout)
	defer cancel()
	if etag != "" {
		info, err := d.store.Head(ctx, Bucket, userKey(accessKey), objstore.GetOptions{})
		if err == nil && info.ETag == etag {
			return false
		}
	}
	d.refresh(ctx, userKey(accessKey))
	return true
}
