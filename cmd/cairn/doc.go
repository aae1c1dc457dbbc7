// Command cairn is the Cairn storage server and its offline tools.
//
//	cairn serve --data DIR [--drives N | --drive PATH ...] [--parity M]
//	            [--address HOST:PORT] [--mount DIR] [--log-level LEVEL]
//	cairn admin fsck --data DIR [--drives N | --drive PATH ...] [--parity M] [--json]
//	cairn admin heal --data DIR [--drives N | --drive PATH ...] [--parity M] [--json]
//	cairn version
//
// The package is wiring only: it reads flags (and, later, the environment),
// builds the logger and the store, and hands them to the packages that do the
// work. Each command lives in its own file with an options struct, a flag
// registration function and a runX(ctx, opts, deps) function; runX receives
// everything it touches through its arguments, so it can be tested without a
// process. exit.go is the one place where errors become exit codes and
// messages. serve.go builds the control tree the mount shows: the store's
// controls (control.StoreTree) plus the catalog's as "catalog"
// (catalogctl.Tree over catalog.go's catalogParts.controls); `cairn mount`
// (mount.go) serves no catalog and mounts the store's alone.
//
// The only package-level variable is version (version.go), set at link time.
package main
