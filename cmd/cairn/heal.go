package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairnstore/cairn/objstore"
)

// healOptions are the flags of "cairn admin heal".
type healOptions struct {
	Store storeFlags
	JSON  bool
	Log   logFlags
}

func healCommand(done func(invocation)) *cobra.Command {
	var o healOptions
	c := leafCommand("heal", "Repair a stopped store: rebuild missing and corrupt shards, remove orphans",
		`  cairn admin heal --data /var/lib/cairn
  cairn admin heal --json --data /var/lib/cairn`,
		func(c *cobra.Command, args []string) error {
			if err := noArgs(c, args); err != nil {
				return err
			}
			if err := o.Store.check("admin heal"); err != nil {
				return err
			}
			lvl, err := o.Log.level("admin heal")
			if err != nil {
				return err
			}
			done(invocation{name: "admin heal", opts: o, logLevel: lvl})
			return nil
		})
	fs := c.Flags()
	o.Store.register(fs)
	o.Log.register(fs)
	fs.BoolVar(&o.JSON, "json", false, "print the full report as JSON on stdout (logs stay on stderr)")
	return c
}

// runHeal repairs the data directory offline and prints the report. It
// returns an error wrapping errProblems when something could not be healed.
func runHeal(ctx context.Context, o healOptions, d deps) error {
	sopt := o.Store.options(d.log.With().Str("component", "objstore").Logger())
	sopt.NoBackground = true
	if err := sopt.Validate(); err != nil {
		return err
	}
	sopt, unlock, err := o.Store.withMeta(ctx, sopt)
	if err != nil {
		return err
	}
	defer unlock()
	bar := newProgress(d.stderr, d.tty)
	rep, err := d.heal(ctx, sopt, bar.update)
	bar.finish()
	if err != nil {
		return fmt.Errorf("heal %s: %w", sopt.Dir, err)
	}
	if o.JSON {
		if err := writeJSON(d.stdout, healJSON(rep)); err != nil {
			return err
		}
	} else if err := printHeal(d.stdout, rep); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("%w: heal could not repair %d shards", errProblems, len(rep.Unrecoverable))
	}
	return nil
}

// healReportJSON is heal's --json shape, in the snake_case of fsck's
// (objstore.HealReport has no JSON names of its own).
type healReportJSON struct {
	Healed         []objstore.ShardRef `json:"healed"`
	OrphansRemoved int64               `json:"orphans_removed"`
	Unrecoverable  []objstore.ShardRef `json:"unrecoverable"`
	OK             bool                `json:"ok"`
}

func healJSON(r objstore.HealReport) healReportJSON {
	return healReportJSON{Healed: r.Healed, OrphansRemoved: r.OrphansRemoved, Unrecoverable: r.Unrecoverable, OK: r.OK()}
}

func printHeal(w io.Writer, r objstore.HealReport) error {
	var b strings.Builder
	printRefs(&b, "healed", r.Healed)
	fmt.Fprintf(&b, "%-16s %d\n", "orphans removed:", r.OrphansRemoved)
	printRefs(&b, "unrecoverable", r.Unrecoverable)
	if r.OK() {
		b.WriteString("healthy\n")
	} else {
		b.WriteString("some data could not be healed: fewer good shards than data shards remain\n")
	}
	return writeOut(w, b.String())
}
