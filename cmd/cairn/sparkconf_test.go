package main

import (
	"bytes"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseSparkConf(t *testing.T) {
	def := sparkConfOptions{Committer: "magic", ConflictMode: "append", Endpoint: "http://127.0.0.1:9000", Region: "us-east-1"}
	with := func(f func(*sparkConfOptions)) sparkConfOptions { o := def; f(&o); return o }
	tests := []struct {
		name     string
		args     []string
		env      [2]string // CAIRN_ROOT_USER, CAIRN_ROOT_PASSWORD
		wantOpts sparkConfOptions
		wantErr  string // substring; "" means success
	}{
		{name: "defaults", wantOpts: def},
		{name: "root credentials from the environment", env: [2]string{"root", "rootsecret"},
			wantOpts: with(func(o *sparkConfOptions) { o.AccessKey, o.SecretKey = "root", "rootsecret" })},
		{name: "half the environment is no credentials", env: [2]string{"root", ""}, wantOpts: def},
		{name: "flags win over the environment", env: [2]string{"root", "rootsecret"},
			args:     []string{"--access-key", "spark", "--secret-key", "sparksecret"},
			wantOpts: with(func(o *sparkConfOptions) { o.AccessKey, o.SecretKey = "spark", "sparksecret" })},
		{name: "partitioned replace", args: []string{"--committer", "partitioned", "--conflict-mode", "replace", "--endpoint", "https://s3.example:9443", "--region", "eu-west-3"},
			wantOpts: with(func(o *sparkConfOptions) {
				o.Committer, o.ConflictMode, o.Endpoint, o.Region = "partitioned", "replace", "https://s3.example:9443", "eu-west-3"
			})},
		{name: "file", args: []string{"--committer=file"}, wantOpts: with(func(o *sparkConfOptions) { o.Committer = "file" })},
		{name: "unknown committer", args: []string{"--committer", "fast"}, wantErr: `--committer "fast": want magic, directory, partitioned, file`},
		{name: "unknown conflict mode", args: []string{"--committer", "directory", "--conflict-mode", "merge"}, wantErr: `--conflict-mode "merge"`},
		{name: "conflict mode of magic", args: []string{"--conflict-mode", "fail"}, wantErr: "--conflict-mode is for the directory and partitioned committers, not magic"},
		{name: "endpoint not http", args: []string{"--endpoint", "ftp://127.0.0.1:9000"}, wantErr: "--endpoint"},
		{name: "bad region", args: []string{"--region", "EU"}, wantErr: `--region "EU"`},
		{name: "access key alone", args: []string{"--access-key", "ak"}, wantErr: "--access-key and --secret-key together"},
		{name: "positional", args: []string{"magic"}, wantErr: `unexpected argument "magic"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CAIRN_ROOT_USER", tt.env[0])
			t.Setenv("CAIRN_ROOT_PASSWORD", tt.env[1])
			inv, err := parseArgs(append([]string{"admin", "spark-conf"}, tt.args...))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if inv.name != "admin spark-conf" || !reflect.DeepEqual(inv.opts, tt.wantOpts) {
				t.Fatalf("got %q %+v, want %+v", inv.name, inv.opts, tt.wantOpts)
			}
		})
	}
}

// readSparkDefaults parses spark-defaults.conf text as Spark does: "#"
// lines and blank lines skipped, a key, white space, the value. It fails
// the test on a repeated key or a key without a value.
func readSparkDefaults(t *testing.T, text string) map[string]string {
	t.Helper()
	conf := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, " ")
		v = strings.TrimSpace(v)
		if !ok || v == "" || strings.ContainsAny(v, " \t") {
			t.Fatalf("line %q is not KEY VALUE", line)
		}
		if _, dup := conf[k]; dup {
			t.Fatalf("key %s set twice", k)
		}
		conf[k] = v
	}
	return conf
}

func TestSparkConf(t *testing.T) {
	base := map[string]string{
		"spark.hadoop.fs.s3a.endpoint":                 "http://127.0.0.1:9000",
		"spark.hadoop.fs.s3a.endpoint.region":          "us-east-1",
		"spark.hadoop.fs.s3a.path.style.access":        "true",
		"spark.hadoop.fs.s3a.connection.ssl.enabled":   "false",
		"spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
		"spark.hadoop.fs.s3a.access.key":               "ACCESS_KEY",
		"spark.hadoop.fs.s3a.secret.key":               "SECRET_KEY",
	}
	binding := map[string]string{
		"spark.hadoop.mapreduce.outputcommitter.factory.scheme.s3a": "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory",
		"spark.sql.sources.commitProtocolClass":                     "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol",
		"spark.sql.parquet.output.committer.class":                  "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter",
	}
	merge := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			maps.Copy(out, m)
		}
		return out
	}
	tests := []struct {
		name string
		opts sparkConfOptions
		want map[string]string
	}{
		{name: "magic", opts: sparkConfOptions{Committer: "magic", ConflictMode: "append", Endpoint: "http://127.0.0.1:9000", Region: "us-east-1"},
			want: merge(base, binding, map[string]string{
				"spark.hadoop.fs.s3a.committer.name":          "magic",
				"spark.hadoop.fs.s3a.committer.magic.enabled": "true",
			})},
		{name: "directory fail", opts: sparkConfOptions{Committer: "directory", ConflictMode: "fail", Endpoint: "http://127.0.0.1:9000", Region: "us-east-1"},
			want: merge(base, binding, map[string]string{
				"spark.hadoop.fs.s3a.committer.name":                  "directory",
				"spark.hadoop.fs.s3a.committer.staging.conflict-mode": "fail",
			})},
		{name: "partitioned replace over https with keys", opts: sparkConfOptions{Committer: "partitioned", ConflictMode: "replace",
			Endpoint: "https://s3.example:9443/", Region: "eu-west-3", AccessKey: "spark", SecretKey: "sparksecret"},
			want: merge(base, binding, map[string]string{
				"spark.hadoop.fs.s3a.endpoint":                        "https://s3.example:9443",
				"spark.hadoop.fs.s3a.endpoint.region":                 "eu-west-3",
				"spark.hadoop.fs.s3a.connection.ssl.enabled":          "true",
				"spark.hadoop.fs.s3a.access.key":                      "spark",
				"spark.hadoop.fs.s3a.secret.key":                      "sparksecret",
				"spark.hadoop.fs.s3a.committer.name":                  "partitioned",
				"spark.hadoop.fs.s3a.committer.staging.conflict-mode": "replace",
			})},
		{name: "file: Spark's own commit protocol", opts: sparkConfOptions{Committer: "file", ConflictMode: "append", Endpoint: "http://10.0.0.5:9000", Region: "us-east-1"},
			want: merge(base, map[string]string{
				"spark.hadoop.fs.s3a.endpoint":                                 "http://10.0.0.5:9000",
				"spark.hadoop.fs.s3a.committer.name":                           "file",
				"spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version": "1",
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := runSparkConf(tt.opts, deps{stdout: &out}); err != nil {
				t.Fatal(err)
			}
			got := readSparkDefaults(t, out.String())
			if !maps.Equal(got, tt.want) {
				keys := slices.Sorted(maps.Keys(merge(got, tt.want)))
				for _, k := range keys {
					if got[k] != tt.want[k] {
						t.Errorf("%s = %q, want %q", k, got[k], tt.want[k])
					}
				}
			}
			if tt.opts.AccessKey == "" && !strings.Contains(out.String(), "replace ACCESS_KEY and SECRET_KEY") {
				t.Errorf("placeholders without a word on replacing them:\n%s", out.String())
			}
		})
	}
}
