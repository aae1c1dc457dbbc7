// Command cairn is the Cairn storage server and its offline tools.
//
//	cairn serve --data DIR [--drives N | --drive PATH ...] [--parity M]
//	            [--address HOST:PORT] [--mount DIR] [--log-level LEVEL]
//	cairn admin fsck --data DIR [--json]
//	cairn admin heal --data DIR [--json]
//	cairn admin user|table-bucket|catalog ... [--endpoint URL]
//	cairn version
//
// docs/cli.md is the reference of every command; `cairn --help` lists them.
//
// The package is wiring only: it reads flags and the environment, builds
// the logger and the store, and hands them to the packages that do the
// work. The command tree is cobra's (cli.go): flags anywhere, help,
// completion and suggestions. Each command lives in its own file with an
// options struct, a constructor xCommand(done) that registers its flags
// and whose RunE only validates them and passes an invocation to done,
// and a runX(ctx, opts, deps) function that main calls through dispatch;
// runX receives everything it touches through its arguments, so it can be
// tested without a process. Adding a command is its constructor, one line
// in newRootCmd or adminCommand, and one case in dispatch (cli.go shows
// one). preflight.go holds the checks that run before a store is opened,
// so that a refused start creates nothing. exit.go is the one place where
// errors become exit codes and messages. serve.go builds the control tree
// the mount shows: the store's controls (control.StoreTree) plus the
// catalog's as "catalog" (catalogctl.Tree over catalog.go's
// catalogParts.controls); `cairn mount` (mount.go) serves no catalog and
// mounts the store's alone.
//
// Locks: storemetrics.go's storeCollector.mu is the package's one lock. A
// scrape of /metrics holds it while it refreshes the drive and health
// figures (at most every healthTTL: a statfs and a probe per drive, all
// under one 10 s context), so concurrent scrapes wait for one refresh
// instead of each probing the drives; it is a leaf.
//
// Output: results on stdout, logs and progress on stderr; --json lists
// are [] when empty (writeJSON).
//
// The only package-level variable is version (version.go), set at link
// time.
package main
