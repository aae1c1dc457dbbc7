// Package control owns Cairn's control operations: a tree of named
// documents and operations that operators reach through the faces, under
// `.cairn/` on the mount (docs/design.md, "The faces") and over HTTP.
// The same operation code serves every face; a face only mounts the tree.
//
// # Model
//
// A Node is a *Dir or a *File. A Dir holds named children in the order
// they were added, and may compute more on every listing (NewDirFunc), for
// trees that follow the store, such as one directory per warehouse. A
// File's Read returns a document, by convention indented JSON ending in a
// newline; a File with a Write runs an operation when written. Op builds
// the usual pair for an operation: the operation file (read: a preview;
// write one word: run it) and a sibling "last-result" file holding the
// full outcome of the last run, since an errno cannot say why a write
// failed:
//
//	cat .cairn/catalog/w/migration                  # preview (preflight)
//	echo materialize > .cairn/catalog/w/migration   # EBUSY, EACCES, EINVAL...
//	cat .cairn/catalog/w/last-result                # what happened, in full
//
// # Trees
//
// StoreTree returns the root with the store's controls (store/status).
// The catalog's controls, one directory per warehouse (migration,
// last-result, status), are in the subpackage catalogctl, which cmd/
// adds to that root as "catalog"; it translates the catalog's errors into
// the sentinels below in one place. They live apart so that this package,
// and fs which mounts it, link neither catalog nor apache/iceberg-go
// (integration/layering_test.go checks it, transitively).
//
// # Errors
//
// Operations fail with errors wrapping the sentinels of errors.go
// (ErrBusy, ErrDenied, ErrInvalid, ErrNotFound, ErrUnsupported). Errno is
// the one place that turns them into errno values for the mount, and
// HTTPStatus the one place for HTTP status codes; anything else is EIO
// (500).
//
// # Contract for faces
//
// A face calls Read once per open (or GET) and serves that snapshot, so a
// reader sees one consistent document. It calls Write once with
// everything written between open and close (or the whole request body),
// untrimmed; it should refuse to open a file for writing when
// File.Writable is false. Read and Write get the request's context and
// may block on I/O. Every type here is safe for concurrent use.
//
// # Imports
//
// control may import objstore; never catalog (catalogctl does), another
// face (frontends/s3, frontends/iceberg, frontends/health) nor fs, which
// imports control to mount it. It keeps no package-level state: trees are
// values built in cmd/.
package control
