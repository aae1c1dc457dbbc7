package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/cairnstore/cairn/frontends/s3"
)

// statusPath is the admin API's status resource (frontends/s3/admin.go).
const statusPath = "/_cairn/admin/v1/status"

// statusOptions are the flags of "cairn admin status".
type statusOptions struct {
	// Endpoint is the server's base URL, resolved: --endpoint,
	// $CAIRN_ENDPOINT or the default.
	Endpoint string
	// JSON prints the server's answer as it came (indented) instead of
	// tables.
	JSON bool
}

func statusCommand(done func(invocation)) *cobra.Command {
	var o statusOptions
	var ep endpointFlag
	c := leafCommand("status", "Show a running server's drives, health and buckets at a glance",
		`  cairn admin status
  cairn admin status --endpoint 127.0.0.1:9100 --json | jq .drives`,
		func(c *cobra.Command, args []string) error {
			name := commandName(c)
			if err := noArgs(c, args); err != nil {
				return err
			}
			if err := ep.online(name, &o.Endpoint); err != nil {
				return err
			}
			done(invocation{name: name, opts: o, logLevel: zerolog.InfoLevel})
			return nil
		})
	fs := c.Flags()
	ep.register(fs, "the server's")
	fs.BoolVar(&o.JSON, "json", false, "print the server's status as JSON (the fields docs/operations/monitoring.md lists)")
	return c
}

// runStatus asks a running server for its status (as the root user,
// CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD) and prints it. Offline drives
// and degraded objects are reported, not failed on: the command's job is
// to show, `cairn admin doctor` and fsck judge.
func runStatus(ctx context.Context, o statusOptions, d deps) error {
	raw, err := adminCall(ctx, http.MethodGet, strings.TrimSuffix(o.Endpoint, "/")+statusPath, nil)
	if err != nil {
		return err
	}
	if o.JSON {
		var b bytes.Buffer
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			return fmt.Errorf("status answer: %w", err)
		}
		b.WriteByte('\n')
		_, err := d.stdout.Write(b.Bytes())
		return err
	}
	var st s3.ServerStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("status answer: %w", err)
	}
	return printStatus(d, st)
}

func printStatus(d deps, st s3.ServerStatus) error {
	var b bytes.Buffer
	online := 0
	for _, dr := range st.Drives {
		if dr.Online {
			online++
		}
	}
	fmt.Fprintf(&b, "cairn %s, up %s; erasure %d+%d, blocks of %s; drives %d of %d online\n\n",
		st.Version, (time.Duration(st.UptimeSeconds) * time.Second).String(), st.DataShards, st.ParityShards,
		humanize.IBytes(uint64(st.BlockSize)), online, len(st.Drives))

	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "DRIVE\tSTATE\tSIZE\tFREE\tUSED\tI/O ERRORS\tCHECKSUM FAILURES\tPATH")
	for _, dr := range st.Drives {
		state, size, free, used := "online", "-", "-", "-"
		if !dr.Online {
			state = "OFFLINE"
		}
		if dr.TotalBytes > 0 {
			size, free = humanize.IBytes(dr.TotalBytes), humanize.IBytes(dr.AvailableBytes)
			used = fmt.Sprintf("%.0f%%", 100*(1-float64(dr.AvailableBytes)/float64(dr.TotalBytes)))
		}
		path := dr.Path
		if dr.Error != "" {
			path += " (" + dr.Error + ")"
		}
		_, _ = fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", dr.Index, state, size, free, used, dr.IOErrors, dr.ChecksumFailures, path)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(&b)
	tw = tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "DEGRADED OBJECTS\tHEAL QUEUE\tCLEANER BACKLOG\tCOMPACTION BACKLOG\tSEGMENT BACKLOG\tPENDING PUTS")
	_, _ = fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\n", st.DegradedObjects, st.HealQueue, st.CleanerBacklog, st.CompactionBacklog, st.SegmentBacklog, st.PendingPuts)
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(&b)
	tw = tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "BUCKET\tOBJECTS\tBYTES\tSHADOWED\tVERSIONING")
	for _, bk := range st.Buckets {
		if bk.System {
			continue
		}
		v := bk.Versioning
		if v == "" {
			v = "-"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\n", bk.Name, bk.Objects, humanize.IBytes(uint64(max(bk.Bytes, 0))), bk.Shadowed, v)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if st.ReadCache != nil {
		rc := st.ReadCache
		ratio := 0.0
		if rc.Hits+rc.Misses > 0 {
			ratio = 100 * float64(rc.Hits) / float64(rc.Hits+rc.Misses)
		}
		fmt.Fprintf(&b, "\nread cache: %s of %s used, %.0f%% hits (%d hits, %d misses)\n",
			humanize.IBytes(rc.UsedBytes), humanize.IBytes(rc.SizeBytes), ratio, rc.Hits, rc.Misses)
	}
	_, err := d.stdout.Write(b.Bytes())
	return err
}
