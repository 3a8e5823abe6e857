package mcptools

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/examples/skills"
)

// PromptName is the MCP prompt that teaches an agent the loop: the text of
// the skill examples/skills/ask-a-human/SKILL.md, embedded once, so that
// hosts that load skills and hosts that offer a server's prompts (Claude
// Code shows it as /mcp__elicitation__ask-a-human) read the same words.
const PromptName = "ask-a-human"

func (s *Server) addPrompts() {
	sk := skills.AskAHuman()
	s.mcp.AddPrompt(&mcp.Prompt{
		Name:        PromptName,
		Title:       "Ask a human, wait for the answer, act on it",
		Description: sk.Description,
		Arguments: []*mcp.PromptArgument{{
			Name:        "task",
			Description: "what to ask the human about (optional)",
		}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		text := sk.Body
		if task := strings.TrimSpace(req.Params.Arguments["task"]); task != "" {
			text += "\n## Now\n\nAsk the human about this, following the steps above:\n\n" + task + "\n"
		}
		return &mcp.GetPromptResult{
			Description: sk.Description,
			Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
		}, nil
	})
}
