package docstest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// flagSet is a command's flags as its own -h output prints them (Go's
// flag.PrintDefaults), and the subcommands its usage names.
type flagSet struct {
	flags map[string]string // name → type word ("" for a boolean)
	subs  map[string]bool
}

var (
	defaultLine = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9_.-]*)(?: (\S+))?`)
	commandLine = regexp.MustCompile(`^  ([a-z][a-z-]*)\s{2,}\S`)
)

// probe runs "BIN SUB… -h" and reads the flag set from what it prints.
func (c *Checker) probe(ctx context.Context, prog string, path []string) (*flagSet, error) {
	key := prog + " " + strings.Join(path, " ")
	if fs, ok := c.flags[key]; ok {
		return fs, nil
	}
	bin, ok := c.Bin[prog]
	if !ok {
		return nil, fmt.Errorf("no binary of %s to read its flags from", prog)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	text := c.output(ctx, bin, append(append([]string{}, path...), "-h")...)
	if strings.Contains(text, "unknown command") {
		return nil, fmt.Errorf("%s has no command %q", prog, strings.Join(path, " "))
	}
	last := prog
	if len(path) > 0 {
		last = path[len(path)-1]
	}
	fs := parseHelp(text, last)
	if c.flags == nil {
		c.flags = map[string]*flagSet{}
	}
	c.flags[key] = fs
	return fs, nil
}

// output runs bin with args and returns what it printed on stdout and
// stderr (-h exits 0 or 2; the output is what counts).
func (c *Checker) output(ctx context.Context, bin string, args ...string) string {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, c.Env...)
	_ = cmd.Run()
	return out.String()
}

// parseHelp reads a -h output: the flags as flag.PrintDefaults prints
// them, and the subcommands, from a "Commands:" list or from usage lines
// naming "last SUB".
func parseHelp(text, last string) *flagSet {
	fs := &flagSet{flags: map[string]string{}, subs: map[string]bool{}}
	inCommands := false
	subOf := regexp.MustCompile(`^\s+` + regexp.QuoteMeta(last) + ` ([a-z][a-z-]*)\b`)
	for _, line := range strings.Split(text, "\n") {
		if m := defaultLine.FindStringSubmatch(line); m != nil {
			fs.flags[m[1]] = m[2]
			continue
		}
		if strings.HasPrefix(line, "Commands:") {
			inCommands = true
			continue
		}
		if m := commandLine.FindStringSubmatch(line); inCommands && m != nil {
			fs.subs[m[1]] = true
			continue
		}
		inCommands = inCommands && strings.HasPrefix(line, " ") && strings.TrimSpace(line) != ""
		if m := subOf.FindStringSubmatch(line); m != nil {
			fs.subs[m[1]] = true
		}
	}
	return fs
}

// needsCommand: programs that do nothing without a command (elicitation
// alone prints its usage and exits 2).
var needsCommand = map[string]bool{"elicitation": true}

// checkOurs checks the arguments of one of our programs against its real
// flag sets, command by command: unknown flags, flags without their value,
// values that do not parse as the flag's type, unknown subcommands.
func (c *Checker) checkOurs(ctx context.Context, prog string, args []string) error {
	fs, err := c.probe(ctx, prog, nil)
	if err != nil {
		return err
	}
	if needsCommand[prog] && (len(args) == 0 || strings.HasPrefix(args[0], "-") && !isHelp(args[0])) {
		return fmt.Errorf("%s without a command prints its usage and exits 2: name the command (%s serve …)", prog, prog)
	}
	w := &argWalk{c: c, ctx: ctx, prog: prog, fs: fs}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if stop, err := w.positional(a); stop || err != nil {
				return err
			}
			continue
		}
		used, err := w.flag(a, args[i+1:])
		if err != nil || used < 0 {
			return err
		}
		i += used
	}
	return nil
}

func isHelp(a string) bool {
	name := strings.TrimLeft(a, "-")
	return name == "h" || name == "help"
}

// argWalk is where checkOurs is in a program's commands.
type argWalk struct {
	c    *Checker
	ctx  context.Context
	prog string
	path []string
	fs   *flagSet
}

// positional takes a word that is not a flag: a subcommand moves the walk
// into it; anything else is a positional argument, where Go's flag
// package stops (stop).
func (w *argWalk) positional(a string) (stop bool, err error) {
	if w.fs.subs[a] {
		w.path = append(w.path, a)
		w.fs, err = w.c.probe(w.ctx, w.prog, w.path)
		return err != nil, err
	}
	if len(w.fs.subs) > 0 && len(w.path) == 0 {
		return true, fmt.Errorf("%s has no command %q", w.prog, a)
	}
	if len(w.fs.subs) > 0 && !isPlaceholder(a) {
		return true, fmt.Errorf("%s %s has no command %q", w.prog, strings.Join(w.path, " "), a)
	}
	return true, nil
}

// flag checks one -name[=value] with the words after it (rest) and
// returns how many of them it took as its value; -1 ends the walk (-h).
func (w *argWalk) flag(a string, rest []string) (int, error) {
	name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
	typ, ok := w.fs.flags[name]
	switch {
	case !ok && isHelp(name):
		return -1, nil
	case !ok:
		return 0, fmt.Errorf("%s %s has no flag -%s", w.prog, strings.Join(w.path, " "), name)
	case typ == "" && hasValue:
		if _, err := strconv.ParseBool(value); err != nil {
			return 0, fmt.Errorf("-%s=%s: a boolean flag takes true or false", name, value)
		}
		return 0, nil
	case typ == "":
		return 0, nil
	}
	used := 0
	if !hasValue {
		if len(rest) == 0 {
			return 0, fmt.Errorf("-%s %w", name, errNoValue)
		}
		value, used = rest[0], 1
	}
	if err := checkValue(typ, value); err != nil {
		return 0, fmt.Errorf("-%s %s: %v", name, value, err)
	}
	return used, nil
}

func checkValue(typ, v string) error {
	if isPlaceholder(v) {
		return nil
	}
	switch typ {
	case "duration":
		if _, err := time.ParseDuration(v); err != nil {
			return fmt.Errorf("not a duration like 20s or 168h")
		}
	case "int", "uint", "int64", "uint64":
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("not an integer")
		}
	case "float":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("not a number")
		}
	}
	return nil
}

// isPlaceholder tells a value the reader substitutes (<id>, elk_…, $KEY).
func isPlaceholder(s string) bool {
	return strings.Contains(s, "…") || (strings.Contains(s, "<") && strings.Contains(s, ">"))
}
