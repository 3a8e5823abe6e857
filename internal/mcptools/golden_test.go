package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestToolSchemasGolden snapshots every tool as a client receives it from
// tools/list (name, title, description, annotations, input and output
// schema) under testdata/tools/. A schema that changes unnoticed fails
// here; run `go test ./internal/mcptools -run TestToolSchemasGolden
// -update` to accept a deliberate change, and review the diff.
func TestToolSchemasGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stateless: true})
	cs := e.connect(t, proto20260728, "")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "tools")
	var seen []string
	for _, tool := range res.Tools {
		seen = append(seen, tool.Name)
		got, err := json.MarshalIndent(tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, tool.Name+".json")
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run with -update to create it)", tool.Name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("tool %s changed; if deliberate, run with -update and review the diff.\ngot:\n%s", tool.Name, got)
		}
	}
	slices.Sort(seen)
	if want := slices.Sorted(slices.Values(mcptools.ToolNames)); !slices.Equal(seen, want) {
		t.Errorf("tools/list has %v, want %v", seen, want)
	}
	// No stale snapshot of a tool that is gone.
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != len(mcptools.ToolNames) && !*update {
		t.Errorf("testdata/tools holds %d files for %d tools", len(files), len(mcptools.ToolNames))
	}
}

// TestToolSchemasResolve: every input and output schema is a valid JSON
// Schema (2020-12, as jsonschema-go reads it), and the input schemas accept
// a typical call, so a client that validates arguments does not refuse
// good ones.
func TestToolSchemasResolve(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stateless: true})
	cs := e.connect(t, proto20251125, "")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	typical := map[string]string{
		mcptools.ToolApproval:  `{"message":"m","context":{"a":1},"requestedSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"labels":{"submit":"Go"},"timeoutSeconds":600}`,
		mcptools.ToolSelection: `{"message":"m","options":[{"id":"a","label":"A","x":[1]}],"minSelections":1,"maxSelections":1,"rowTemplate":"{{ option.id }}"}`,
		mcptools.ToolAwait:     `{"elicitationId":"abc","waitSeconds":2.5}`,
		mcptools.ToolStatus:    `{"elicitationId":"abc"}`,
		mcptools.ToolResult:    `{"elicitationId":"abc"}`,
		mcptools.ToolCancel:    `{"elicitationId":"abc"}`,
	}
	for _, tool := range res.Tools {
		for kind, sch := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			b, _ := json.Marshal(sch)
			var s jsonschema.Schema
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatalf("%s %s schema: %v", tool.Name, kind, err)
			}
			rs, err := s.Resolve(nil)
			if err != nil {
				t.Fatalf("%s %s schema: %v", tool.Name, kind, err)
			}
			if kind == "input" {
				var inst any
				_ = json.Unmarshal([]byte(typical[tool.Name]), &inst)
				if err := rs.Validate(inst); err != nil {
					t.Errorf("%s input schema refuses a typical call: %v", tool.Name, err)
				}
			}
		}
	}
}
