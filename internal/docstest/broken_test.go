package docstest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/docstest"
)

// TestBrokenSnippets is the test of the test: each snippet is broken the
// way documentation drifts, and the check must say so; the good ones (prose,
// marked blocks, correct commands) must pass.
func TestBrokenSnippets(t *testing.T) {
	c := checker(t)
	fence := "```"
	cases := []struct {
		name, md, want string // want "" means: no problem
	}{
		{"unknown flag", fence + "sh\nelicitation serve --no-such-flag\n" + fence, "has no flag -no-such-flag"},
		{"flag value of the wrong type", fence + "sh\ngo run ./cmd/elicitation serve --max-wait 20\n" + fence, "not a duration"},
		{"flag without its value", fence + "sh\nelicitation serve --addr\n" + fence, "needs a value"},
		{"unknown command", fence + "sh\nelicitation frobnicate\n" + fence, `has no command "frobnicate"`},
		{"flags without a command", fence + "sh\nelicitation --addr 127.0.0.1:8081\n" + fence, "without a command prints its usage"},
		{"no command at all", fence + "sh\ngo run ./cmd/elicitation\n" + fence, "without a command prints its usage"},
		{"call's flag", fence + "sh\ngo run ./cmd/elicitation call --addr 127.0.0.1:8080 --key x elicit_status elicitationId=x\n" + fence, "has no flag -key"},
		{"good: keys flags after the command", fence + "sh\nelicitation keys create --data-dir /tmp/d --principal alice\n" + fence, ""},
		{"unknown subcommand flag", fence + "sh\nbin/elicitation keys create --principal alice --owner bob\n" + fence, "has no flag -owner"},
		{"proxy flag", fence + "sh\nmcp-elicitation-proxy --config examples/manual-everything.config.yaml --listen :8080\n" + fence, "has no flag -listen"},
		{"proxy config that is not there", fence + "sh\nmcp-elicitation-proxy --config examples/no-such.config.yaml\n" + fence, "examples/no-such.config.yaml"},
		{"unpublished module", fence + "sh\ngo install github.com/mcp-elicitation/elicitation/cmd/mcp-elicitation-proxy@latest\n" + fence, "not published"},
		{"missing package", fence + "sh\ngo build -o bin/ ./cmd/elicitation-server\n" + fence, "no package ./cmd/elicitation-server"},
		{"renamed test", fence + "sh\ngo test -count=1 -run TestNoSuchTestAnywhere ./internal/docstest/\n" + fence, "matches no Test function"},
		{"missing make target", fence + "sh\nmake api-key-rotate TABLE=t\n" + fence, "No rule to make target"},
		{"unclosed quote", fence + "sh\nelicitation keys create --principal 'alice\n" + fence, "not valid shell"},
		{"placeholder read as a redirection", fence + "sh\nelicitation audit <id>\n" + fence, "not valid shell"},
		{"unknown program", fence + "sh\nfrobctl deploy\n" + fence, `does not know "frobctl"`},
		{"unlabelled commands are commands", "    go run ./cmd/elicitation serve --bogus\n", "has no flag -bogus"},
		{"unlabelled commands held in variables", "    I=\"node node_modules/.bin/mcp-inspector --cli\"\n    C=\"node node_modules/.bin/mcp-server-everything\"\n\n    $I --method tools/call --tool-name echo --tool-arg message=hello $C\n", `"node" is read as one`},
		{"console prompt lines", fence + "console\n$ elicitation serve --bogus\nelicitation: flag provided but not defined\n" + fence, "has no flag -bogus"},
		{"inspector option that 2.x ignores", fence + "sh\nnode node_modules/.bin/mcp-inspector --cli http://127.0.0.1:8080/mcp --method tools/list --tool-args message=x\n" + fence, "has no option --tool-args"},
		{"inspector reads the URL as a tool argument", fence + "sh\nnode node_modules/.bin/mcp-inspector --cli --method tools/call --tool-name elicit_status --tool-arg elicitationId=x http://127.0.0.1:8080/mcp\n" + fence, "is read as one"},
		{"inspector reads the URL as a header", fence + "sh\nnode node_modules/.bin/mcp-inspector --cli --method tools/list --header 'Authorization: Bearer x' http://127.0.0.1:8080/mcp\n" + fence, "is read as one"},
		{"inspector without a server", fence + "sh\nnode node_modules/.bin/mcp-inspector --cli --method tools/list --header 'Authorization: Bearer x'\n" + fence, "needs a server URL or command"},
		{"inspector with two modes", fence + "sh\nnode node_modules/.bin/mcp-inspector --cli --tui http://127.0.0.1:8080/mcp --method tools/list\n" + fence, "one of --web, --cli, --tui"},
		{"good: --tool-arg, then the command after --", fence + "sh\nnode node_modules/.bin/mcp-inspector --cli --method tools/call --tool-name echo --tool-arg message=hello -- node node_modules/.bin/mcp-server-everything\n" + fence, ""},
		{"good: the command, then the options after --", fence + "sh\nnode node_modules/.bin/mcp-inspector --cli node node_modules/.bin/mcp-server-everything -- --method tools/call --tool-name echo --tool-arg message=hello\n" + fence, ""},
		{"good: --header last", fence + "sh\nnode node_modules/.bin/mcp-inspector --cli http://127.0.0.1:8080/mcp --method tools/list --header \"Authorization: Bearer $KEY\"\n" + fence, ""},
		{"claude mcp add without http transport", fence + "sh\nclaude mcp add elicitation http://127.0.0.1:8080/mcp\n" + fence, "add --transport http"},
		{"claude mcp add header", fence + "sh\nclaude mcp add --transport http elicitation http://127.0.0.1:8080/mcp --header 'Authorization elk_x'\n" + fence, "is not \"Name: value\""},
		{"claude mcp add --header before the name", fence + "sh\nclaude mcp add --transport http --header \"Authorization: Bearer $KEY\" elicitation http://127.0.0.1:8080/mcp\n" + fence, "put it after the name and the URL"},
		{"claude mcp add unknown option", fence + "sh\nclaude mcp add --transport http --timeout 5 elicitation http://127.0.0.1:8080/mcp\n" + fence, "has no option --timeout"},
		{"good: claude mcp add -e before --", fence + "sh\nclaude mcp add my-server -e API_KEY=xxx -- node ./my-server.js\n" + fence, ""},
		{"code --add-mcp without type", fence + "sh\ncode --add-mcp '{\"name\":\"elicitation\",\"url\":\"http://127.0.0.1:8080/mcp\"}'\n" + fence, `needs "type"`},
		{"invalid JSON", fence + "json\n{ \"mcpServers\": { \"elicitation\": { \"url\": \"http://x/mcp\", } } }\n" + fence, "not valid JSON"},
		{"Claude Code remote without type", fence + "json host=claude-code\n{\"mcpServers\": {\"elicitation\": {\"url\": \"http://127.0.0.1:8080/mcp\"}}}\n" + fence, `need "type": "http"`},
		{"VS Code under mcpServers", fence + "json host=vscode\n{\"mcpServers\": {\"elicitation\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:8080/mcp\"}}}\n" + fence, `not "mcpServers"`},
		{"VS Code input not defined", fence + "json\n{\"servers\": {\"e\": {\"type\": \"http\", \"url\": \"http://x/mcp\", \"headers\": {\"Authorization\": \"Bearer ${input:key}\"}}}}\n" + fence, "no entry of \"inputs\""},
		{"Claude Desktop url entry", fence + "json host=claude-desktop\n{\"mcpServers\": {\"elicitation\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:8080/mcp\"}}}\n" + fence, "mcp-remote"},
		{"Authorization without Bearer", fence + "json\n{\"mcpServers\": {\"e\": {\"type\": \"http\", \"url\": \"http://x/mcp\", \"headers\": {\"Authorization\": \"elk_x\"}}}}\n" + fence, `"Bearer <key>"`},
		{"Goose without uri", fence + "yaml\nextensions:\n  elicitation:\n    enabled: true\n    type: streamable_http\n    url: http://127.0.0.1:8080/mcp\n" + fence, `unknown key "url"`},
		{"proxy config the proxy refuses", fence + "yaml\nupstream:\n  transport: carrier-pigeon\n" + fence, "the proxy refuses"},
		{"no-check needs a reason", fence + "sh no-check\nfrobctl deploy\n" + fence, "needs a reason"},
		{"unknown info word", fence + "json hots=vscode\n{}\n" + fence, "not host=NAME"},

		{"prose: a diagram", fence + "\n  agent ── Bearer key ─┤ ANY /mcp\n" + fence, ""},
		{"prose: text output", fence + "text\nelicitation dev is running\n" + fence, ""},
		{"prose: Go", fence + "go\nfunc f(ctx, id) error\n" + fence, ""},
		{"marked block", fence + "sh no-check: needs an AWS account\nfrobctl deploy --everything\n" + fence, ""},
		{"good commands", fence + "sh\nKEY=$(elicitation keys create --principal alice)   # printed once\nelicitation serve --require-api-key --max-wait 20s\ngo test -count=1 -run TestDocs ./internal/docstest/\nmake -n run\nclaude mcp add --transport http elicitation http://127.0.0.1:8080/mcp --header \"Authorization: Bearer $KEY\"\n" + fence, ""},
		{"good configs", fence + "json host=vscode\n{\"inputs\": [{\"type\": \"promptString\", \"id\": \"key\", \"password\": true}], \"servers\": {\"e\": {\"type\": \"http\", \"url\": \"http://x/mcp\", \"headers\": {\"Authorization\": \"Bearer ${input:key}\"}}}}\n" + fence, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := docstest.Extract("case.md", []byte(tc.md+"\n"))
			var errs []error
			if err != nil {
				errs = append(errs, err)
			}
			for _, b := range blocks {
				errs = append(errs, c.Check(context.Background(), b)...)
			}
			if len(blocks) == 0 {
				t.Fatalf("no block extracted from %q", tc.md)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			all := strings.Join(got, "\n")
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("want no problem, got:\n%s", all)
			case tc.want != "" && !strings.Contains(all, tc.want):
				t.Errorf("want a problem saying %q, got:\n%s", tc.want, all)
			}
		})
	}
}

