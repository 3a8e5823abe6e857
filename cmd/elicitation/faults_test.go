package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
