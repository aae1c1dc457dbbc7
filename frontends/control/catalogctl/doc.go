// Package catalogctl owns the catalog's control files: one directory per
// warehouse (migration, last-result, status) built from the operation
// tree of package control, which cmd/ adds to the control root as
// "catalog" (the mount shows .cairn/catalog/<wh>/...; DESIGN.md section
// 5). It is the one place that turns the catalog's errors into control's
// sentinels (catalogError), so that control.Errno and control.HTTPStatus
// map them.
//
// # Invariants
//
// A warehouse's directory, and so its Op and last result, is made once per
// tree and kept for the tree's life, also while the warehouse is not
// listed; names control.ValidName refuses, and repeated ones, are left
// out of the listing. Every type here is safe for concurrent use.
//
// # Lock order
//
// One mutex (the tree's map of warehouse directories), held while the
// listing is matched against that map and a new warehouse directory is
// built (which takes and drops that new control.Dir's lock), never across
// a call to the catalog: Warehouses is called before it is taken, and
// control.Dir.List calls the tree's list function holding no lock of its
// own.
//
// # Imports
//
// catalogctl imports catalog (and so apache/iceberg-go) and control; it
// lives apart from control so that control, and fs which mounts it, link
// neither. Nothing but cmd/ (and tests) imports it; never another face
// nor fs. It keeps no package-level state.
package catalogctl
