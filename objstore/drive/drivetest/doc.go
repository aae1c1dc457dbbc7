// Package drivetest is the conformance suite of drive.Drive. Every
// implementation (the local drive.Dir, faultdrive with no faults, any
// drive to come) runs Run in its tests with a function returning a fresh
// empty drive, so that the store relies on the contract written on the
// interface and on nothing an implementation happens to do besides.
//
// Run's subtests cover shard files (create, write in any order, read,
// re-create, remove), absence (fs.ErrNotExist from Open, OpenPack,
// SyncFiles and SyncPacks; Remove and RemovePack of an absent file
// succeed), Walk, pack segments, Stage with Commit and Abort, the
// flushes, canceled contexts, names refused with drive.ErrInvalidName,
// and concurrent use. Durability across a crash is not checked here (a
// local directory cannot be crashed in a test); faultdrive's tests do.
package drivetest
