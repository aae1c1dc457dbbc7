package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/rs/zerolog"
)

// version is set at link time with -ldflags "-X main.version=v1.2.3". It is
// the one package-level variable of the command, written only by the linker.
var version = "dev"

// versionOptions are the (no) flags of "cairn version".
type versionOptions struct{}

func parseVersion(args []string) (invocation, error) {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if help, err := parseFlags(fs, args); help != nil || err != nil {
		return deref(help), err
	}
	return invocation{name: "version", opts: versionOptions{}, logLevel: zerolog.InfoLevel}, nil
}

// runVersion prints "cairn <version> (<go version>)".
func runVersion(w io.Writer, _ versionOptions) error {
	_, err := fmt.Fprintf(w, "cairn %s (%s)\n", resolveVersion(version), runtime.Version())
	if err != nil {
		return fmt.Errorf("print version: %w", err)
	}
	return nil
}

// resolveVersion prefers the linker-set version, then the module version
// recorded by "go install module@version", then "dev".
func resolveVersion(linked string) string {
	if linked != "" && linked != "dev" {
		return linked
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
