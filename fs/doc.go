// Package fs is the mounted POSIX view of the store (go-fuse v2's fs API).
//
// It owns the mapping between a directory tree and object keys: the mount
// root lists the buckets, "/" in keys makes directories, and empty
// directories are zero-byte "dir/" marker objects (the S3A convention). A
// key that a directory of the same name shadows (S3 allows "a/b" next to
// "a/b/c") is hidden, as are keys whose names POSIX cannot show (empty
// segments, "." and "..").
//
// Files read from a pinned version, so an open reader keeps the version it
// opened while S3 overwrites or deletes the key; a file opened again at
// the version the kernel's page cache holds keeps that cache
// (FOPEN_KEEP_CACHE), and the mount raises its readahead to 1 MiB
// (mounttable.go). Opens beside a passthrough writer pass through to the
// same staging file, as the kernel requires (passthrough.go). Writes go to a staging
// file under the data directory's tmp/ and are committed as a new version
// on flush (close), fsync and release; writing into the middle of an
// existing file rewrites the whole object (copy-on-write: a one-byte write
// into a 1 GiB file costs a 1 GiB put at close). Commits at close are
// background puts (objstore.PutBackgroundFrom, PutBackgroundBytes for a
// small file's buffer): the store serves them to every reader at once and
// makes them durable with the next group commit; fsync waits for
// durability, as on any Linux filesystem. Files created in a run of small
// files are opened with direct I/O (handle.directOK), which spares the
// kernel's security.capability look-up per new file. The mount clears
// set-ID bits on writes, truncations and chowns itself
// (FUSE_HANDLE_KILLPRIV_V2, setid.go), which spares that look-up before
// every passthrough write(2) too; files whose bits a writer would clear
// are not passed through.
//
// Mode, owner and mtime live in object metadata (x-cairn-mode, -uid, -gid,
// -mtime), symlinks are objects holding their target and marked with
// x-cairn-symlink, and user.* extended attributes are the object's S3 user
// metadata (x-amz-meta-*); read-only user.cairn.* attributes expose store
// facts; other namespaces are not kept (ENOTSUP, on which ls -l stops
// asking for labels and ACLs). rename(2) is the store's atomic Rename or RenamePrefix. The
// store's Watch feed invalidates the kernel's caches when S3 changes a key.
//
// The mount checks permissions itself (perm.go), with each caller's
// groups and capabilities read from /proc (caller.go), rather than with
// the kernel's default_permissions, which costs a GETATTR per create.
//
// A control tree (frontends/control) is mounted under a root-only .cairn/
// directory. Store errors map to errnos in one place, errno.go.
//
// fs imports objstore and frontends/control (whose core links no catalog;
// cmd/ adds the catalog's controls, frontends/control/catalogctl, to the
// tree it hands over): it depends on neither catalog nor apache/iceberg-go,
// even transitively, as integration/layering_test.go checks.
package fs
