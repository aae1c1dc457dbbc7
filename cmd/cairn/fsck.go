package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairnstore/cairn/objstore"
)

// fsckOptions are the flags of "cairn admin fsck".
type fsckOptions struct {
	Store storeFlags
	JSON  bool
	Log   logFlags
}

func fsckCommand(done func(invocation)) *cobra.Command {
	var o fsckOptions
	c := leafCommand("fsck", "Check a stopped store's shards against its index (changes nothing)",
		`  cairn admin fsck --data /var/lib/cairn
  cairn admin fsck --data /var/lib/cairn --json | jq .missing_shards`,
		func(c *cobra.Command, args []string) error {
			if err := noArgs(c, args); err != nil {
				return err
			}
			if err := o.Store.check("admin fsck"); err != nil {
				return err
			}
			lvl, err := o.Log.level("admin fsck")
			if err != nil {
				return err
			}
			done(invocation{name: "admin fsck", opts: o, logLevel: lvl})
			return nil
		})
	fs := c.Flags()
	o.Store.register(fs)
	o.Log.register(fs)
	fs.BoolVar(&o.JSON, "json", false, "print the full report as JSON on stdout (logs stay on stderr)")
	return c
}

// runFsck checks the data directory offline and prints the report. It
// returns an error wrapping errProblems when the report is not clean.
func runFsck(ctx context.Context, o fsckOptions, d deps) error {
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
	if err := refuseCluster(ctx, "admin fsck", o.Store, sopt); err != nil {
		_ = sopt.Index.Close()
		return err
	}
	bar := newProgress(d.stderr, d.tty)
	rep, err := d.fsck(ctx, sopt, bar.update)
	bar.finish()
	if err != nil {
		return fmt.Errorf("fsck %s: %w", sopt.Dir, err)
	}
	if o.JSON {
		if err := writeJSON(d.stdout, rep); err != nil {
			return err
		}
	} else if err := printFsck(d.stdout, rep); err != nil {
		return err
	}
	if !rep.Clean() {
		return fmt.Errorf("%w: fsck found %d orphan, %d missing and %d corrupt shards, %d objects with lost data, %d dangling references and %d index problems",
			errProblems, len(rep.OrphanShards), len(rep.MissingShards), len(rep.CorruptShards), len(rep.LostData), len(rep.Dangling), len(rep.Index))
	}
	return nil
}

func printFsck(w io.Writer, r objstore.FsckReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "checked %d versions, %d data objects, %d shard files\n", r.Versions, r.DataObjects, r.ShardFiles)
	printRefs(&b, "orphan shards", r.OrphanShards)
	printRefs(&b, "missing shards", r.MissingShards)
	printRefs(&b, "corrupt shards", r.CorruptShards)
	printRefs(&b, "lost data", r.LostData)
	printLines(&b, "dangling", r.Dangling)
	printLines(&b, "index problems", r.Index)
	if r.Clean() {
		b.WriteString("clean\n")
	} else {
		b.WriteString("problems found; 'cairn admin heal' repairs what parity allows\n")
	}
	return writeOut(w, b.String())
}

// maxListed caps the shard references printed per class; --json has them all.
const maxListed = 20

// printRefs prints a count line and, indented, the first maxListed refs.
func printRefs(b *strings.Builder, what string, refs []objstore.ShardRef) {
	fmt.Fprintf(b, "%-16s %d\n", what+":", len(refs))
	for i, r := range refs {
		if i == maxListed {
			fmt.Fprintf(b, "  ... and %d more (use --json for all)\n", len(refs)-maxListed)
			break
		}
		fmt.Fprintf(b, "  %s\n", formatRef(r))
	}
}

// printLines is printRefs for problems told as sentences.
func printLines(b *strings.Builder, what string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "%-16s %d\n", what+":", len(lines))
	for i, l := range lines {
		if i == maxListed {
			fmt.Fprintf(b, "  ... and %d more (use --json for all)\n", len(lines)-maxListed)
			break
		}
		fmt.Fprintf(b, "  %s\n", l)
	}
}

func formatRef(r objstore.ShardRef) string {
	where := "all drives"
	if r.Drive >= 0 {
		where = fmt.Sprintf("drive %d", r.Drive)
	}
	s := fmt.Sprintf("%s data %s", where, r.DataID)
	if r.Bucket != "" || r.Key != "" {
		s += fmt.Sprintf(" (%s/%s)", r.Bucket, r.Key)
	}
	if r.Path != "" {
		s += " " + r.Path
	}
	return s
}

// writeOut writes a finished report to w.
func writeOut(w io.Writer, s string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// writeJSON writes v as indented JSON and a newline. Nil slices are
// written as [] (emptyLists), so that scripts can iterate any list field
// without checking for null.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(emptyLists(reflect.ValueOf(v)).Interface()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// emptyLists is a copy of v with every nil slice in it, however deep in
// structs, slices and pointers, made empty.
func emptyLists(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if f := out.Field(i); f.CanSet() {
				f.Set(emptyLists(v.Field(i)))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return reflect.MakeSlice(v.Type(), 0, 0)
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(emptyLists(v.Index(i)))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(emptyLists(v.Elem()))
		return p
	}
	return v
}
