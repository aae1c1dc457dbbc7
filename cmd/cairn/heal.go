package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
)

// healOptions are the flags of "cairn admin heal".
type healOptions struct {
	Store storeFlags
	JSON  bool
	Log   logFlags
	// Online asks the serving nodes of a store on etcd to heal it,
	// instead of healing a stopped one.
	Online bool
}

func healCommand(done func(invocation)) *cobra.Command {
	var o healOptions
	c := leafCommand("heal", "Repair a stopped store: rebuild missing and corrupt shards, remove orphans",
		`  cairn admin heal --data /var/lib/cairn
  cairn admin heal --json --data /var/lib/cairn
  cairn admin heal --online --meta etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379/cairn/`,
		func(c *cobra.Command, args []string) error {
			if err := noArgs(c, args); err != nil {
				return err
			}
			if o.Online {
				if o.Store.Meta == "" {
					return usageErrorf("admin heal", "--online needs --meta: the etcd index the serving nodes share")
				}
				if _, err := etcd.ParseURL(o.Store.Meta); err != nil {
					return usageErrorf("admin heal", "--meta: %v", err)
				}
			} else if err := o.Store.check("admin heal"); err != nil {
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
	fs.BoolVar(&o.Online, "online", false, "with --meta: ask the nodes serving the store to heal all of it (their heal leader does, once every drive answers), instead of healing a stopped store")
	return c
}

// requestOnlineHeal records in the index that the serving nodes should
// heal the whole store.
func requestOnlineHeal(ctx context.Context, o healOptions, d deps) error {
	idx, err := openEtcd(ctx, o.Store.Meta)
	if err != nil {
		return err
	}
	defer func() { _ = idx.Close() }()
	if err := objstore.RequestHealIn(ctx, idx); err != nil {
		return fmt.Errorf("request a heal: %w", err)
	}
	return writeOut(d.stdout, "heal requested: the nodes' heal leader heals the whole store once every drive answers;\n"+
		"'cairn admin cluster status' shows 'heal: nothing due' when it is done\n")
}

// runHeal repairs the data directory offline and prints the report. It
// returns an error wrapping errProblems when something could not be healed.
func runHeal(ctx context.Context, o healOptions, d deps) error {
	if o.Online {
		return requestOnlineHeal(ctx, o, d)
	}
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
	if err := refuseCluster(ctx, "admin heal", o.Store, sopt); err != nil {
		_ = sopt.Index.Close()
		return err
	}
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
