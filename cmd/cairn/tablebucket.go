package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
)

// tableBucketOptions are the flags of "cairn admin table-bucket
// create|list|delete".
type tableBucketOptions struct {
	Action   string // create, list, delete
	Name     string
	Endpoint string // resolved: --endpoint, $CAIRN_ENDPOINT or the default
	JSON     bool   // list
}

func tableBucketCommand(done func(invocation)) *cobra.Command {
	g := groupCommand("table-bucket", "Manage the table buckets (Iceberg warehouses) of a running server", "")
	for _, action := range []string{"create", "list", "delete"} {
		o := tableBucketOptions{Action: action}
		var ep endpointFlag
		use, short, example := action+" NAME", "", ""
		switch action {
		case "create":
			short = "Create a table bucket"
			example = `  cairn admin table-bucket create lakehouse
  cairn admin table-bucket create --endpoint http://127.0.0.1:9100 lakehouse`
		case "list":
			use, short = "list", "List the table buckets"
			example = `  cairn admin table-bucket list
  cairn admin table-bucket list --json`
		case "delete":
			short = "Delete an empty table bucket"
			example = "  cairn admin table-bucket delete lakehouse"
		}
		c := leafCommand(use, short, example, func(c *cobra.Command, args []string) error {
			name := commandName(c)
			var err error
			if o.Name, err = nameArg(c, o.Action, args, "table bucket name"); err != nil {
				return err
			}
			if err := ep.online(name, &o.Endpoint); err != nil {
				return err
			}
			done(invocation{name: name, opts: o, logLevel: zerolog.InfoLevel})
			return nil
		})
		ep.register(c.Flags(), "the server's")
		if action == "list" {
			c.Flags().BoolVar(&o.JSON, "json", false, "print the table buckets as JSON")
		}
		g.AddCommand(c)
	}
	return g
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
		if o.JSON {
			return writeJSON(d.stdout, res)
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
