package mcptools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/examples/skills"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The server offers the skill of examples/skills as an MCP prompt, word for
// word, statefully and statelessly, on every protocol era.
func TestSkillPrompt(t *testing.T) {
	t.Parallel()
	file, err := os.ReadFile(filepath.Join(testenv.Root(t), "examples", "skills", "ask-a-human", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, stateless := range []bool{false, true} {
		for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
			e := newEnv(t, envOptions{stateless: stateless})
			cs := e.connect(t, version, "")
			ctx := context.Background()
			list, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatalf("stateless=%v %q: prompts/list: %v", stateless, version, err)
			}
			if len(list.Prompts) != 1 || list.Prompts[0].Name != mcptools.PromptName || list.Prompts[0].Description != skills.AskAHuman().Description {
				t.Fatalf("prompts/list: %+v", list.Prompts)
			}
			got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcptools.PromptName})
			if err != nil {
				t.Fatal(err)
			}
			text := got.Messages[0].Content.(*mcp.TextContent).Text
			if got.Messages[0].Role != "user" || !strings.HasSuffix(string(file), text) || !strings.HasPrefix(text, "# Ask a human") {
				t.Fatalf("the prompt is not the skill file's body:\n%.200s", text)
			}
			withTask, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcptools.PromptName, Arguments: map[string]string{"task": "May I drop the staging database?"}})
			if err != nil {
				t.Fatal(err)
			}
			if wt := withTask.Messages[0].Content.(*mcp.TextContent).Text; !strings.HasPrefix(wt, text) || !strings.HasSuffix(wt, "May I drop the staging database?\n") {
				t.Fatalf("task argument: %.300q", wt[len(text):])
			}
		}
	}
}
