package main

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/cairnstore/cairn/bench/s3load"
)

// benchOptions are the flags of "cairn bench s3".
type benchOptions struct {
	Load s3load.Options
	JSON bool
}

func benchCommand(done func(invocation)) *cobra.Command {
	g := groupCommand("bench", "Load a running server and measure it", "")
	var o benchOptions
	var size, sseMode string
	var ep endpointFlag
	c := leafCommand("s3", "Run S3 PUTs or GETs against a running server and print the throughput and latencies",
		`  cairn bench s3
  cairn bench s3 --op get --size 64MiB --clients 4 --duration 30s
  CAIRN_ENDPOINT=127.0.0.1:9100 cairn bench s3 --json`,
		func(c *cobra.Command, args []string) error {
			const cmd = "bench s3"
			if err := noArgs(c, args); err != nil {
				return err
			}
			var err error
			if o.Load.Endpoint, err = ep.resolve(cmd); err != nil {
				return err
			}
			n, err := parseSize(size)
			if err != nil {
				return usageErrorf(cmd, "--size %q: %v", size, err)
			}
			o.Load.Size = n
			if o.Load.Headers, err = benchSSEHeaders(sseMode); err != nil {
				return usageErrorf(cmd, "--sse %q: %v", sseMode, err)
			}
			if o.Load.Op != "put" && o.Load.Op != "get" {
				return usageErrorf(cmd, "--op %q: want put or get", o.Load.Op)
			}
			if o.Load.Clients < 1 || o.Load.Duration <= 0 || o.Load.Keys < 1 {
				return usageErrorf(cmd, "--clients, --duration and --keys must be positive")
			}
			if (o.Load.AccessKey == "") != (o.Load.SecretKey == "") {
				return usageErrorf(cmd, "give --access-key and --secret-key together")
			}
			if err := checkRootEnv(cmd); err != nil {
				return err
			}
			done(invocation{name: cmd, opts: o, logLevel: zerolog.InfoLevel})
			return nil
		})
	fs := c.Flags()
	fs.StringVar(&sseMode, "sse", "", "server-side encryption of the objects: `s3` (SSE-S3), kms[:KEY] (SSE-KMS), c (SSE-C, a random key per run); default none")
	ep.register(fs, "the server's S3")
	fs.StringVar(&o.Load.AccessKey, "access-key", "", "access key (default $CAIRN_ROOT_USER)")
	fs.StringVar(&o.Load.SecretKey, "secret-key", "", "secret key (default $CAIRN_ROOT_PASSWORD)")
	fs.BoolVar(&o.Load.Anonymous, "anonymous", false, "send unsigned requests (the bucket must exist and allow anonymous puts and gets)")
	fs.StringVar(&o.Load.Bucket, "bucket", "cairn-bench", "bucket to load (created when missing)")
	fs.StringVar(&o.Load.Op, "op", "put", "`put` or `get`")
	fs.StringVar(&size, "size", "4KiB", "object `size` (B, KiB, MiB, GiB suffixes)")
	fs.IntVar(&o.Load.Clients, "clients", 16, "concurrent `clients`")
	fs.DurationVar(&o.Load.Duration, "duration", 20*time.Second, "how long to run")
	fs.IntVar(&o.Load.Keys, "keys", 64, "distinct keys written or read")
	fs.BoolVar(&o.JSON, "json", false, "print the result as JSON")
	g.AddCommand(c)
	return g
}

// benchSSEHeaders are the object request headers of an --sse mode.
func benchSSEHeaders(mode string) (http.Header, error) {
	h := http.Header{}
	switch kind, key, _ := strings.Cut(mode, ":"); kind {
	case "":
		return nil, nil
	case "s3":
		h.Set("x-amz-server-side-encryption", "AES256")
	case "kms":
		h.Set("x-amz-server-side-encryption", "aws:kms")
		if key != "" {
			h.Set("x-amz-server-side-encryption-aws-kms-key-id", key)
		}
	case "c":
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		sum := md5.Sum(k)
		h.Set("x-amz-server-side-encryption-customer-algorithm", "AES256")
		h.Set("x-amz-server-side-encryption-customer-key", base64.StdEncoding.EncodeToString(k))
		h.Set("x-amz-server-side-encryption-customer-key-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	default:
		return nil, fmt.Errorf("want s3, kms[:KEY] or c")
	}
	return h, nil
}

// parseSize reads "4KiB", "64MiB", "1GiB", "100" (bytes).
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = v, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a size")
	}
	return n * mult, nil
}

// runBench runs the load against the endpoint and prints the result.
func runBench(ctx context.Context, o benchOptions, d deps) error {
	if o.Load.AccessKey == "" {
		o.Load.AccessKey = os.Getenv("CAIRN_ROOT_USER")
	}
	if o.Load.SecretKey == "" {
		o.Load.SecretKey = os.Getenv("CAIRN_ROOT_PASSWORD")
	}
	if o.Load.AccessKey == "" || o.Load.SecretKey == "" {
		o.Load.AccessKey, o.Load.SecretKey = defaultRootUser, defaultRootPassword
	}
	res, err := s3load.Run(ctx, o.Load)
	if err != nil {
		return err
	}
	if o.JSON {
		return json.NewEncoder(d.stdout).Encode(res)
	}
	_, err = fmt.Fprintln(d.stdout, res.String())
	if err == nil && res.FirstErr != "" {
		_, err = fmt.Fprintln(d.stdout, "first error:", res.FirstErr)
	}
	return err
}
