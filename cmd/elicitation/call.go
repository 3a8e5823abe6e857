package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
)

// runCall calls one tool on a running server, as an agent would, and
// prints its result: the first request by hand needs nothing but the
// server.
//
//	elicitation call [--url URL] TOOL [name=value …]
func runCall(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var c Config
	fs := flag.NewFlagSet("elicitation call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := bind(fs, &c, getenv, "addr"); err != nil {
		return err
	}
	endpoint := fs.String("url", "", "the MCP endpoint (default: http://<--addr>/mcp, the local server)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: elicitation call [flags] TOOL [name=value …]

Calls TOOL (elicit_approval, elicit_selection, elicit_await, elicit_status,
elicit_result, elicit_cancel) on a running server and prints its result as
JSON. A value that parses as JSON is that JSON (context='{"v": 2}',
waitSeconds=8); any other value is a string (message="Deploy api v1.3?").
Under --require-api-key the key is read from $%s.

flags:
`, hostconfig.KeyVariable)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("call needs a TOOL")
	}
	tool := fs.Arg(0)
	arguments, err := toolArguments(fs.Args()[1:])
	if err != nil {
		return err
	}
	url := *endpoint
	if url == "" {
		url = dialable("http://" + c.Addr + "/mcp")
	}
	httpClient := http.DefaultClient
	if key := getenv(hostconfig.KeyVariable); key != "" {
		// The API key on every request, as "Authorization: Bearer KEY".
		httpClient = oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: key}))
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "elicitation-call", Version: version}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient}, nil)
	if err != nil {
		return fmt.Errorf("connect to %s (is elicitation serve running there?): %w", url, err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
	if err != nil {
		if uerr := unknownTool(ctx, session, tool); uerr != nil {
			return uerr
		}
		return fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return fmt.Errorf("%s: %s", tool, resultText(res))
	}
	out := any(res.StructuredContent)
	if out == nil {
		out = resultText(res)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// unknownTool says which tools the server has when it has none named tool
// (a misspelled name fails at the transport, where the error says only
// "Bad Request"); nil when it has one, or when the list cannot be read.
func unknownTool(ctx context.Context, session *mcp.ClientSession, tool string) error {
	list, err := session.ListTools(ctx, nil)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(list.Tools))
	for _, t := range list.Tools {
		if t.Name == tool {
			return nil
		}
		names = append(names, t.Name)
	}
	return fmt.Errorf("unknown tool %q; the server's tools are: %s", tool, strings.Join(names, ", "))
}

// toolArguments reads name=value words: JSON where the value parses as
// JSON, else the string.
func toolArguments(words []string) (map[string]any, error) {
	args := map[string]any{}
	for _, w := range words {
		name, value, ok := strings.Cut(w, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("argument %q: want name=value", w)
		}
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			v = value
		}
		args[name] = v
	}
	return args, nil
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
