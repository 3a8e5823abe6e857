package docstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Kind is what a block is checked as.
type Kind int

const (
	Prose Kind = iota // not checked (diagrams, output, Go, Liquid, …)
	Shell             // commands: parsed, each command checked
	JSON              // configuration or a result: parsed, host shapes validated
	YAML              // configuration: parsed, proxy configs and host shapes validated
)

var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "zsh": true, "console": true}

// Classify tells how a block is checked. Fenced blocks are classified by
// their language; an unlabelled or indented block counts as shell when its
// first line (not a comment) starts with a program this repository
// documents, so that a bare block of commands is not silently skipped.
func Classify(b Block) Kind {
	switch {
	case shellLangs[b.Lang]:
		return Shell
	case b.Lang == "json":
		return JSON
	case b.Lang == "yaml" || b.Lang == "yml":
		return YAML
	case b.Lang != "":
		return Prose
	}
	for _, line := range strings.Split(b.Text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, _, _ := strings.Cut(line, " ")
		if word == "$" || strings.HasPrefix(word, "$") && assignment.MatchString(word[1:]+"=") || assignment.MatchString(word) {
			return Shell // a prompt, a command held in a variable, an assignment
		}
		if bareCommandWords[word] {
			return Shell
		}
		return Prose
	}
	return Prose
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// bareCommandWords start an unlabelled block of commands.
var bareCommandWords = map[string]bool{
	"go": true, "make": true, "npm": true, "npx": true, "node": true, "curl": true,
	"sam": true, "aws": true, "elicitation": true, "mcp-elicitation-proxy": true,
	"bin/elicitation": true, "bin/mcp-elicitation-proxy": true, "./bin/elicitation": true,
	"./bin/mcp-elicitation-proxy": true, "claude": true, "code": true, "goose": true,
	"git": true, "export": true, "sudo": true,
}

// Checker checks blocks against the repository at Root.
type Checker struct {
	Root string
	// Bin maps our program names (elicitation, mcp-elicitation-proxy) to
	// binaries built from the tree; their flag sets are read from -h.
	Bin map[string]string
	// Server, if set, is the base URL of a started local server (as
	// http://127.0.0.1:PORT): commands the docs aim at LocalURL run
	// against it (run.go says which).
	Server string
	// Ran counts the commands run against the server.
	Ran int
	// Env is added to the environment of the programs run (for example
	// XDG_DATA_HOME, so that nothing is written into the tree).
	Env     []string
	flags   map[string]*flagSet
	aliases map[string]string // binaries built by an earlier command of the block
}

// Check returns every problem of one block.
func (c *Checker) Check(ctx context.Context, b Block) []error {
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", b.File, line, fmt.Sprintf(format, args...)))
	}
	c.aliases = nil
	switch Classify(b) {
	case Shell:
		cmds, err := Commands(shellText(b), b.Line)
		if err != nil {
			fail(b.Line, "%v", err)
			return errs
		}
		if b.NoCheck != "" {
			return errs
		}
		run := runnable(b)
		for _, cmd := range cmds {
			if err := c.checkCommand(ctx, cmd.Args, false); err != nil {
				fail(cmd.Line, "%s: %v", shorten(printWords(cmd.Args)), err)
				continue
			}
			if !run {
				continue
			}
			ran, err := c.run(ctx, cmd.Args)
			if ran {
				c.Ran++
			}
			if err != nil {
				fail(cmd.Line, "%s: %v", shorten(printWords(cmd.Args)), err)
			}
		}
	case JSON:
		var v any
		if err := json.Unmarshal([]byte(b.Text), &v); err != nil {
			fail(b.Line, "not valid JSON: %v (label a block that is not JSON otherwise, for example ```text)", err)
			return errs
		}
		if b.NoCheck == "" {
			if err := checkHostJSON(b.Host, v); err != nil {
				fail(b.Line, "%v", err)
			}
		}
	case YAML:
		var v any
		if err := yaml.Unmarshal([]byte(b.Text), &v); err != nil {
			fail(b.Line, "not valid YAML: %v", err)
			return errs
		}
		if b.NoCheck == "" {
			if err := c.checkYAML(b, v); err != nil {
				fail(b.Line, "%v", err)
			}
		}
	default:
		if b.Host != "" {
			fail(b.Line, "host=%s on a %q block: only json and yaml blocks have a host shape", b.Host, b.Lang)
		}
	}
	return errs
}

func shorten(s string) string {
	if len(s) > 100 {
		return s[:97] + "..."
	}
	return s
}

// CheckFiles extracts and checks every block of the named Markdown files
// (paths relative to Root).
func (c *Checker) CheckFiles(ctx context.Context, files []string) ([]Block, []error) {
	var all []Block
	var errs []error
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(c.Root, f))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		blocks, err := Extract(f, src)
		if err != nil {
			errs = append(errs, err)
		}
		for _, b := range blocks {
			errs = append(errs, c.Check(ctx, b)...)
		}
		all = append(all, blocks...)
	}
	return all, errs
}

// DocFiles lists README.md, docs/*.md and every .md under examples/.
func DocFiles(root string) ([]string, error) {
	files := []string{"README.md"}
	m, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	err = filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			m = append(m, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, p := range m {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil, err
		}
		files = append(files, rel)
	}
	return files, nil
}

var errNoValue = errors.New("needs a value")
