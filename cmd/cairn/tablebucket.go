package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
)

// tableBucketOptions are the flags of "cairn admin table-bucket
// create|list|delete".
type tableBucketOptions struct {
	Action   string // create, list, delete
	Name     string
	Endpoint string
}

func parseTableBucket(args []string) (invocation, error) {
	const cmd = "admin table-bucket"
	if len(args) == 0 {
		return invocation{}, usageErrorf(cmd, "want create, list or delete")
	}
	o := tableBucketOptions{Action: args[0]}
	switch o.Action {
	case "create", "list", "delete":
	default:
		return invocation{}, usageErrorf(cmd, "unknown action %q: want create, list or delete", o.Action)
	}
	rest := args[1:]
	if o.Action != "list" {
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			return invocation{}, usageErrorf(cmd+" "+o.Action, "the table bucket name comes first")
		}
		o.Name, rest = rest[0], rest[1:]
	}
	fs := flag.NewFlagSet(cmd+" "+o.Action, flag.ContinueOnError)
	fs.StringVar(&o.Endpoint, "endpoint", "http://"+defaultAddress, "server `URL`")
	if help, err := parseFlags(fs, rest); help != nil || err != nil {
		return deref(help), err
	}
	if fs.NArg() > 0 {
		return invocation{}, usageErrorf(cmd+" "+o.Action, "unexpected argument %q", fs.Arg(0))
	}
	if _, err := url.Parse(o.Endpoint); err != nil {
		return invocation{}, usageErrorf(cmd, "--endpoint: %v", err)
	}
	return invocation{name: cmd + " " + o.Action, opts: o, logLevel: zerolog.InfoLevel}, nil
}

// runTableBucket calls the Iceberg face's table-bucket admin API as the
// root user (CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD).
func runTableBucket(ctx context.Context, o tableBucketOptions, d deps) error {
	base := strings.TrimSuffix(o.Endpoint, "/") + "/_cairn/admin/v1/table-buckets"
	switch o.Action {
	case "create":
		if _, err := adminCall(ctx, http.MethodPut, base+"/"+url.PathEscape(o.Name), nil); err != nil {
			return err
		}
		_, err := fmt.Fprintf(d.stdout, "created table bucket %s (Iceberg REST: uri %s/iceberg, warehouse %s)\n",
			o.Name, strings.TrimSuffix(o.Endpoint, "/"), o.Name)
		return err
	case "delete":
		if _, err := adminCall(ctx, http.MethodDelete, base+"/"+url.PathEscape(o.Name), nil); err != nil {
			return err
		}
		_, err := fmt.Fprintf(d.stdout, "deleted table bucket %s\n", o.Name)
		return err
	default:
		raw, err := adminCall(ctx, http.MethodGet, base, nil)
		if err != nil {
			return err
		}
		var res struct {
			TableBuckets []struct {
				Name    string    `json:"name"`
				Created time.Time `json:"created"`
			} `json:"table_buckets"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("admin API answer: %w", err)
		}
		tw := tabwriter.NewWriter(d.stdout, 2, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "NAME\tCREATED")
		for _, b := range res.TableBuckets {
			created := "-"
			if !b.Created.IsZero() {
				created = b.Created.Format(time.RFC3339)
			}
			_, _ = fmt.Fprintf(tw, "%s\t%s\n", b.Name, created)
		}
		return tw.Flush()
	}
}
