package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCompactCommand: "elicitation compact" refuses the store while the
// server holds it, compacts it once the server is stopped, and the server
// then starts on the compacted file with its requests.
func TestCompactCommand(t *testing.T) {
	dir := t.TempDir()
	m := start(t, "--data-dir", dir)
	created := call(t, agent(t, m.MCPURL), "elicit_approval", map[string]any{"message": "Ship?", "context": 1})
	id := created["elicitationId"].(string)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"compact", "--data-dir", dir}, &out, io.Discard, noEnv); err == nil || !strings.Contains(err.Error(), "open") {
		t.Errorf("compact while the server runs: %v, want a refusal", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"compact", "--data-dir", dir}, &out, io.Discard, noEnv); err != nil || !strings.Contains(out.String(), "compacted "+filepath.Join(dir, "elicitation.db")) {
		t.Fatalf("compact: %q %v", out.String(), err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"audit", "--data-dir", dir, id}, &out, io.Discard, noEnv); err != nil || !strings.Contains(out.String(), `"pending"`) {
		t.Fatalf("audit after compact: %q %v", out.String(), err)
	}
	if err := run(context.Background(), []string{"compact", "--store", "dynamodb"}, &out, io.Discard, noEnv); err == nil || !strings.Contains(err.Error(), "embedded store") {
		t.Errorf("compact of DynamoDB: %v", err)
	}
}

// TestServeRefusesDamagedStore: a truncated store file stops "serve" before
// it listens, with one sentence naming the file and how to restore it
// (it used to fault with SIGBUS, or panic later in the cleanup goroutine).
func TestServeRefusesDamagedStore(t *testing.T) {
	dir := t.TempDir()
	m := start(t, "--data-dir", dir)
	for range 20 {
		call(t, agent(t, m.MCPURL), "elicit_approval", map[string]any{"message": "Ship?", "context": strings.Repeat("x", 4000)})
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "elicitation.db")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2+100); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:0", "--data-dir", dir}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Start(context.Background(), cfg, io.Discard)
	if err == nil {
		m2.Close()
		t.Fatal("serve started on a truncated store")
	}
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "truncated") || !strings.Contains(msg, "restore it from a backup") {
		t.Errorf("serve's error does not say what, which file and how to restore: %s", msg)
	}
}

// TestDamageWhileServing: the store file damaged under a running server
// (its pages zeroed) fails the calls that touch it, the review page with
// its own error page and a tool call with an internal error, while the
// process keeps serving; before, a page handler panicked on the damaged
// page and the connection dropped.
func TestDamageWhileServing(t *testing.T) {
	dir := t.TempDir()
	m := start(t, "--data-dir", dir)
	s := agent(t, m.MCPURL)
	created := call(t, s, "elicit_approval", map[string]any{"message": "Ship?", "context": strings.Repeat("x", 3000)})
	for range 30 {
		call(t, s, "elicit_approval", map[string]any{"message": "More?", "context": strings.Repeat("y", 3000)})
	}
	path := filepath.Join(dir, "elicitation.db")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Every page but the two meta pages.
	if _, err := f.WriteAt(make([]byte, fi.Size()-2*4096), 2*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res, err := http.Get(created["reviewUrl"].(string))
	if err != nil {
		t.Fatalf("review page on a damaged store: %v (the connection dropped)", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "<html") {
		t.Errorf("review page on a damaged store: %d\n%.300s", res.StatusCode, body)
	}
	r, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit_status", Arguments: map[string]any{"elicitationId": created["elicitationId"]}})
	if err != nil || !r.IsError || !strings.HasPrefix(text(r), "internal") {
		t.Errorf("elicit_status on a damaged store: %v, %v", err, r)
	}
	res, err = http.Get(strings.TrimSuffix(m.MCPURL, "/mcp") + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the server stopped answering: %v", err)
	}
	res.Body.Close()
}

// TestCheckCommand: "elicitation check" refuses the store while the server
// holds it, passes a whole store once the server is stopped, and names the
// file and how to restore it when its pages are damaged.
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	m := start(t, "--data-dir", dir)
	for range 20 {
		call(t, agent(t, m.MCPURL), "elicit_approval", map[string]any{"message": "Ship?", "context": strings.Repeat("x", 4000)})
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"check", "--data-dir", dir}, &out, io.Discard, noEnv); err == nil || !strings.Contains(err.Error(), "open") {
		t.Errorf("check while the server runs: %v, want a refusal", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "elicitation.db")
	out.Reset()
	if err := run(context.Background(), []string{"check", "--data-dir", dir}, &out, io.Discard, noEnv); err != nil || !strings.Contains(out.String(), "checked "+path+": every page is sound") {
		t.Fatalf("check of a whole store: %q %v", out.String(), err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, fi.Size()-4*4096), 4*4096); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	out.Reset()
	err = run(context.Background(), []string{"check", "--data-dir", dir}, &out, io.Discard, noEnv)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "restore it from a backup") {
		t.Errorf("check of a damaged store: %q %v", out.String(), err)
	}
	if err := run(context.Background(), []string{"check", "--store", "dynamodb"}, &out, io.Discard, noEnv); err == nil || !strings.Contains(err.Error(), "embedded store") {
		t.Errorf("check of DynamoDB: %v", err)
	}
}
