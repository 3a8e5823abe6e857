package docstest

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Command is one simple command of a shell block, its words expanded as a
// shell would: variables assigned earlier in the block are substituted,
// variables from outside (set by the reader) become <NAME> placeholders and
// command substitutions become <output>.
type Command struct {
	Line int      // line in the Markdown file
	Args []string // program and arguments
}

func (c Command) String() string { return strings.Join(c.Args, " ") }

// shellText returns the script of a shell block: for "console" blocks only
// the lines after a "$ " prompt (with their continuation lines).
func shellText(b Block) string {
	if b.Lang != "console" {
		return b.Text
	}
	var out strings.Builder
	cont := false
	for _, line := range strings.SplitAfter(b.Text, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		switch {
		case cont:
			out.WriteString(line)
		case strings.HasPrefix(trimmed, "$ "):
			out.WriteString(strings.TrimPrefix(line, "$ "))
		default:
			out.WriteString("\n") // keep line numbers
			continue
		}
		cont = strings.HasSuffix(trimmed, "\\")
	}
	return out.String()
}

// Commands parses a shell script strictly (bash syntax) and returns its
// simple commands in order, also those in pipelines, lists, subshells and
// command substitutions. firstLine is the file line of the script's line 1.
func Commands(script string, firstLine int) ([]Command, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		if pe, ok := err.(syntax.ParseError); ok {
			return nil, fmt.Errorf("line %d: not valid shell: %s", firstLine+int(pe.Pos.Line())-1, pe.Text)
		}
		return nil, fmt.Errorf("not valid shell: %w", err)
	}
	vars := map[string]string{}
	cfg := &expand.Config{
		Env: expand.FuncEnviron(func(name string) string {
			if v, ok := vars[name]; ok {
				return v
			}
			if name == "IFS" {
				return " \t\n"
			}
			return "<" + name + ">"
		}),
		CmdSubst: func(w io.Writer, _ *syntax.CmdSubst) error {
			_, err := io.WriteString(w, "<output>")
			return err
		},
	}
	var cmds []Command
	var werr error
	assign := func(as []*syntax.Assign) {
		for _, a := range as {
			if a.Name == nil || a.Value == nil {
				continue
			}
			v, err := expand.Literal(cfg, a.Value)
			if err != nil {
				v = "<" + a.Name.Value + ">"
			}
			vars[a.Name.Value] = v
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				assign(n.Assigns)
				return true
			}
			fields, err := expand.Fields(cfg, n.Args...)
			if err != nil {
				if werr == nil {
					werr = fmt.Errorf("line %d: %v", firstLine+int(n.Pos().Line())-1, err)
				}
				return true
			}
			if len(fields) > 0 {
				cmds = append(cmds, Command{Line: firstLine + int(n.Pos().Line()) - 1, Args: fields})
			}
		case *syntax.DeclClause:
			for _, a := range n.Args {
				assign([]*syntax.Assign{a})
			}
		}
		return true
	})
	return cmds, werr
}

// printWords renders words back as one shell line (for messages).
func printWords(args []string) string {
	var b bytes.Buffer
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = a
		}
		b.WriteString(q)
	}
	return b.String()
}
