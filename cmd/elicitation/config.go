package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/compose"
)

// Config is everything the local server needs: compose.Settings, from
// flags over the environment (ELICITATION_*) over compose.Table's defaults.
type Config = compose.Settings

// storeNames are the settings every command that opens the store shares.
var storeNames = []string{"data-dir", "store", "table", "create-table"}

// bind reads the environment into c (over the defaults) and binds the
// flags of the local settings named (all of them if none) to fs, so that
// a flag overrides its variable. A bad environment value is the error,
// naming the variable.
func bind(fs *flag.FlagSet, c *Config, getenv func(string) string, names ...string) error {
	s, err := compose.FromEnv(getenv, compose.Local, names...)
	if err != nil {
		return err
	}
	*c = s
	bindFlags(fs, c, names...)
	return nil
}

// bindFlags binds the flags of the local settings named (all if none) to
// fields of c as they are now: a second flag set over the same settings
// (flags given after a subcommand) starts from what the first one read.
func bindFlags(fs *flag.FlagSet, c *Config, names ...string) {
	for _, row := range compose.Table {
		if row.In(compose.Local) && (len(names) == 0 || slices.Contains(names, row.Name)) {
			fs.Var(row.Value(c), row.Name, row.Help())
		}
	}
}

// storeFlags binds the store's settings (the operator commands).
func storeFlags(fs *flag.FlagSet, c *Config, getenv func(string) string) error {
	return bind(fs, c, getenv, storeNames...)
}

func parseServe(args []string, stderr io.Writer, getenv func(string) string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("elicitation serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := bind(fs, &c, getenv); err != nil {
		return Config{}, err
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, extraArgs(args, fs.Args())
	}
	if err := c.Check(compose.Local); err != nil {
		return Config{}, err
	}
	c.Version = version
	return c, nil
}

// extraArgs is the error for words after serve's flags. A boolean flag
// takes its value after "=" (as every Go flag set does): "--bar-owner
// false" sets --bar-owner and leaves "false" over, so the error shows the
// form that works.
func extraArgs(args, rest []string) error {
	err := fmt.Errorf("serve takes no arguments, got %q", strings.Join(rest, " "))
	if v := rest[0]; (v == "true" || v == "false") && len(args) > len(rest) {
		if prev := args[len(args)-len(rest)-1]; strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") {
			return fmt.Errorf("%w: a boolean flag takes its value after \"=\", as in %s=%s", err, prev, v)
		}
	}
	return err
}
