// Package faultdrive wraps any drive.Drive to inject faults, for tests:
// errors, short writes, ENOSPC and latency by rule (which operation, which
// file, after how many calls), and power loss (Crash), which drops every
// change not yet flushed by the drive's explicit flushes.
//
// Model (pebble's errorfs and crashable MemFS): every change reaches the
// inner drive at once, and the wrapper keeps an undo log of the changes
// since each file's last flush: whether the file existed then, its size
// and the bytes each write overwrote (the whole flushed content, for shard
// files and before a remove). A flush that returns nil forgets the log of
// what it covered: SyncFiles and SyncPacks their files (content and name),
// Sync the whole drive, StagedFile.Commit its shard. Crash plays the logs
// back, so the inner drive holds exactly what was flushed, including that
// a file created or renamed in since its last flush is gone and a file
// removed since is back; from then on the wrapper refuses everything with
// ErrCrashed. The flushes are stricter than a real filesystem's (a
// directory fsync there makes its other entries durable too), never
// laxer, so a test that survives Crash does not lean on luck.
//
// A Drive does not implement drive.Local, so a store over it runs its
// portable paths (no direct I/O, no syncfs, flushes by name).
//
// Everything is configured through the Config value given to New (and
// SetRules); the package has no mutable state of its own.
//
// Lock order: Drive.mu (operations share it; Sync and Crash take it alone)
// -> file.mu (one file's changes, its log and its flush; SyncFiles takes
// several in name order) -> Drive.filesMu, Drive.rulesMu and Drive.openMu
// (leaves).
package faultdrive
