package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// createCounter counts the requests a store was asked to create.
type createCounter struct {
	elicitation.Store
	n atomic.Int64
}

func (c *createCounter) Create(ctx context.Context, r elicitation.Request, e elicitation.AuditEntry) error {
	c.n.Add(1)
	return c.Store.Create(ctx, r, e)
}

func options(n int, extra string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"id":"o%d"%s}`, i, extra)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func schemaWithFields(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"f%d":{"type":"string"}`, i)
	}
	return `{"type":"object","properties":{` + strings.Join(parts, ",") + `}}`
}

// TestBadInput sends malformed arguments to every tool: each gets its
// specific code and message, and nothing is created.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	counter := &createCounter{Store: e.store.Store}
	e.store.Store = counter
	// 2025-11-25: a 2026-07-28 go-sdk client cannot send a number no float
	// holds (it fails to build the Mcp-Name header from such a body).
	cs := e.connect(t, proto20251125, "")

	big := strings.Repeat("x", elicitation.MaxMessageBytes+1)
	bigTemplate := strings.Repeat("y", elicitation.MaxTemplateBytes+1)
	bigContext := `"` + strings.Repeat("z", elicitation.MaxContextBytes) + `"`
	bigSchema := `{"type":"object","properties":{"a":{"type":"string","description":"` + strings.Repeat("d", elicitation.MaxSchemaBytes) + `"}}}`
	longID := strings.Repeat("i", elicitation.MaxOptionIDChars+1)
	bigOption := `[{"id":"a","blob":"` + strings.Repeat("b", elicitation.MaxOptionBytes) + `"}]`
	const approvalArgs = "message, context, requestedSchema, displayTemplate, css, labels, timeoutSeconds, notify, escalate, reviewers, approvals, push, askInHost"
	const timeoutRule = "a whole number of seconds (values outside 60..86400 are clamped; default 3600)"
	const boundsRule = "a whole number at least 1 (default 1; 1 <= minSelections <= maxSelections <= number of options)"
	const idRequired = "invalid_argument: elicitationId is required: pass the elicitationId that elicit_approval or elicit_selection returned"

	cases := []struct {
		name, tool, args, want string
	}{
		// elicit_approval
		{"approval/missing message", mcptools.ToolApproval, `{"context":{}}`, "invalid_argument: message is required: tell the reviewer what you are asking them to approve"},
		{"approval/blank message", mcptools.ToolApproval, `{"message":"  ","context":{}}`, "invalid_argument: message is required: tell the reviewer what you are asking"},
		{"approval/message not a string", mcptools.ToolApproval, `{"message":5,"context":{}}`, "invalid_argument: message must be a string"},
		{"approval/no context or schema", mcptools.ToolApproval, `{"message":"ok?"}`, "invalid_argument: give context (the payload to approve), requestedSchema (a form to fill), or both"},
		{"approval/null context", mcptools.ToolApproval, `{"message":"ok?","context":null}`, "invalid_argument: give context (the payload to approve), requestedSchema (a form to fill), or both"},
		{"approval/oversized message", mcptools.ToolApproval, `{"message":"` + big + `","context":1}`, fmt.Sprintf("invalid_argument: message is %d bytes; at most %d are allowed", len(big), elicitation.MaxMessageBytes)},
		{"approval/oversized context", mcptools.ToolApproval, `{"message":"m","context":` + bigContext + `}`, fmt.Sprintf("invalid_argument: context is %d bytes serialized; at most %d are allowed", len(bigContext), elicitation.MaxContextBytes)},
		{"approval/oversized template", mcptools.ToolApproval, `{"message":"m","context":1,"displayTemplate":"` + bigTemplate + `"}`, fmt.Sprintf("invalid_argument: displayTemplate is %d bytes; at most %d are allowed", len(bigTemplate), elicitation.MaxTemplateBytes)},
		{"approval/oversized css", mcptools.ToolApproval, `{"message":"m","context":1,"css":"` + bigTemplate + `"}`, fmt.Sprintf("invalid_argument: css is %d bytes; at most %d are allowed", len(bigTemplate), elicitation.MaxTemplateBytes)},
		{"approval/oversized schema", mcptools.ToolApproval, `{"message":"m","requestedSchema":` + bigSchema + `}`, fmt.Sprintf("invalid_argument: requestedSchema is %d bytes serialized; at most %d are allowed", len(bigSchema), elicitation.MaxSchemaBytes)},
		{"approval/schema too many fields", mcptools.ToolApproval, `{"message":"m","requestedSchema":` + schemaWithFields(51) + `}`, "invalid_argument: requestedSchema has 51 fields; at most 50 are allowed"},
		{"approval/unsupported schema keyword", mcptools.ToolApproval, `{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}},"allOf":[]}}`, `invalid_argument: requestedSchema: keyword "allOf" is not supported in a flat form schema`},
		{"approval/schema field without type", mcptools.ToolApproval, `{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"title":"A"}}}}`, `invalid_argument: requestedSchema: field "a" needs a type (string, number, integer, boolean or array)`},
		{"approval/schema not an object", mcptools.ToolApproval, `{"message":"m","requestedSchema":"form"}`, `invalid_argument: requestedSchema must be a JSON object like {"type": "object", "properties": {...}, "required": [...]}`},
		{"approval/timeout string", mcptools.ToolApproval, `{"message":"m","context":1,"timeoutSeconds":"60"}`, "invalid_argument: timeoutSeconds must be " + timeoutRule + ", not a string"},
		{"approval/timeout fraction", mcptools.ToolApproval, `{"message":"m","context":1,"timeoutSeconds":90.5}`, "invalid_argument: timeoutSeconds must be " + timeoutRule + ", not 90.5"},
		{"approval/timeout out of range", mcptools.ToolApproval, `{"message":"m","context":1,"timeoutSeconds":1e400}`, "invalid_argument: timeoutSeconds must be " + timeoutRule},
		{"approval/timeout boolean", mcptools.ToolApproval, `{"message":"m","context":1,"timeoutSeconds":true}`, "invalid_argument: timeoutSeconds must be " + timeoutRule + ", not a boolean"},
		{"approval/notify string", mcptools.ToolApproval, `{"message":"m","context":1,"notify":"oncall"}`, `invalid_argument: notify must be an array of notification target names configured by the operator, such as ["oncall"], not a string`},
		{"approval/notify numbers", mcptools.ToolApproval, `{"message":"m","context":1,"notify":[1]}`, `invalid_argument: notify must be an array of notification target names configured by the operator, such as ["oncall"], not an array`},
		{"approval/notify empty name", mcptools.ToolApproval, `{"message":"m","context":1,"notify":[""]}`, `invalid_argument: notify must be an array of notification target names configured by the operator, such as ["oncall"]; an empty name is not one`},
		{"approval/escalate object", mcptools.ToolApproval, `{"message":"m","context":1,"escalate":{"after":"30m"}}`, `invalid_argument: escalate must be an array of steps such as [{"after": "30m", "notify": ["oncall-lead"]}] (each step has only after and notify), not an object`},
		{"approval/escalate after number", mcptools.ToolApproval, `{"message":"m","context":1,"escalate":[{"after":30,"notify":["a"]}]}`, `invalid_argument: escalate[0].after must be a duration string such as "30m" or "1h30m"`},
		{"approval/escalate after word", mcptools.ToolApproval, `{"message":"m","context":1,"escalate":[{"after":"soon","notify":["a"]}]}`, `invalid_argument: escalate[0].after "soon" is not a duration such as "30m" or "1h30m"`},
		{"approval/escalate no notify", mcptools.ToolApproval, `{"message":"m","context":1,"escalate":[{"after":"30m"}]}`, `invalid_argument: escalate[0].notify must be a non-empty array of notification target names, such as ["oncall-lead"]`},
		{"approval/escalate no targets", mcptools.ToolApproval, `{"message":"m","context":1,"escalate":[{"after":"30m","notify":["lead"]}]}`, `invalid_argument: escalate names notification targets, but this deployment has none; leave escalate out`},
		{"selection/escalate negative", mcptools.ToolSelection, `{"message":"m","options":[{"id":"a"}],"escalate":[{"after":"-5m","notify":["lead"]}]}`, `invalid_argument: escalate names notification targets, but this deployment has none; leave escalate out`},
		{"approval/notify unknown", mcptools.ToolApproval, `{"message":"m","context":1,"notify":["oncall"]}`, `invalid_argument: notify names "oncall", but this deployment has no notification targets; leave notify out`},
		{"approval/reviewers string", mcptools.ToolApproval, `{"message":"m","context":1,"reviewers":"alice@example.com"}`, `invalid_argument: reviewers must be an array of e-mail addresses and "group:NAME" entries, such as ["alice@example.com", "group:ops"], not a string`},
		{"approval/reviewers without sign-in", mcptools.ToolApproval, `{"message":"m","context":1,"reviewers":["alice@example.com"]}`, `invalid_argument: reviewers needs reviewer sign-in, which this server does not have (anyone with the review link decides); omit reviewers, or ask the operator to configure sign-in`},
		{"selection/reviewers not an address", mcptools.ToolSelection, `{"message":"m","options":[{"id":"a"}],"reviewers":["alice"]}`, `invalid_argument: reviewers[0] ("alice") is not an e-mail address; name a group as group:NAME`},
		{"selection/approvals without sign-in", mcptools.ToolSelection, `{"message":"m","options":[{"id":"a"}],"approvals":2}`, `invalid_argument: approvals needs reviewer sign-in, which this server does not have (anyone with the review link decides); omit approvals, or ask the operator to configure sign-in`},
		{"selection/approvals zero", mcptools.ToolSelection, `{"message":"m","options":[{"id":"a"}],"approvals":0}`, `invalid_argument: approvals must be a whole number of distinct reviewers from 1 to 10 (default 1), not 0`},
		{"selection/notify url", mcptools.ToolSelection, `{"message":"m","options":[{"id":"a"}],"notify":["https://hooks.example/x"]}`, `invalid_argument: notify names "https://hooks.example/x", but this deployment has no notification targets; leave notify out`},
		{"selection/notify too many", mcptools.ToolSelection, `{"message":"m","options":[{"id":"a"}],"notify":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}`, `invalid_argument: notify names 17 targets; at most 16 are allowed`},
		{"approval/label too long", mcptools.ToolApproval, `{"message":"m","context":1,"labels":{"submit":"` + strings.Repeat("l", 41) + `"}}`, "invalid_argument: labels.submit must be 1 to 40 characters (not blank)"},
		{"approval/label unknown key", mcptools.ToolApproval, `{"message":"m","context":1,"labels":{"approve":"Yes"}}`, `invalid_argument: labels takes only "submit" and "decline"`},
		{"approval/labels not an object", mcptools.ToolApproval, `{"message":"m","context":1,"labels":"Yes"}`, `invalid_argument: labels must be an object like {"submit": "Ship it", "decline": "Not yet"}`},
		{"approval/unknown argument", mcptools.ToolApproval, `{"message":"m","context":1,"payload":2}`, `invalid_argument: unknown argument "payload"; this tool takes ` + approvalArgs},
		{"approval/arguments not an object", mcptools.ToolApproval, `["m"]`, "invalid_argument: arguments must be a JSON object"},

		// elicit_selection
		{"selection/missing options", mcptools.ToolSelection, `{"message":"m"}`, `invalid_argument: options is required: an array of objects, each with a unique string "id" (and optionally a "label" and any other keys)`},
		{"selection/empty options", mcptools.ToolSelection, `{"message":"m","options":[]}`, "invalid_argument: options must hold at least one option"},
		{"selection/options not an array", mcptools.ToolSelection, `{"message":"m","options":{"id":"a"}}`, `invalid_argument: options must be an array of objects, each with a unique string "id"`},
		{"selection/duplicate ids", mcptools.ToolSelection, `{"message":"m","options":[{"id":"a"},{"id":"b"},{"id":"a"}]}`, `invalid_argument: options[0] and options[2] share the id "a"; ids must be unique`},
		{"selection/option without id", mcptools.ToolSelection, `{"message":"m","options":[{"id":"a"},{"label":"B"}]}`, "invalid_argument: options[1].id must be a string"},
		{"selection/option id not a string", mcptools.ToolSelection, `{"message":"m","options":[{"id":7}]}`, "invalid_argument: options[0].id must be a string"},
		{"selection/option empty id", mcptools.ToolSelection, `{"message":"m","options":[{"id":""}]}`, "invalid_argument: options[0].id must be a non-empty string of at most 128 characters"},
		{"selection/option id too long", mcptools.ToolSelection, `{"message":"m","options":[{"id":"` + longID + `"}]}`, "invalid_argument: options[0].id must be a non-empty string of at most 128 characters"},
		{"selection/option not an object", mcptools.ToolSelection, `{"message":"m","options":["a"]}`, `invalid_argument: options[0] must be a JSON object with a string "id"`},
		{"selection/oversized option", mcptools.ToolSelection, `{"message":"m","options":` + bigOption + `}`, fmt.Sprintf("invalid_argument: options[0] is %d bytes serialized; at most %d are allowed", len(bigOption)-2, elicitation.MaxOptionBytes)},
		{"selection/too many options", mcptools.ToolSelection, `{"message":"m","options":` + options(501, "") + `}`, "invalid_argument: options holds 501 options; at most 500 are allowed"},
		{"selection/request too large", mcptools.ToolSelection, `{"message":"m","options":` + options(500, `,"pad":"`+strings.Repeat("p", 600)+`"`) + `}`, "invalid_argument: the request is "},
		{"selection/min greater than max", mcptools.ToolSelection, `{"message":"m","options":` + options(4, "") + `,"minSelections":3,"maxSelections":2}`, "invalid_argument: need 1 <= minSelections (3) <= maxSelections (2) <= number of options (4)"},
		{"selection/max beyond options", mcptools.ToolSelection, `{"message":"m","options":` + options(2, "") + `,"maxSelections":3}`, "invalid_argument: need 1 <= minSelections (1) <= maxSelections (3) <= number of options (2)"},
		{"selection/min zero", mcptools.ToolSelection, `{"message":"m","options":` + options(2, "") + `,"minSelections":0}`, "invalid_argument: minSelections must be " + boundsRule + ", not 0"},
		{"selection/max string", mcptools.ToolSelection, `{"message":"m","options":` + options(2, "") + `,"maxSelections":"2"}`, "invalid_argument: maxSelections must be " + boundsRule + ", not a string"},
		{"selection/oversized row template", mcptools.ToolSelection, `{"message":"m","options":` + options(1, "") + `,"rowTemplate":"` + bigTemplate + `"}`, fmt.Sprintf("invalid_argument: rowTemplate is %d bytes; at most %d are allowed", len(bigTemplate), elicitation.MaxTemplateBytes)},
		{"selection/template not a string", mcptools.ToolSelection, `{"message":"m","options":` + options(1, "") + `,"hoverTemplate":{"a":1}}`, "invalid_argument: hoverTemplate must be a string"},
		{"selection/row template not a string", mcptools.ToolSelection, `{"message":"m","options":` + options(1, "") + `,"rowTemplate":1}`, "invalid_argument: rowTemplate must be a string"},
		{"selection/heading template not a string", mcptools.ToolSelection, `{"message":"m","options":` + options(1, "") + `,"headingTemplate":[]}`, "invalid_argument: headingTemplate must be a string"},
		{"selection/footer template not a string", mcptools.ToolSelection, `{"message":"m","options":` + options(1, "") + `,"footerTemplate":true}`, "invalid_argument: footerTemplate must be a string"},
		{"selection/css not a string", mcptools.ToolSelection, `{"message":"m","options":` + options(1, "") + `,"css":2}`, "invalid_argument: css must be a string"},
		{"selection/labels unknown", mcptools.ToolSelection, `{"message":"m","options":` + options(1, "") + `,"labels":{"ok":"Go"}}`, `invalid_argument: labels takes only "submit" and "decline"`},

		// The tools that take an id.
		{"status/unknown id", mcptools.ToolStatus, `{"elicitationId":"nope"}`, "not_found: no elicitation with that id"},
		{"status/missing id", mcptools.ToolStatus, `{}`, idRequired},
		{"status/empty id", mcptools.ToolStatus, `{"elicitationId":""}`, idRequired},
		{"status/id not a string", mcptools.ToolStatus, `{"elicitationId":42}`, "invalid_argument: elicitationId must be a string"},
		{"status/unknown argument", mcptools.ToolStatus, `{"elicitationId":"x","id":"x"}`, `invalid_argument: unknown argument "id"; this tool takes elicitationId, includeAudit`},
		{"status/includeAudit not a boolean", mcptools.ToolStatus, `{"elicitationId":"x","includeAudit":1}`, "invalid_argument: includeAudit must be true or false, not 1"},
		{"result/unknown id", mcptools.ToolResult, `{"elicitationId":"nope"}`, "not_found: no elicitation with that id"},
		{"cancel/unknown id", mcptools.ToolCancel, `{"elicitationId":"nope"}`, "not_found: no elicitation with that id"},
		{"cancel/missing id", mcptools.ToolCancel, `null`, idRequired},
		{"await/unknown id", mcptools.ToolAwait, `{"elicitationId":"nope","waitSeconds":1}`, "not_found: no elicitation with that id"},
		{"await/wait string", mcptools.ToolAwait, `{"elicitationId":"nope","waitSeconds":"5"}`, "invalid_argument: waitSeconds must be a number of seconds greater than 0, not a string"},
		{"await/wait zero", mcptools.ToolAwait, `{"elicitationId":"nope","waitSeconds":0}`, "invalid_argument: waitSeconds must be a number of seconds greater than 0; omit it to wait the server's full bound (20s)"},
		{"await/wait negative", mcptools.ToolAwait, `{"elicitationId":"nope","waitSeconds":-1}`, "invalid_argument: waitSeconds must be a number of seconds greater than 0; omit it to wait the server's full bound (20s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := counter.n.Load()
			r := call(t, cs, tc.tool, json.RawMessage(tc.args))
			if !r.isError {
				t.Fatalf("succeeded with %v", r.structured)
			}
			if strings.HasSuffix(tc.want, " ") || tc.name == "selection/request too large" {
				if !strings.HasPrefix(r.text, tc.want) {
					t.Errorf("error %q, want it to start with %q", r.text, tc.want)
				}
			} else if r.text != tc.want {
				t.Errorf("error\n  %q\nwant\n  %q", r.text, tc.want)
			}
			if n := counter.n.Load() - before; n != 0 {
				t.Errorf("%d requests created", n)
			}
		})
	}
}

