package mcptools_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	sealerpkg "github.com/mcp-elicitation/elicitation/internal/sealer"
)

// signInTurnedOn is one store and one set of keys served by two servers
// with the host form: before (sign-in off) and after (sign-in on), as a
// deployment restarted with sign-in is.
func signInTurnedOn(t *testing.T) (before, after *httptest.Server) {
	t.Helper()
	k, err := sealerpkg.ParseKeyring("k0:" + pagetoken.GenerateSecret())
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "store.db")
	serve := func(signIn bool) *httptest.Server {
		st, err := boltstore.Open(dbPath)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		srv := mcptools.New(mcptools.Options{
			Service:   elicitation.NewService(elicitation.Config{Store: st, SignIn: signIn, MaxWait: 5 * time.Second}),
			ReviewURL: reviewURL, HostForm: true, Sealer: k,
		})
		ts := httptest.NewServer(srv.Handler())
		t.Cleanup(ts.Close)
		return ts
	}
	return serve(false), serve(true)
}

// TestHostFormNotAfterSignIn: a request created with askInHost before
// sign-in was turned on is not shown in the host once it is (the host's
// accept would be refused): the await only waits, on every era; and an
// answer to a form shown before arrives after is refused with the reason,
// not dropped in silence.
func TestHostFormNotAfterSignIn(t *testing.T) {
	t.Parallel()
	args := map[string]any{"message": "Which?", "options": threeOptions, "askInHost": true}
	for _, version := range []string{proto20251125, proto20260728} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			before, after := signInTurnedOn(t)
			cs, _ := connectFormHost(t, &env{servers: []*httptest.Server{before}}, version, true)
			c := ok(t, cs, mcptools.ToolSelection, args)
			if !strings.HasPrefix(c["hostForm"].(string), "asked in the host") {
				t.Fatalf("hostForm before sign-in = %q", c["hostForm"])
			}
			cs2, host := connectFormHost(t, &env{servers: []*httptest.Server{after}}, version, true)
			host.answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": "a"}}
			if got := ok(t, cs2, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 0.1}); got["status"] != "pending" {
				t.Errorf("await after sign-in = %v", got)
			}
			if len(host.shown) != 0 {
				t.Errorf("the host was shown the form on a server with sign-in")
			}
		})
	}
	t.Run("answer across", func(t *testing.T) {
		t.Parallel()
		before, after := signInTurnedOn(t)
		e := &env{servers: []*httptest.Server{before, after}}
		cs, _ := connectFormHost(t, &env{servers: []*httptest.Server{before}}, proto20260728, true)
		c := ok(t, cs, mcptools.ToolSelection, args)
		cs2, host := connectFormHost(t, e, proto20260728, true)
		host.answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": "a"}}
		e.next.Store(1) // the first round to before (which shows the form), the retry to after
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs2.CallTool(ctx, &mcp.CallToolParams{Name: mcptools.ToolAwait, Arguments: map[string]any{"elicitationId": c["elicitationId"]}})
		if err != nil {
			t.Fatal(err)
		}
		if len(host.shown) != 1 {
			t.Fatalf("the form was shown %d times, want once (by the server without sign-in)", len(host.shown))
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError || !strings.Contains(text, "not recorded") || !strings.Contains(text, "signs reviewers in") {
			t.Errorf("answer to the form after sign-in: isError %v %q", res.IsError, text)
		}
	})
}
