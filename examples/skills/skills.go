// Package skills holds the agent skills of examples/skills, embedded so
// that the server serves the same text as an MCP prompt
// (internal/mcptools) that a host loads as a skill file.
package skills

import (
	_ "embed"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed ask-a-human/SKILL.md
var askAHuman string

// Skill is one skill: its front matter's name and description, and its
// instructions (the Markdown after the front matter).
type Skill struct {
	Name, Description, Body string
}

// AskAHuman is the skill that teaches the create → wait → result loop.
func AskAHuman() Skill { return parse(askAHuman) }

// parse reads "---\nYAML front matter\n---\nbody"; the embedded files are
// checked by this package's test, so a malformed one never ships.
func parse(s string) Skill {
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return Skill{Body: s}
	}
	front, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return Skill{Body: s}
	}
	var sk Skill
	var fm struct{ Name, Description string }
	if err := yaml.Unmarshal([]byte(front), &fm); err != nil {
		return Skill{Body: s}
	}
	sk.Name, sk.Description, sk.Body = fm.Name, fm.Description, strings.TrimLeft(body, "\n")
	return sk
}
