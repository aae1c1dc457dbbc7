package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
)

// sparkConfOptions are the flags of "cairn admin spark-conf", which prints
// the Spark configuration (spark-defaults.conf lines) for writing to
// Cairn's S3 face through Hadoop's s3a connector. It prints; it calls no
// server.
type sparkConfOptions struct {
	Committer    string // magic, directory, partitioned or file
	ConflictMode string // fail, append or replace: the staging committers'
	Endpoint     string
	Region       string
	AccessKey    string // "" prints a placeholder
	SecretKey    string
}

// sparkCommitters are the committers spark-conf knows, and
// sparkConflictModes the staging committers' conflict modes.
func sparkCommitters() []string    { return []string{"magic", "directory", "partitioned", "file"} }
func sparkConflictModes() []string { return []string{"fail", "append", "replace"} }

// Placeholders printed when no credentials are given or in the environment.
const (
	sparkAccessKeyPlaceholder = "ACCESS_KEY"
	sparkSecretKeyPlaceholder = "SECRET_KEY"
)

func sparkConfCommand(done func(invocation)) *cobra.Command {
	var o sparkConfOptions
	var ep endpointFlag
	c := leafCommand("spark-conf", "Print the Spark configuration (spark-defaults.conf) for writing to the server through s3a",
		`  cairn admin spark-conf >> $SPARK_HOME/conf/spark-defaults.conf
  cairn admin spark-conf --committer directory --conflict-mode replace --endpoint http://cairn.internal:9000`,
		func(c *cobra.Command, args []string) error {
			if err := noArgs(c, args); err != nil {
				return err
			}
			var err error
			if o.Endpoint, err = ep.resolve("admin spark-conf"); err != nil {
				return err
			}
			inv, err := o.check()
			if err == nil {
				done(inv)
			}
			return err
		})
	fs := c.Flags()
	fs.StringVar(&o.Committer, "committer", "magic", "the output `committer`: magic, directory, partitioned (the s3a committers) or file (Hadoop's FileOutputCommitter)")
	fs.StringVar(&o.ConflictMode, "conflict-mode", "append", "what the directory and partitioned committers do when the output exists: fail, append or replace")
	ep.register(fs, "the server's S3 endpoint as Spark's workers reach it:")
	fs.StringVar(&o.Region, "region", defaultRegion, "the server's S3 `region` (its serve --region)")
	fs.StringVar(&o.AccessKey, "access-key", "", "access key for Spark (default $CAIRN_ROOT_USER, else a placeholder)")
	fs.StringVar(&o.SecretKey, "secret-key", "", "secret key for Spark (default $CAIRN_ROOT_PASSWORD, else a placeholder)")
	return c
}

// check validates the flags (o.Endpoint resolved) and returns the
// invocation.
func (o sparkConfOptions) check() (invocation, error) {
	const cmd = "admin spark-conf"
	if !slices.Contains(sparkCommitters(), o.Committer) {
		return invocation{}, usageErrorf(cmd, "--committer %q: want %s", o.Committer, strings.Join(sparkCommitters(), ", "))
	}
	if !slices.Contains(sparkConflictModes(), o.ConflictMode) {
		return invocation{}, usageErrorf(cmd, "--conflict-mode %q: want %s", o.ConflictMode, strings.Join(sparkConflictModes(), ", "))
	}
	if o.ConflictMode != "append" && o.Committer != "directory" && o.Committer != "partitioned" {
		return invocation{}, usageErrorf(cmd, "--conflict-mode is for the directory and partitioned committers, not %s", o.Committer)
	}
	if !validRegion(o.Region) {
		return invocation{}, usageErrorf(cmd, "--region %q: want lower-case letters, digits and dashes", o.Region)
	}
	if (o.AccessKey == "") != (o.SecretKey == "") {
		return invocation{}, usageErrorf(cmd, "give --access-key and --secret-key together")
	}
	if o.AccessKey == "" {
		o.AccessKey, o.SecretKey = os.Getenv("CAIRN_ROOT_USER"), os.Getenv("CAIRN_ROOT_PASSWORD")
		if o.AccessKey == "" || o.SecretKey == "" {
			o.AccessKey, o.SecretKey = "", ""
		}
	}
	return invocation{name: cmd, opts: o, logLevel: zerolog.InfoLevel}, nil
}

// sparkConfLine is one line of spark-defaults.conf: a setting, or a
// comment when key is "".
type sparkConfLine struct {
	key, value string
	comment    string
}

