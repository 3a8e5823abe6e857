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
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append(append([]string{}, path...), "-h")...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, c.Env...)
	_ = cmd.Run() // -h exits 0 or 2; the output is what counts
	fs := &flagSet{flags: map[string]string{}, subs: map[string]bool{}}
	text := out.String()
	if strings.Contains(text, "unknown command") {
		return nil, fmt.Errorf("%s has no command %q", prog, strings.Join(path, " "))
	}
	inCommands := false
	last := prog
	if len(path) > 0 {
		last = path[len(path)-1]
	}
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
		if inCommands {
			if m := commandLine.FindStringSubmatch(line); m != nil {
				fs.subs[m[1]] = true
				continue
			}
			if strings.TrimSpace(line) == "" || !strings.HasPrefix(line, " ") {
				inCommands = false
			}
		}
		if m := subOf.FindStringSubmatch(line); m != nil {
			fs.subs[m[1]] = true
		}
	}
	if hc, ok := helpCommand[prog]; ok && len(path) == 0 {
		// This program's -h is its default command's; its commands are
		// listed by its help command.
		fs.flags = map[string]string{}
		var help bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, hc)
		cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, c.Env...)
		cmd.Stdout, cmd.Stderr = &help, &help
		_ = cmd.Run()
		inCommands = false
		for _, line := range strings.Split(help.String(), "\n") {
			if strings.HasPrefix(line, "Commands:") {
				inCommands = true
				continue
			}
			if m := commandLine.FindStringSubmatch(line); inCommands && m != nil {
				fs.subs[m[1]] = true
			}
		}
		if len(fs.subs) == 0 {
			return nil, fmt.Errorf("%s %s listed no commands", prog, hc)
		}
	}
	if c.flags == nil {
		c.flags = map[string]*flagSet{}
	}
	c.flags[key] = fs
	return fs, nil
}

// helpCommand lists a program's commands (its -h is its default command's).
var helpCommand = map[string]string{"elicitation": "help"}

// defaultSub is the command a program runs when its first argument is a flag.
var defaultSub = map[string]string{"elicitation": "serve"}

// checkOurs checks the arguments of one of our programs against its real
// flag sets, command by command: unknown flags, flags without their value,
// values that do not parse as the flag's type, unknown subcommands.
func (c *Checker) checkOurs(ctx context.Context, prog string, args []string) error {
	var path []string
	fs, err := c.probe(ctx, prog, nil)
	if err != nil {
		return err
	}
	if len(fs.subs) > 0 && (len(args) == 0 || strings.HasPrefix(args[0], "-")) {
		if d, ok := defaultSub[prog]; ok {
			path = []string{d}
			if fs, err = c.probe(ctx, prog, path); err != nil {
				return err
			}
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if fs.subs[a] {
				path = append(path, a)
				if fs, err = c.probe(ctx, prog, path); err != nil {
					return err
				}
				continue
			}
			if len(fs.subs) > 0 && len(path) == 0 {
				return fmt.Errorf("%s has no command %q", prog, a)
			}
			if len(fs.subs) > 0 && !isPlaceholder(a) {
				return fmt.Errorf("%s %s has no command %q", prog, strings.Join(path, " "), a)
			}
			// A positional argument: Go's flag package stops here.
			return nil
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		typ, ok := fs.flags[name]
		if !ok {
			if name == "h" || name == "help" {
				return nil
			}
			return fmt.Errorf("%s %s has no flag -%s", prog, strings.Join(path, " "), name)
		}
		if typ == "" {
			if hasValue {
				if _, err := strconv.ParseBool(value); err != nil {
					return fmt.Errorf("-%s=%s: a boolean flag takes true or false", name, value)
				}
			}
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return fmt.Errorf("-%s %w", name, errNoValue)
			}
			i++
			value = args[i]
		}
		if err := checkValue(typ, value); err != nil {
			return fmt.Errorf("-%s %s: %v", name, value, err)
		}
	}
	return nil
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
