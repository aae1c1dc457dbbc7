package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
)

// version is set at link time with -ldflags "-X main.version=v1.2.3". It is
// the one package-level variable of the command, written only by the linker.
var version = "dev"

// versionOptions are the (no) flags of "cairn version".
type versionOptions struct{}

func versionCommand(done func(invocation)) *cobra.Command {
	return leafCommand("version", "Print the version of cairn and of Go it was built with", "  cairn version",
		func(c *cobra.Command, args []string) error {
			if err := noArgs(c, args); err != nil {
				return err
			}
			done(invocation{name: "version", opts: versionOptions{}, logLevel: zerolog.InfoLevel})
			return nil
		})
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
