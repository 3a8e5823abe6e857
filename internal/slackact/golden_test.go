package slackact_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/slackact"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, v any) {
	t.Helper()
	// As JSON with sorted keys, so that the file says what Slack reads,
	// whatever Go type (a map, slack-go's structs) wrote it.
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -run %s -update rewrites it):\n%s", path, t.Name(), got)
	}
}

func blockKit(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	b, err := os.ReadFile("../notify/testdata/blockkit.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func options(ids ...string) []elicitation.Option {
	var out []elicitation.Option
	for _, id := range ids {
		out = append(out, elicitation.Option{ID: id, Label: "Region " + id})
	}
	return out
}

// TestBlockKitGolden: the interactive messages and their dialogs, as
// Slack receives them, are the golden files (and messages fit Block Kit).
func TestBlockKitGolden(t *testing.T) {
	t.Parallel()
	rs := blockKit(t)
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	base := elicitation.Notice{
		DeliveryID: "dlv_1", Event: elicitation.EventCreated, At: at, ID: "req-1", Kind: elicitation.KindApproval,
		Message: "Deploy api v1.3 to production?\nReplicas: 3", Owner: "deploy-bot", CreatedAt: at, ExpiresAt: at.Add(time.Hour),
		ReviewURL: "https://elicitation.example.com/review/req-1/k3y", Choices: &elicitation.Choices{},
	}
	with := func(f func(*elicitation.Notice)) elicitation.Notice {
		n := base
		c := *base.Choices
		n.Choices = &c
		f(&n)
		return n
	}
	messages := map[string]elicitation.Notice{
		"approval": base,
		"approval-quorum": with(func(n *elicitation.Notice) {
			n.Choices.Approvals, n.Choices.Approvers = 2, []string{"alice@example.com"}
		}),
		"approval-standing": with(func(n *elicitation.Notice) { n.Choices.Standing = true }),
		"approval-form":     with(func(n *elicitation.Notice) { n.Choices.FormRequired = true }),
		"selection-one": with(func(n *elicitation.Notice) {
			n.Kind, n.Choices.Options, n.Choices.MinSelections, n.Choices.MaxSelections = elicitation.KindSelection, options("eu-west-1", "us-east-1", "ap-south-1"), 1, 1
		}),
		"selection-many": with(func(n *elicitation.Notice) {
			n.Kind, n.Choices.Options, n.Choices.MinSelections, n.Choices.MaxSelections = elicitation.KindSelection, options("a", "b", "c"), 1, 2
		}),
		"selection-six": with(func(n *elicitation.Notice) {
			n.Kind, n.Choices.Options, n.Choices.MinSelections, n.Choices.MaxSelections = elicitation.KindSelection, options("a", "b", "c", "d", "e", "f"), 1, 1
		}),
		"decided": with(func(n *elicitation.Notice) {
			n.Event, n.ReviewURL, n.Choices, n.Decision, n.DecidedBy, n.At = elicitation.EventDecided, "", nil, elicitation.DecisionSubmitted, "alice@example.com", at.Add(5*time.Minute)
		}),
	}
	for name, n := range messages {
		t.Run("message-"+name, func(t *testing.T) {
			t.Parallel()
			msg := notify.SlackInteractiveMessage(n, time.Hour)
			b, _ := json.Marshal(msg)
			var doc any
			_ = json.Unmarshal(b, &doc)
			if err := rs.Validate(doc); err != nil {
				t.Errorf("not Block Kit: %v", err)
			}
			golden(t, "message-"+name, msg)
		})
	}
	approval := elicitation.Record{State: elicitation.State{ID: "req-1", Kind: elicitation.KindApproval}, Payload: elicitation.Payload{Message: "Deploy api v1.3 to production?"}}
	selection := elicitation.Record{State: elicitation.State{ID: "req-2", Kind: elicitation.KindSelection}, Payload: elicitation.Payload{Message: "Which regions take the canary?", Options: options("a", "b", "c"), MinSelections: 1, MaxSelections: 2}}
	meta := `{"u":"https://elicitation.example.com/review/req-1/k3y","r":"https://hooks.slack.com/actions/T0/1/x","a":"…"}`
	for name, c := range map[string]struct {
		rec    elicitation.Record
		action string
	}{
		"dialog-decline":         {approval, notify.SlackActionDecline},
		"dialog-approve-comment": {approval, notify.SlackActionApproveComment},
		"dialog-choose":          {selection, notify.SlackActionChoose},
		"dialog-none-of-these":   {selection, notify.SlackActionDecline},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden(t, name, slackact.DialogView(c.rec, c.action, meta))
		})
	}
}