// TestOtherPrincipal: with agent credentials, an elicitation belongs to
// the principal that created it; another principal gets not_found for it,
// whatever the tool, and cannot change it.
func TestOtherPrincipal(t *testing.T) {
	t.Parallel()
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			instances := 1
			if stateless {
				instances = 2
			}
			e := newEnv(t, envOptions{stateless: stateless, instances: instances, auth: map[string]string{"tok-a": "alice", "tok-b": "bob"}})
			alice := e.connect(t, "", "tok-a")
			bob := e.connect(t, "", "tok-b")
			c := ok(t, alice, mcptools.ToolApproval, map[string]any{"message": "Mine", "context": 1})
			id := c["elicitationId"]
			for _, tool := range []string{mcptools.ToolStatus, mcptools.ToolAwait, mcptools.ToolResult, mcptools.ToolCancel} {
				if got := fails(t, bob, tool, map[string]any{"elicitationId": id}, elicitation.CodeNotFound); got != "not_found: no elicitation with that id" {
					t.Errorf("%s by bob: %q", tool, got)
				}
			}
			if got := ok(t, alice, mcptools.ToolStatus, map[string]any{"elicitationId": id}); got["status"] != "pending" {
				t.Errorf("alice's status = %v, want pending (bob's cancel must not land)", got)
			}
			tr, err := e.svc.Audit(context.Background(), "alice", id.(string))
			if err != nil || len(tr.Entries) == 0 || tr.Entries[0].Principal != "alice" {
				t.Errorf("audit = %+v, %v; want created by alice", tr, err)
			}
		})
	}
}
