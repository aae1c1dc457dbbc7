package main

import "github.com/rs/zerolog"

// adminUsage lists the offline tools. They open the data directory
// themselves, so the server must not be running on it at the same time (the
// store's index lock refuses it).
const adminUsage = `Usage:
  cairn admin fsck --data DIR [--drives N | --drive PATH ...] [--parity M] [--json]
  cairn admin heal --data DIR [--drives N | --drive PATH ...] [--parity M] [--json]
  cairn admin user add NAME --secret S [--policy readwrite|readonly|writeonly|@FILE] [--email ADDR] [--endpoint URL]
  cairn admin user list [--endpoint URL]
  cairn admin user remove NAME [--endpoint URL]
  cairn admin table-bucket create NAME [--endpoint URL]
  cairn admin table-bucket list [--endpoint URL]
  cairn admin table-bucket delete NAME [--endpoint URL]
  cairn admin spark-conf [--committer magic|directory|partitioned|file] [--conflict-mode fail|append|replace]
                         [--endpoint URL] [--region R] [--access-key K --secret-key S]

fsck checks every shard against the index and changes nothing; exit 0 when
clean, 1 when problems were found, 2 on error. heal rebuilds missing and
corrupt shards and removes orphans; exit 0 when everything is healthy
afterwards, 1 when something could not be healed, 2 on error.

user and table-bucket talk to a running server as the root user
(CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD). A table bucket is an Iceberg
warehouse: point clients at uri http://HOST:PORT/iceberg with warehouse NAME.

spark-conf prints the Spark configuration (spark-defaults.conf lines) that
writes to this server through s3a with the committer asked for; the
credentials are --access-key/--secret-key, else CAIRN_ROOT_USER /
CAIRN_ROOT_PASSWORD, else placeholders. It calls no server.
`

func parseAdmin(args []string) (invocation, error) {
	if len(args) == 0 {
		return invocation{}, usageErrorf("admin", "no admin command given (fsck or heal)")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "fsck":
		return parseFsck(rest)
	case "heal":
		return parseHeal(rest)
	case "user":
		return parseUser(rest)
	case "table-bucket":
		return parseTableBucket(rest)
	case "catalog":
		return parseCatalog(rest)
	case "spark-conf":
		return parseSparkConf(rest)
	case "help", "-h", "-help", "--help":
		return invocation{name: "help", opts: helpOptions{text: adminUsage}, logLevel: zerolog.InfoLevel}, nil
	default:
		return invocation{}, usageErrorf("admin", "unknown admin command %q", cmd)
	}
}
