package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// hostTimeout is the tool-call timeout of the scripted agent's host,
// shorter than the server's 20 s wait bound on purpose: the skill tells
// the agent to pass waitSeconds below its host's limit.
const hostTimeout = 3 * time.Second

// scriptedAgent follows the ask-a-human skill, step by step, over the
// real go-sdk client: create, hand the reviewUrl to the human (never open
// it), elicit_await in short calls while pending, then elicit_result; on
// declined read the comment, refine and ask again; on expired, stop.
type scriptedAgent struct {
	t       *testing.T
	s       *mcp.ClientSession
	human   chan<- handoff // where the agent tells the human where to answer
	mu      sync.Mutex
	log     []string // the transcript
	pending int      // elicit_await calls that returned pending
	ids     []string // the requests it created
}

type handoff struct {
	id, reviewURL string
	seenPending   <-chan struct{} // closed once the agent has waited through one pending
}

func (a *scriptedAgent) say(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.log = append(a.log, fmt.Sprintf(format, args...))
}

// tool calls one tool within the host's timeout; a tool error is returned
// as its text.
func (a *scriptedAgent) tool(name string, args map[string]any) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hostTimeout)
	defer cancel()
	res, err := a.s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: the call did not return within the host's %v: %v", name, hostTimeout, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("%s", text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out, nil
}

// ask runs the skill's loop for one request and returns its outcome: the
// elicit_result of a decided request, or the final status.
func (a *scriptedAgent) ask(tool string, args map[string]any) (status string, result map[string]any) {
	created, err := a.tool(tool, args)
	if err != nil {
		a.t.Fatalf("create: %v", err)
	}
	id, reviewURL := created["elicitationId"].(string), created["reviewUrl"].(string)
	a.ids = append(a.ids, id)
	a.say("asked %q; told the human to answer at the review link before %v", args["message"], created["expiresAt"])
	seen := make(chan struct{})
	a.human <- handoff{id: id, reviewURL: reviewURL, seenPending: seen}
	once := sync.Once{}
	for {
		st, err := a.tool("elicit_await", map[string]any{"elicitationId": id, "waitSeconds": (hostTimeout - time.Second).Seconds()})
		if err != nil {
			a.t.Fatalf("elicit_await: %v", err)
		}
		status = st["status"].(string)
		if status != "pending" {
			break
		}
		a.pending++
		a.say("still pending; waiting again")
		once.Do(func() { close(seen) })
	}
	once.Do(func() { close(seen) })
	switch status {
	case "submitted", "declined":
		result, err = a.tool("elicit_result", map[string]any{"elicitationId": id})
		if err != nil {
			a.t.Fatalf("elicit_result: %v", err)
		}
		a.say("%s: %v", status, result)
	default:
		a.say("%s: not acting on it", status)
	}
	return status, result
}

var atMost = regexp.MustCompile(`at most (\d+)`)

// deploy is the agent's task: get approval to deploy with some replicas,
// refining on a declined-with-comment answer, as the skill says.
func (a *scriptedAgent) deploy(replicas int) (string, map[string]any) {
	for round := 0; round < 3; round++ {
		status, result := a.ask("elicit_approval", map[string]any{
			"message": fmt.Sprintf("Deploy api v1.3 with %d replicas?", replicas),
			"context": map[string]any{"service": "api", "version": "1.3", "replicas": replicas},
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
				"window": map[string]any{"type": "string", "title": "Deploy window", "enum": []any{"now", "tonight"}},
			}, "required": []any{"window"}},
		})
		if status != "declined" {
			return status, result
		}
		comment, _ := result["comment"].(string)
		m := atMost.FindStringSubmatch(comment)
		if m == nil {
			a.say("declined without a usable comment: asking the person what they want instead")
			return status, result
		}
		fmt.Sscan(m[1], &replicas)
		a.say("refining from the comment %q: %d replicas", comment, replicas)
	}
	a.t.Fatal("the agent kept asking")
	return "", nil
}

