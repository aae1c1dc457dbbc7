package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// leaves is every command of the tree that does something, as its
// arguments after "cairn" ("admin user add").
func leaves(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, s := range c.Commands() {
			p := append(append([]string(nil), path...), s.Name())
			if s.HasSubCommands() {
				walk(s, p)
			} else {
				out = append(out, p)
			}
		}
	}
	walk(newRootCmd(func(invocation) {}), nil)
	if len(out) < 20 {
		t.Fatalf("only %d commands found: %q", len(out), out)
	}
	return out
}

// find returns the command at path.
func find(t *testing.T, path []string) *cobra.Command {
	t.Helper()
	c, _, err := newRootCmd(func(invocation) {}).Find(path)
	if err != nil {
		t.Fatalf("find %q: %v", path, err)
	}
	return c
}

// runArgs runs cairn with args and returns the exit code and outputs.
func runArgs(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr, false)
	return code, stdout.String(), stderr.String()
}

// TestEveryCommandHelp: -h and --help (and -help) of every command print
// its usage with every one of its flags and exit 0, and "cairn --help"
// names every command.
func TestEveryCommandHelp(t *testing.T) {
	code, top, _ := runArgs("--help")
	if code != exitOK {
		t.Fatalf("cairn --help: exit %d", code)
	}
	for _, path := range leaves(t) {
		name := strings.Join(path, " ")
		if path[0] != "completion" && path[0] != "help" && !strings.Contains(top, "cairn "+name) {
			t.Errorf("cairn --help does not list %q:\n%s", name, top)
		}
		for _, h := range []string{"-h", "--help", "-help"} {
			t.Run(name+" "+h, func(t *testing.T) {
				code, out, errOut := runArgs(append(append([]string(nil), path...), h)...)
				if code != exitOK {
					t.Fatalf("exit %d, stderr %q", code, errOut)
				}
				if !strings.Contains(out, "Usage:") || !strings.Contains(out, "cairn "+name) {
					t.Fatalf("no usage of %q:\n%s", name, out)
				}
				find(t, path).Flags().VisitAll(func(f *pflag.Flag) {
					if !strings.Contains(out, "--"+f.Name) {
						t.Errorf("help does not list --%s:\n%s", f.Name, out)
					}
				})
				if c := find(t, path); c.Example != "" && !strings.Contains(out, "Examples:") {
					t.Errorf("help shows no examples:\n%s", out)
				}
			})
		}
	}
	for _, group := range [][]string{{"admin"}, {"admin", "user"}, {"admin", "table-bucket"}, {"admin", "catalog"}, {"bench"}} {
		code, out, _ := runArgs(append(group, "--help")...)
		if code != exitOK {
			t.Fatalf("%q --help: exit %d", group, code)
		}
		for _, path := range leaves(t) {
			if strings.HasPrefix(strings.Join(path, " ")+" ", strings.Join(group, " ")+" ") && !strings.Contains(out, "cairn "+strings.Join(path, " ")) {
				t.Errorf("cairn %s --help does not list %q:\n%s", strings.Join(group, " "), path, out)
			}
		}
	}
}

// TestEveryCommandSuggests: a misspelt flag of every command names the
// right one, and a misspelt command names the nearest.
func TestEveryCommandSuggests(t *testing.T) {
	for _, path := range leaves(t) {
		c := find(t, path)
		var flag string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if flag == "" && len(f.Name) > 3 && f.Name != "help" {
				flag = f.Name
			}
		})
		if flag == "" {
			continue
		}
		typo := flag[:len(flag)-2] + flag[len(flag)-1:] // one letter dropped
		t.Run(strings.Join(path, " "), func(t *testing.T) {
			code, _, errOut := runArgs(append(append([]string(nil), path...), "--"+typo, "x")...)
			want := "unknown flag --" + typo + "; did you mean --" + flag
			if code != exitError || !strings.Contains(errOut, want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, exitError, want)
			}
		})
	}
	for _, tc := range []struct{ args, want string }{
		{"serv", `unknown command "serv"; did you mean serve?`},
		{"admin tabel-bucket list", `unknown admin command "tabel-bucket"; did you mean table-bucket?`},
		{"admin user ad x", `unknown admin user command "ad"; did you mean add?`},
		{"admin catalog staus wh", `unknown admin catalog command "staus"; did you mean status?`},
		{"admin table-bucket create x --endpont http://h:1", "unknown flag --endpont; did you mean --endpoint?"},
		{"serve --data d --parity-x 1", "unknown flag --parity-x; did you mean --parity?"},
	} {
		code, _, errOut := runArgs(strings.Fields(tc.args)...)
		if code != exitError || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "usage") {
			t.Errorf("cairn %s: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, exitError, tc.want)
		}
	}
}

// TestFlagsAnywhere: flags go before, between or after the positional
// arguments, with one dash or two.
func TestFlagsAnywhere(t *testing.T) {
	t.Setenv(endpointEnv, "")
	tb := func(action, name, ep string) tableBucketOptions {
		return tableBucketOptions{Action: action, Name: name, Endpoint: ep}
	}
	for _, tc := range []struct {
		args string
		want any
	}{
		{"admin table-bucket create lake --endpoint http://h:1", tb("create", "lake", "http://h:1")},
		{"admin table-bucket create --endpoint http://h:1 lake", tb("create", "lake", "http://h:1")},
		{"admin table-bucket create --endpoint=h:1 lake", tb("create", "lake", "http://h:1")},
		{"admin table-bucket create -endpoint h:1 lake", tb("create", "lake", "http://h:1")},
		{"admin table-bucket delete lake", tb("delete", "lake", defaultEndpoint)},
		{"admin user add --secret s3cr3t-key --endpoint h:2 alice --policy readonly",
			userOptions{Action: "add", Name: "alice", Secret: "s3cr3t-key", Policy: "readonly", Endpoint: "http://h:2"}},
		{"admin user remove --endpoint h:2 alice", userOptions{Action: "remove", Name: "alice", Policy: "", Endpoint: "http://h:2"}},
		{"admin catalog status --json wh", catalogOptions{Verb: catalogVerbStatus, Warehouse: "wh", JSON: true, Endpoint: defaultEndpoint, Timeout: 5 * time.Minute}},
		{"admin catalog migration --endpoint h:3 preflight wh", catalogOptions{Verb: catalogVerbPreflight, Warehouse: "wh", Endpoint: "http://h:3", Timeout: 5 * time.Minute}},
	} {
		inv, err := parseArgs(strings.Fields(tc.args))
		if err != nil {
			t.Errorf("cairn %s: %v", tc.args, err)
			continue
		}
		if got, want := inv.opts, tc.want; !reflect.DeepEqual(got, want) {
			t.Errorf("cairn %s:\n got %#v\nwant %#v", tc.args, got, want)
		}
	}
	inv, err := parseArgs(strings.Fields("mount /mnt --data /d --drive /a --drive=/b"))
	if err != nil {
		t.Fatal(err)
	}
	if o := inv.opts.(mountOptions); o.Mountpoint != "/mnt" || o.Store.Data != "/d" || strings.Join(o.Store.Drive, ",") != "/a,/b" {
		t.Errorf("mount options %+v", o)
	}
}