// Commands aimed at the local server run against a started one, and a
// command that fails there fails the docs.
func TestRunAgainstServer(t *testing.T) {
	c := checker(t)
	c.Server = startServer(t, c.Bin["elicitation"])
	fence := "```"
	inspector := "node node_modules/.bin/mcp-inspector --cli http://127.0.0.1:8080/mcp --transport http "
	for _, tc := range []struct{ name, md, want string }{
		{"tool error", fence + "sh\n" + inspector + "--method tools/call --tool-name elicit_status --tool-arg elicitationId=no-such-id\n" + fence, "run against the started server"},
		{"unknown tool", fence + "sh\n" + inspector + "--method tools/call --tool-name elicit_everything --tool-arg x=y\n" + fence, "run against the started server"},
		{"connect to an unknown host", fence + "sh\nelicitation connect emacs\n" + fence, `unknown host "emacs"`},
		{"curl to a missing route", fence + "sh\ncurl -sf http://127.0.0.1:8080/nope\n" + fence, "run against the started server"},
		{"good: tools/list", fence + "sh\n" + inspector + "--method tools/list\n" + fence, ""},
		{"good: a request", fence + "sh\n" + inspector + "--method tools/call --tool-name elicit_approval --tool-arg message=hi --tool-arg context=x\n" + fence, ""},
		{"not run: starts its own server", fence + "sh\nbin/mcp-elicitation-proxy --config examples/manual-everything.config.yaml --http 127.0.0.1:8080 &\n" + inspector + "--method tools/call --tool-name echo --tool-arg message=hi\nkill %1\n" + fence, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := docstest.Extract("case.md", []byte(tc.md+"\n"))
			if err != nil || len(blocks) != 1 {
				t.Fatalf("%v %d", err, len(blocks))
			}
			before := c.Ran
			errs := c.Check(context.Background(), blocks[0])
			var all []string
			for _, e := range errs {
				all = append(all, e.Error())
			}
			got := strings.Join(all, "\n")
			switch {
			case tc.want == "" && got != "":
				t.Errorf("want no problem, got:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("want %q, got:\n%s", tc.want, got)
			case strings.HasPrefix(tc.name, "good") && c.Ran == before:
				t.Errorf("the command was not run")
			}
		})
	}
}