// reviewer is the human: opens each review link it is handed (only after
// the agent has seen it pending) and answers with the next of answers.
func reviewer(t *testing.T, handoffs <-chan handoff, answers []func(h handoff, token string) url.Values) <-chan error {
	done := make(chan error, 1)
	go func() {
		for _, answer := range answers {
			h := <-handoffs
			<-h.seenPending
			res, err := http.Get(h.reviewURL)
			if err != nil {
				done <- err
				return
			}
			body, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			m := tokenRE.FindSubmatch(body)
			if m == nil {
				done <- fmt.Errorf("no token on the review page (%d)", res.StatusCode)
				return
			}
			form := answer(h, html.UnescapeString(string(m[1])))
			if form == nil {
				continue // this one the human leaves unanswered
			}
			res, err = http.PostForm(h.reviewURL, form)
			if err != nil {
				done <- err
				return
			}
			_ = res.Body.Close()
			if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusSeeOther {
				done <- fmt.Errorf("submit: %d", res.StatusCode)
				return
			}
		}
		done <- nil
	}()
	return done
}

func TestSkillLoop(t *testing.T) {
	t.Parallel()
	var clockMu sync.Mutex
	offset := time.Duration(0)
	now := func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		return time.Now().Add(offset)
	}
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:0", "--log-level", "warn", "--data-dir", t.TempDir()}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), cfg, io.Discard, WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })

	s := agent(t, m.MCPURL)
	// The agent reads its instructions from the server.
	p, err := s.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: mcptools.PromptName})
	if err != nil {
		t.Fatal(err)
	}
	skill := p.Messages[0].Content.(*mcp.TextContent).Text
	for _, step := range []string{"elicit_approval", "reviewUrl", "elicit_await", "waitSeconds", "elicit_result", "`declined`", "read `comment`", "`expired`"} {
		if !strings.Contains(skill, step) {
			t.Fatalf("the served skill does not teach %s", step)
		}
	}

	handoffs := make(chan handoff)
	a := &scriptedAgent{t: t, s: s, human: handoffs}
	human := reviewer(t, handoffs, []func(handoff, string) url.Values{
		// 1. Declined, with a comment the agent can act on.
		func(_ handoff, token string) url.Values {
			return url.Values{"token": {token}, "decision": {"declined"}, "comment": {"Not 5: at most 3 replicas until the load test is done."}}
		},
		// 2. The refined request is approved, with the form filled in.
		func(_ handoff, token string) url.Values {
			return url.Values{"token": {token}, "decision": {"submitted"}, "f.window": {"tonight"}, "comment": {"go"}}
		},
		// 3. Nobody answers: the request expires (the clock moves past it).
		func(handoff, string) url.Values {
			clockMu.Lock()
			offset += 2 * time.Hour
			clockMu.Unlock()
			return nil
		},
	})

	status, result := a.deploy(5)
	if status != "submitted" || result["decision"] != "submitted" || fmt.Sprint(result["formSubmission"]) != "map[window:tonight]" || result["comment"] != "go" {
		t.Fatalf("deploy ended %s %v", status, result)
	}
	if ctx := result["context"].(map[string]any); ctx["replicas"] != float64(3) {
		t.Fatalf("the approved request is not the refined one: %v", ctx)
	}
	status, result = a.ask("elicit_selection", map[string]any{
		"message":        "Which region first?",
		"options":        []any{map[string]any{"id": "eu", "label": "eu-west-1"}, map[string]any{"id": "us", "label": "us-east-1"}},
		"timeoutSeconds": 60,
	})
	if status != "expired" || result != nil {
		t.Fatalf("unanswered request: %s %v", status, result)
	}
	if err := <-human; err != nil {
		t.Fatal(err)
	}
	if a.pending < 3 {
		t.Fatalf("the agent saw pending %d times, want at least once per request", a.pending)
	}
	// The agent never opened a review page: each was rendered once, by the human.
	for _, id := range a.ids {
		tr, err := m.Service.OperatorAudit(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		renders := 0
		for _, e := range tr.Entries {
			if e.Action == elicitation.ActionRendered {
				renders++
			}
		}
		if renders != 1 {
			t.Errorf("request %s was rendered %d times, want once (by the human)", id, renders)
		}
	}
	if len(a.ids) != 3 {
		t.Errorf("the agent created %d requests, want 3 (declined, refined, expired)", len(a.ids))
	}
	transcript := strings.Join(a.log, "\n")
	for _, want := range []string{"declined: ", `refining from the comment "Not 5: at most 3 replicas`, "submitted: ", "expired: not acting on it"} {
		if !strings.Contains(transcript, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	t.Logf("transcript:\n%s", transcript)
}
