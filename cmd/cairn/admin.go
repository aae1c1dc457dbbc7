package main

import "github.com/spf13/cobra"

// adminLong is the top of "cairn admin --help". fsck and heal open the data
// directory themselves, so the server must not be running on it at the
// same time (the store's index lock refuses it); the others call a running
// server.
const adminLong = `Tools for operators.

fsck and heal work on a stopped store (the running server holds its lock).
fsck checks every shard against the index and changes nothing: exit 0 when
clean, 1 when problems were found, 2 on error. heal rebuilds missing and
corrupt shards and removes orphans: exit 0 when everything is healthy
afterwards, 1 when something could not be healed, 2 on error.

user, table-bucket and catalog call a running server (--endpoint, else
$CAIRN_ENDPOINT, else http://127.0.0.1:9000) as the root user
(CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD). A table bucket is an Iceberg
warehouse: point clients at uri http://HOST:PORT/iceberg with warehouse NAME.

status shows a running server's drives, health and buckets at a glance
(as root, like user). doctor checks a store's drives, FUSE, the clock, the
port and the environment without a server, and says what to fix: exit 0
when nothing failed, 1 when a check failed.

spark-conf prints the Spark configuration for the server; it calls no server.

cluster status shows the nodes serving a store whose index is on etcd
(--meta) and which node leads each background job; it reads etcd alone.`

func adminCommand(done func(invocation)) *cobra.Command {
	c := groupCommand("admin", "Check, repair and manage a store", adminLong)
	c.AddCommand(
		fsckCommand(done),
		healCommand(done),
		userCommand(done),
		tableBucketCommand(done),
		catalogCommand(done),
		sparkConfCommand(done),
		statusCommand(done),
		doctorCommand(done),
		clusterCommand(done),
	)
	return c
}
