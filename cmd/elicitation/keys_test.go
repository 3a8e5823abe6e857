package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
)

// The keys commands, with the store flags before or after the command.
func TestKeysCommands(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "not-yet") // before the server's first start
	keys := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"keys"}, args...), &out, io.Discard, noEnv)
		return out.String(), err
	}
	out, err := keys("create", "--data-dir", dir, "--principal", "alice", "--name", "ci", "--expires", "90d", "--json")
	if err != nil {
		t.Fatalf("keys create --data-dir D: %v", err)
	}
	var created struct {
		Key       string    `json:"key"`
		ID        string    `json:"id"`
		Principal string    `json:"principal"`
		ExpiresAt time.Time `json:"expiresAt"`
		Hash      string    `json:"hash"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatalf("create --json printed %q: %v", out, err)
	}
	if !apikey.WellFormed(created.Key) || created.Principal != "alice" || created.Hash != apikey.Hash(created.Key) {
		t.Fatalf("create printed %+v", created)
	}
	if d := time.Until(created.ExpiresAt); d < 89*24*time.Hour || d > 91*24*time.Hour {
		t.Errorf("--expires 90d gave expiresAt %v", created.ExpiresAt)
	}
	// The store flags before the command reach the same store.
	if out, err = keys("--data-dir", dir, "create", "--principal", "bob"); err != nil {
		t.Fatalf("keys --data-dir D create: %v", err)
	}
	if !strings.Contains(out, "elk_") || !strings.Contains(out, "Authorization: Bearer") {
		t.Errorf("create printed %q", out)
	}
	if _, err = keys("revoke", created.ID, "--data-dir", dir); err == nil {
		t.Errorf("revoke ID --data-dir D: a flag after the id is an argument, want an error")
	}
	if out, err = keys("revoke", "--data-dir", dir, created.ID); err != nil || !strings.Contains(out, "revoked "+created.ID) {
		t.Fatalf("revoke: %v %q", err, out)
	}
	if out, err = keys("list", "--data-dir", dir); err != nil {
		t.Fatalf("list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], created.ID) || !strings.Contains(lines[1], "alice") || strings.HasSuffix(lines[1], "-") || !strings.HasSuffix(lines[2], "-") {
		t.Errorf("list printed:\n%s", out)
	}
	if strings.Contains(out, "elk_") {
		t.Errorf("list shows a key:\n%s", out)
	}
	if out, err = keys("list", "--json", "--data-dir", t.TempDir()); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("list --json of another data directory: %v %q, want []", err, out)
	}
	for _, args := range [][]string{
		nil, {"create"}, {"create", "--principal", "bad principal"}, {"create", "--principal", "a", "--expires", "soon"},
		{"create", "--principal", "anonymous"}, {"create", "--principal", "reviewer"},
		{"revoke"}, {"revoke", "ffffffffffffffff"}, {"list", "extra"}, {"rotate"}, {"create", "--principal", "a", "--nope"},
	} {
		if _, err := keys(append(args, "--data-dir", dir)...); err == nil {
			t.Errorf("keys %q succeeded, want an error", args)
		}
	}
	if _, err := keys("create", "-h"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("keys create -h: %v, want flag.ErrHelp", err)
	}
}

// "elicitation" alone prints the usage and fails (exit 2) instead of
// serving; flags without a command are pointed at "serve".
func TestNoCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), nil, &stdout, &stderr, noEnv)
	if !errors.Is(err, errNoCommand) || !strings.Contains(stderr.String(), "Usage: elicitation <command>") || stdout.Len() > 0 {
		t.Fatalf("elicitation: %v, stderr %q, stdout %q", err, stderr.String(), stdout.String())
	}
	err = run(context.Background(), []string{"--addr", "127.0.0.1:0"}, io.Discard, io.Discard, noEnv)
	if err == nil || !strings.Contains(err.Error(), "elicitation serve --addr 127.0.0.1:0") {
		t.Fatalf("elicitation --addr …: %v", err)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"help"}, &stdout, io.Discard, noEnv); err != nil || !strings.Contains(stdout.String(), "  serve ") {
		t.Fatalf("elicitation help: %v %q", err, stdout.String())
	}
}

// A port in use names the flag and the variable that choose another.
func TestAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = run(ctx, []string{"serve", "--addr", addr, "--data-dir", t.TempDir()}, io.Discard, io.Discard, noEnv)
	if err == nil {
		t.Fatal("serve on a port in use: no error")
	}
	for _, want := range []string{"address already in use", "--addr 127.0.0.1:", "ELICITATION_ADDR=127.0.0.1:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
