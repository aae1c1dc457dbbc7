package control

import (
	"context"

	"github.com/cairnstore/cairn/objstore"
)

// StoreTree returns a tree holding the store's controls:
//
//	store/status   read: Store.Status as JSON (drives, geometry, buckets,
//	               shadowed keys)
//
// cmd/ adds the catalog's controls to the same root
// (Add("catalog", catalogctl.Tree(...))) and hands it to the faces (the mount
// shows it as .cairn/).
func StoreTree(store *objstore.Store) *Dir {
	return storeTree(store)
}

// statuser is the part of the store the store controls use.
type statuser interface {
	Status(ctx context.Context) (objstore.Status, error)
}

func storeTree(s statuser) *Dir {
	return NewDir().Add("store", NewDir().
		Add("status", ReadOnly(s.Status)))
}