// sparkConf is the configuration o asks for, in print order.
func sparkConf(o sparkConfOptions) []sparkConfLine {
	set := func(k, v string) sparkConfLine { return sparkConfLine{key: k, value: v} }
	note := func(c string) sparkConfLine { return sparkConfLine{comment: c} }
	u, _ := url.Parse(o.Endpoint) // checked by parseSparkConf
	ak, sk := o.AccessKey, o.SecretKey
	lines := []sparkConfLine{
		note(fmt.Sprintf("Spark on Cairn's S3 face through s3a, committer %q (cairn admin spark-conf).", o.Committer)),
		note("Paste into spark-defaults.conf, or pass each line as --conf KEY=VALUE."),
		note("Spark's classpath needs hadoop-aws of Spark's Hadoop version with the AWS SDK"),
	}
	if o.Committer == "file" {
		lines = append(lines, note("bundle it names."))
	} else {
		lines = append(lines, note("bundle it names, and spark-hadoop-cloud of Spark's version."))
	}
	lines = append(lines,
		note(""),
		note("The endpoint: path-style addressing, SigV4 for the server's region."),
		set("spark.hadoop.fs.s3a.endpoint", strings.TrimSuffix(o.Endpoint, "/")),
		set("spark.hadoop.fs.s3a.endpoint.region", o.Region),
		set("spark.hadoop.fs.s3a.path.style.access", "true"),
		set("spark.hadoop.fs.s3a.connection.ssl.enabled", fmt.Sprint(u.Scheme == "https")),
	)
	if ak == "" {
		ak, sk = sparkAccessKeyPlaceholder, sparkSecretKeyPlaceholder
		lines = append(lines, note("Credentials: replace ACCESS_KEY and SECRET_KEY with a Cairn user's keys"),
			note("(cairn admin user add NAME --secret S makes one)."))
	} else {
		lines = append(lines, note("Credentials: a Cairn user's access and secret key."))
	}
	lines = append(lines,
		set("spark.hadoop.fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"),
		set("spark.hadoop.fs.s3a.access.key", ak),
		set("spark.hadoop.fs.s3a.secret.key", sk),
		note(""),
	)
	if o.Committer == "file" {
		return append(lines,
			note("Hadoop's FileOutputCommitter through Spark's default commit protocol. Over s3a"),
			note("each rename is a copy and a delete per file: commits take time in proportion to"),
			note("the data and a failed job can leave part of its output. Algorithm 1 renames at"),
			note("job commit; 2 renames at each task commit (faster, less safe). _SUCCESS is empty."),
			set("spark.hadoop.fs.s3a.committer.name", "file"),
			set("spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version", "1"),
		)
	}
	lines = append(lines,
		note("The s3a committer: tasks write multipart uploads that only the job commit"),
		note("completes, so nothing is visible before it, and _SUCCESS is a JSON manifest."),
		set("spark.hadoop.fs.s3a.committer.name", o.Committer),
		set("spark.hadoop.mapreduce.outputcommitter.factory.scheme.s3a", "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory"),
		set("spark.sql.sources.commitProtocolClass", "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"),
		set("spark.sql.parquet.output.committer.class", "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter"),
	)
	switch o.Committer {
	case "magic":
		lines = append(lines,
			note("Tasks write under DEST/__magic_job-*/ paths that s3a turns into uploads to DEST."),
			set("spark.hadoop.fs.s3a.committer.magic.enabled", "true"),
		)
	default:
		what := "the destination directory exists"
		if o.Committer == "partitioned" {
			what = "a partition the job writes exists"
		}
		lines = append(lines,
			note("Tasks write to local disk and upload at task commit. Conflict mode: what to do"),
			note("when "+what+": fail, append or replace. On a cluster the staging"),
			note("committers keep their upload lists in fs.s3a.committer.staging.tmp.path"),
			note("(default tmp/staging on the cluster's default filesystem), which must be"),
			note("storage the driver and every executor share."),
			set("spark.hadoop.fs.s3a.committer.staging.conflict-mode", o.ConflictMode),
		)
	}
	return lines
}

// writeSparkConf prints lines as spark-defaults.conf: comments with "# ",
// settings as "key value" with the values aligned.
func writeSparkConf(w io.Writer, lines []sparkConfLine) error {
	width := 0
	for _, l := range lines {
		if l.key != "" {
			width = max(width, len(l.key))
		}
	}
	var b strings.Builder
	for _, l := range lines {
		switch {
		case l.key != "":
			fmt.Fprintf(&b, "%-*s %s\n", width, l.key, l.value)
		case l.comment == "":
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "# %s\n", l.comment)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// runSparkConf prints the configuration o asks for.
func runSparkConf(o sparkConfOptions, d deps) error {
	return writeSparkConf(d.stdout, sparkConf(o))
}
