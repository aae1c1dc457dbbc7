package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command tree is cobra's: it parses flags before, between and after
// positional arguments, writes -h/--help for every command, generates shell
// completion and suggests the nearest command for a misspelt one. Cobra
// only parses here: a leaf's RunE validates its options and hands them to
// done as an invocation; main runs it afterwards (dispatch), so parsing
// stays a pure function that the tests call.
//
// Adding a command is a constructor in the command's file,
//
//	func doctorCommand(done func(invocation)) *cobra.Command {
//		var o doctorOptions
//		c := leafCommand("doctor", "Check a running server", "  cairn admin doctor", func(c *cobra.Command, args []string) error {
//			if err := noArgs(c, args); err != nil { return err }
//			done(invocation{name: commandName(c), opts: o, logLevel: zerolog.InfoLevel})
//			return nil
//		})
//		o.Endpoint.register(c.Flags(), "the server's")
//		return c
//	}
//
// one line in newRootCmd (or adminCommand), and one case in dispatch.

// rootLong is the top of "cairn --help".
const rootLong = `Cairn: one store, served as S3, Iceberg REST and a POSIX mount.

serve runs the server; mount mounts a store without serving it; the admin
commands check and repair a stopped store (fsck, heal) or manage a running
server (user, table-bucket, catalog). Commands that talk to a running server
take --endpoint, else $CAIRN_ENDPOINT, else http://127.0.0.1:9000 (the
address 'cairn serve' and 'make run' listen on by default).`

// newRootCmd builds the command tree. Each leaf's RunE passes its checked
// options to done; nothing runs.
func newRootCmd(done func(invocation)) *cobra.Command {
	root := groupCommand("cairn", "The Cairn storage server and its tools", rootLong)
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(
		serveCommand(done),
		mountCommand(done),
		adminCommand(done),
		benchCommand(done),
		versionCommand(done),
	)
	def := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c.Annotations[groupAnnotation] == "" {
			def(c, args)
			return
		}
		writeGroupHelp(c)
	})
	return root
}

// parseArgs turns the arguments after the program name into an
// invocation: the command's checked options, or text to print (help,
// completion scripts). Errors wrap errUsage.
func parseArgs(args []string) (invocation, error) {
	var inv *invocation
	root := newRootCmd(func(i invocation) { inv = &i })
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(io.Discard)
	root.SetArgs(longFlagDashes(root, args))
	c, err := root.ExecuteC()
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			return invocation{}, err
		}
		return invocation{}, usageErrorf(commandName(c), "%v", err)
	}
	if inv == nil {
		return invocation{name: "help", opts: helpOptions{text: out.String()}, logLevel: zerolog.InfoLevel}, nil
	}
	return *inv, nil
}

// groupAnnotation marks the commands that only hold others (admin, admin
// user, ...).
const groupAnnotation = "cairn-group"

// groupCommand is a command that holds others. Run alone it names its
// commands; run with an unknown one it suggests the nearest.
func groupCommand(name, short, long string) *cobra.Command {
	return &cobra.Command{
		Use:         name,
		Short:       short,
		Long:        long,
		Annotations: map[string]string{groupAnnotation: "yes"},
		Args:        cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			var names []string
			for _, s := range c.Commands() {
				if s.IsAvailableCommand() && s.Name() != "help" && s.Name() != "completion" {
					names = append(names, s.Name())
				}
			}
			what := strings.TrimPrefix(commandName(c)+" command", " ")
			if len(args) > 0 && args[0] == "help" {
				return c.Help() // "cairn admin help", as "cairn help"
			}
			if len(args) == 0 {
				if c.HasParent() {
					return usageErrorf(commandName(c), "no %s given: want %s", what, orList(names))
				}
				return usageErrorf("", "no command given: want %s", orList(names))
			}
			return usageErrorf(commandName(c), "unknown %s %q%s", what, args[0], didYouMean(args[0], names, ""))
		},
	}
}

// leafCommand is a command that does something. use is its name and
// arguments ("add NAME"); example is indented lines of examples.
func leafCommand(use, short, example string, run func(*cobra.Command, []string) error) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cobra.ArbitraryArgs, // checked by run, in its own words
		RunE:    run,
	}
}

// commandName is c's path without the program name: "admin user add".
func commandName(c *cobra.Command) string {
	if c == nil {
		return ""
	}
	return strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "cairn"), " ")
}

// noArgs refuses positional arguments.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf(commandName(c), "unexpected argument %q", args[0])
	}
	return nil
}

// oneArg returns the one positional argument, what is what it names.
func oneArg(c *cobra.Command, args []string, what string) (string, error) {
	switch len(args) {
	case 0:
		return "", usageErrorf(commandName(c), "want the %s (%s)", what, strings.TrimSuffix(c.UseLine(), " [flags]"))
	case 1:
		return args[0], nil
	default:
		return "", usageErrorf(commandName(c), "unexpected argument %q (one %s only)", args[1], what)
	}
}

// flagError turns pflag's errors into usage errors; an unknown flag gets
// the nearest flag of the command as a suggestion.
func flagError(c *cobra.Command, err error) error {
	// pflag's "unknown flag: --name" and "unknown shorthand flag: 'x' in -xyz".
	unknownFlag := regexp.MustCompile(`^unknown (?:shorthand )?flag: (?:'.' in )?-{1,2}([^\s=]+)`)
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return usageErrorf(commandName(c), "%v", err)
	}
	var names []string
	add := func(f *pflag.Flag) { names = append(names, f.Name) }
	c.Flags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return usageErrorf(commandName(c), "unknown flag --%s%s", m[1], didYouMean(m[1], names, "--"))
}

