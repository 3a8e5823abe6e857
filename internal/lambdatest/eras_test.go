//go:build unix

package lambdatest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/pushtest"
)

// TestErasOnLambda: the MCP function under the emulator, behind a stand-in
// for API Gateway, serves every era statelessly to the go-sdk client: the
// same results everywhere, the 2026-07-28 push (with the stack's
// push-state secret), nothing pushed to the session eras; the review page
// and the submission go through their own functions.
func TestErasOnLambda(t *testing.T) {
	var s *stack
	gw := lambdatest.Gateway(t, func(method, path string) (string, *lambdatest.Function) {
		switch {
		case path == "/mcp":
			return "ANY /mcp", s.fn["mcp"]
		case method == http.MethodGet && strings.HasPrefix(path, "/review/"):
			return "GET /review/{id}/{key}", s.fn["review"]
		case method == http.MethodPost && strings.HasPrefix(path, "/review/"):
			return "POST /review/{id}/{key}", s.fn["submit"]
		}
		return "", nil
	})
	s = newStack(t, stackOptions{extraEnv: []string{"ELICITATION_PUBLIC_URL=" + gw.URL}})
	pushtest.Run(t, pushtest.Target{
		MCPURL:          gw.URL + "/mcp",
		Header:          http.Header{"Authorization": {"Bearer " + s.keys["alice"]}},
		SessionlessPush: true,
	})
}
