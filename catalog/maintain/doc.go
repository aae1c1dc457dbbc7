// Package maintain runs table maintenance on the catalog: compaction of
// small data files, snapshot expiry and the removal of unreferenced
// files, configured per warehouse and per table in the catalog
// (catalog.SetMaintenance, in S3 Tables' terms) and run by a Runner, on
// demand (Run) or by cairn serve's scheduler (Schedule).
//
// The work itself is apache/iceberg-go's: its bin-pack planner and
// RewriteDataFiles, Transaction.ExpireSnapshots and the orphan-file
// planner, over two adapters to the store: fileIO (iceberg-go's FileIO on
// a warehouse's bucket: reads, streamed writes, listing, deletes) and
// catalogIO (iceberg-go's CatalogIO on the catalog Service).
//
// # Invariants
//
//   - Every change to a table is an ordinary catalog commit through
//     catalog.Service.CommitTable: requirements checked against the
//     current metadata, a new metadata file, the pointer's
//     compare-and-swap. A job never overwrites a concurrent writer's
//     commit: a lost swap is refreshed and replayed (iceberg-go), or the
//     job starts over from the table as it is (retryConflicts), and a
//     writer that loses to a job gets the ordinary 409 and retries.
//   - Writes are fenced like any writer's: during a catalog cutover a
//     run stops with catalog.ErrFenced, records nothing, and the next
//     run does the work.
//   - Nothing a table references is deleted: expired snapshots' files are
//     left to the removal job, which deletes only files that the table's
//     metadata (every snapshot kept, the metadata log, statistics) does
//     not reference, that are older than the grace period (a writer's
//     files not yet committed are younger), that no commit landing during
//     the planning references (the table is planned again when its
//     metadata moved), and that belong to no other table nested under the
//     location. The removal runs only when every job before it in the run
//     succeeded.
//   - One run per table at a time in a Runner (lock); a run's jobs go in
//     catalog.JobKinds order, each outcome recorded in the catalog
//     (catalog.RecordMaintenance) for GET .../maintenance and S3 Tables'
//     GetTableMaintenanceJobStatus.
//
// # Lock order
//
// Runner.mu guards the running map only and is never held across I/O;
// the per-table turn (lock) is taken before any catalog call. stats.mu is
// a leaf.
package maintain
