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
// background puts (objstore.PutAsync with FromFunc, or FromBytes for a
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
//
// # Write path
//
// A file open for writing has one writeState (write.go), shared by its
// writable handles, whose phase (writePhase, phase.go) says where the
// content lives:
//
//   - base: nothing changed yet; the content is the version the first
//     writer opened (beginWrite without O_TRUNC).
//   - buffered: a file written from empty (create, O_TRUNC), in memory
//     while it fits in bufMax; its commit is a background put of a copy.
//   - staged: in a staging file (stage.go) the mount writes with what the
//     kernel sends; its commit is a background put reading the file
//     (writeState.inflight), which the next change waits for
//     (settleLocked).
//   - passthrough: in a staging file the kernel writes itself (FUSE
//     passthrough, passthrough.go); the mount learns of writes from the
//     file (refreshLocked).
//   - gated: passthrough, and a flush started a background put held at a
//     gate (commit.go) until the content is final: the last release,
//     fsync, gateDelay, or the file's removal opens it, back to
//     passthrough. Once gated, a commit that fails opens the gate with
//     its error (failGateLocked), and the timer opens a gate still shut
//     even when its state ended, so that no put, and no reader of its
//     key, waits for ever.
//   - patched: an existing file larger than patchMin (and not
//     ciphertext) changed in place (patch.go): nothing is copied at
//     open or at the first change; writes go to a sparse staging file at
//     their own offsets and are recorded as changed ranges over the
//     pinned base; reads merge the two; a truncation clips the ranges
//     and a later extension makes the cut bytes a zero range. A commit
//     is an objstore patch (Store.PatchFuncAsync) that writes the
//     changed ranges only and shares the rest of the base's data. A
//     flush registers it held (heldPatch): pending in the store, so that
//     every reader of the key waits for it, but its content is taken
//     (the changed bytes copied to memory, letGoLocked) only at fsync,
//     after heldDelay, or when something waits for it (the store calls
//     PutOptions.OnWait), and closes meanwhile add to it. Once a patch is
//     done, the state rebases on the version it made (rebaseLocked,
//     never waiting), so each commit costs what changed since the last.
//     The last release keeps the state for parkFor (park.go): a writer
//     opening the file again goes on with it, without waiting for the
//     commit, when the key still holds what the state describes. Such a
//     file never takes the passthrough path, which would copy the whole
//     base into a staging file.
//
// The moves are base to patched (the first change of a large base), base
// or buffered to staged (the content outgrows the
// buffer or changes the base) or to passthrough (the first writer, at
// open, when kernelModes.canPassthrough), passthrough to gated and back;
// a write state made for a staging file the kernel still passes through
// to starts in passthrough. phaseMoves is the table, writeState.moveTo
// the one place that changes the phase; a move it lacks fails the request
// with EIO and one log line. The last release ends the state in any phase.
//
// What the kernel was told about each inode's opens (cached, direct,
// passthrough and with which backing file, what the page cache holds)
// is fileNode.modes (kernelModes, kmode.go): its methods are the rules
// Linux's one-I/O-mode-per-inode imposes on the next open.
//
// # Locking
//
// The mutexes, what each protects, and what may be taken under it:
//
//   - handle.mu: the handle's pinned reader. Held across the store's
//     Open of the version a handle pins at its first read (so that
//     concurrent reads pin one), and takes fileNode.mu inside it
//     (handle.pinned); nothing takes handle.mu under fileNode.mu.
//   - fileNode.mu: the file's node fields (ws and every field of the
//     write state, unlinked, last, modes, pending and pendingAttrs) and
//     the flags of its handles that count in modes. It serialises the
//     file's writes and commits, and is held across store calls on the
//     file's own key: Head and Open when a writer begins, PutAsync, put
//     and setMeta at a commit, MinDriveAvail (roomToStage), and
//     Pending.Wait for the put still reading the staging file
//     (settleLocked). Under it the mount takes FS.roomMu, stagePool.mu,
//     selfEvents.mu and credCache.mu, and go-fuse's tree locks (Path,
//     Parent in attached).
//   - dirNode.mu: a directory's listing and when it was made. A leaf:
//     held for map updates only, never across a store call, a node lock
//     or a kernel notify.
//   - FS.roomMu: roomToStage's last answer; held across its statfs and
//     the store's MinDriveAvail, takes nothing else.
//   - stagePool.mu: the free staging files and the refill's state; a
//     leaf, never held across file I/O (create, truncate, close run
//     outside it).
//   - selfEvents.mu (watch.go) and credCache.mu (caller.go): leaves over
//     their maps; /proc is read outside credCache.mu.
//
// So the order is handle.mu, then fileNode.mu, then one of the leaves
// (FS.roomMu, stagePool.mu, selfEvents.mu, credCache.mu) or go-fuse's
// own locks, which go-fuse never holds while it calls into a node. No
// two fileNode.mu or dirNode.mu are ever held at once: code that visits
// several nodes (dirops, watch.go, flushUnder) takes each node's lock in
// turn, through methods that release it before they return.
//
// The store makes reads, deletes and renames of a key wait for its
// pending puts, and a gated put waits for its gate, which opens only
// under fileNode.mu (openGateLocked: the last release, fsync, the
// removal, or the gate's timer, which takes the lock). So under
// fileNode.mu no call waits for a gated put: while the state is gated,
// commitLocked and metaChangedLocked return before any store call,
// settleLocked does not wait, and no writer begins (ws is set, so
// beginWrite calls no Head or Open); a state's close, which waits for its
// last put, runs after the lock is released (endWrite, in a goroutine
// when a put still reads the file). A held patch is let go under
// fileNode.mu too (its timer and the store's OnWait take the lock on
// goroutines of their own), so the same holds of it: while one is held,
// commitLocked adds to it without a store call, rebaseLocked opens the
// version it rebases on with GetOptions.Committed (no wait), and a
// writer reviving an idle state (reviveLocked) calls Head only when no
// patch of the state's is pending; an idle state that ends lets its held
// patch go before anything waits for it.
//
// No fs mutex is held across a kernel notify (go-fuse's NotifyContent,
// NotifyEntry; go-fuse warns that holding filesystem locks there can
// deadlock): the kernel handles an invalidation under the inode's or the
// directory's lock, which a request waiting in the mount for fileNode.mu
// or dirNode.mu may hold while it waits. killLocked hence
// notifies from a goroutine of its own, and the watcher (watch.go)
// holds no lock while it notifies, taking dirNode.mu and fileNode.mu only
// inside dropListing and writing. The timers (the gate's gateDelay, a
// passthrough handle's ptLinger) take fileNode.mu in their own goroutine;
// openGateLocked's Stop of the gate's timer does not wait for it.
package fs