// didYouMean is "; did you mean X?" for the names nearest typed, or "".
func didYouMean(typed string, names []string, prefix string) string {
	near := suggest(typed, names)
	if len(near) == 0 {
		return ""
	}
	for i := range near {
		near[i] = prefix + near[i]
	}
	return "; did you mean " + orList(near) + "?"
}

// suggest returns the names within a small edit distance of typed (a
// third of its length, at least 2), or that it is a prefix of, nearest
// first.
func suggest(typed string, names []string) []string {
	limit := max(2, len(typed)/3)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, n := range names {
		d := levenshtein(strings.ToLower(typed), strings.ToLower(n))
		if d <= limit || (len(typed) >= 2 && strings.HasPrefix(n, typed)) {
			cs = append(cs, cand{n, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for _, c := range cs {
		if !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// levenshtein is the edit distance of a and b (insertions, deletions,
// substitutions), over bytes: flag and command names are ASCII.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// longFlagDashes rewrites -name and -name=value to --name... when name is
// a long flag of some command (or help): Go's flag package, which cairn
// used before, took long flags with one dash, and scripts may still.
// Arguments after "--" are left alone.
func longFlagDashes(root *cobra.Command, args []string) []string {
	known := map[string]bool{"help": true}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if len(name) > 1 && known[name] {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	return out
}

// writeGroupHelp is the help of a group: every command under it, to the
// leaves, with its arguments, then the group's own flags.
func writeGroupHelp(c *cobra.Command) {
	var b strings.Builder
	if c.Long != "" {
		b.WriteString(c.Long + "\n\n")
	} else {
		b.WriteString(c.Short + ".\n\n")
	}
	fmt.Fprintf(&b, "Usage:\n  %s COMMAND [flags]\n\nCommands:\n", c.CommandPath())
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	var walk func(*cobra.Command)
	walk = func(g *cobra.Command) {
		for _, s := range g.Commands() {
			switch {
			case !s.IsAvailableCommand():
			case s.Annotations[groupAnnotation] != "":
				walk(s)
			case s.Name() == "completion":
				_, _ = fmt.Fprintf(tw, "  %s bash|zsh|fish|powershell\t%s\n", s.CommandPath(), "Print a shell completion script")
			default:
				_, _ = fmt.Fprintf(tw, "  %s\t%s\n", strings.TrimSuffix(s.UseLine(), " [flags]"), s.Short)
			}
		}
	}
	walk(c)
	_ = tw.Flush()
	if c.Example != "" {
		fmt.Fprintf(&b, "\nExamples:\n%s\n", c.Example)
	}
	fmt.Fprintf(&b, "\nFlags:\n%s", c.LocalFlags().FlagUsages())
	fmt.Fprintf(&b, "\nRun '%s COMMAND --help' for the flags and examples of a command.\n", c.CommandPath())
	_, _ = io.WriteString(c.OutOrStdout(), b.String())
}

// defaultEndpoint is where the online commands find the server: the
// address 'cairn serve' and 'make run' listen on by default.
const defaultEndpoint = "http://" + defaultAddress

// endpointEnv overrides defaultEndpoint for every online command.
const endpointEnv = "CAIRN_ENDPOINT"

// endpointFlag is --endpoint of the commands that talk to a running
// server.
type endpointFlag struct {
	Value string
}

func (e *endpointFlag) register(fs *pflag.FlagSet, what string) {
	fs.StringVar(&e.Value, "endpoint", "", what+" `URL` or HOST:PORT (default $"+endpointEnv+", else "+defaultEndpoint+")")
}

// online is the check every command that calls a running server as
// root makes once its arguments are read: the endpoint resolved (into
// *endpoint) and the root credentials' variables set both or neither.
func (e endpointFlag) online(cmd string, endpoint *string) error {
	var err error
	if *endpoint, err = e.resolve(cmd); err != nil {
		return err
	}
	return checkRootEnv(cmd)
}

// nameArg reads a leaf's positional arguments: none for "list", else the
// one name (what names it in the error).
func nameArg(c *cobra.Command, action string, args []string, what string) (string, error) {
	if action == "list" {
		return "", noArgs(c, args)
	}
	return oneArg(c, args, what)
}

// resolve is the endpoint as a base URL without a trailing slash:
// --endpoint, else $CAIRN_ENDPOINT, else defaultEndpoint.
func (e endpointFlag) resolve(cmd string) (string, error) {
	v, from := e.Value, "--endpoint"
	if v == "" {
		v, from = os.Getenv(endpointEnv), "$"+endpointEnv
	}
	if v == "" {
		return defaultEndpoint, nil
	}
	u, err := normaliseEndpoint(v)
	if err != nil {
		return "", usageErrorf(cmd, "%s %q: %v", from, v, err)
	}
	return u, nil
}

// normaliseEndpoint accepts http(s)://HOST[:PORT][/path] or HOST:PORT
// (taken as http).
func normaliseEndpoint(v string) (string, error) {
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", errors.New("want http://HOST:PORT, https://HOST:PORT or HOST:PORT")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("want http://HOST:PORT, https://HOST:PORT or HOST:PORT")
	}
	if p := u.Port(); p != "" {
		if n, err := parsePort(p); err != nil || n == 0 {
			return "", fmt.Errorf("port %q: want 1-65535", p)
		}
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// parsePort reads a TCP port number, 0-65535.
func parsePort(p string) (int, error) {
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return 0, errors.New("not a port")
	}
	return int(n), nil
}
