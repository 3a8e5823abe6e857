package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestMCPRemoteOAuth: mcp-remote, as Claude Desktop runs it for a remote
// server (a stdio bridge given the URL alone, no header), completes its
// OAuth flow against the local --oauth server: it finds the
// authorization server from the 401, registers itself, opens the
// browser (here a BROWSER that hands the URL to the test), where alice
// signs in at the real provider and allows it; its callback takes the
// code, and an MCP client on its stdio lists the tools and creates a
// request whose audit names alice.
func TestMCPRemoteOAuth(t *testing.T) {
	testenv.Slow(t, "mcp-remote")
	t.Parallel() // it waits on mcp-remote, the provider and the server
	node, proxy := testenv.Node22(t), testenv.NodeModule(t, "mcp-remote/dist/proxy.js")
	m, base := startOAuth(t)
	dir := t.TempDir()
	opened := browserShim(t, dir)

	// A guard for a busy machine (the keyed mcp-remote test has seen the
	// handshake alone take more than 60 s at load 33).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	person := make(chan error, 1)
	browser := oidctest.Browser(t)
	go func() {
		err := remotePerson(ctx, browser, opened, base)
		if err != nil {
			cancel() // mcp-remote would wait for a callback that will not come
		}
		person <- err
	}()
	var stderr testenv.SyncBuffer
	cmd := exec.Command(node, proxy, m.MCPURL, "--auth-timeout", "180")
	cmd.Env = []string{
		"HOME=" + dir, "PATH=" + filepath.Dir(node) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"MCP_REMOTE_CONFIG_DIR=" + filepath.Join(dir, "mcp-auth"), "BROWSER=" + filepath.Join(dir, "browser"), "NO_COLOR=1",
	}
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-desktop-test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("mcp-remote did not connect: %v (the person: %v)\n%s", err, personErr(person), stderr.String())
	}
	t.Cleanup(func() { _ = session.Close() })
	if err := <-person; err != nil {
		t.Fatalf("the person: %v", err)
	}

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list through mcp-remote: %v\n%s", err, stderr.String())
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(" "+strings.Join(names, " ")+" ", " elicit_approval ") {
		t.Fatalf("tools through mcp-remote: %v", names)
	}
	c := call(t, session, "elicit_approval", map[string]any{"message": "Through mcp-remote with OAuth?", "context": 1})
	st := call(t, session, "elicit_status", map[string]any{"elicitationId": c["elicitationId"], "includeAudit": true})
	if b, _ := json.Marshal(st["audit"]); !strings.Contains(string(b), `"principal":"alice@example.com"`) {
		t.Errorf("the audit trail does not name alice as the requester: %s", b)
	}
}

// browserShim makes dir/browser, a BROWSER for xdg-open (which the open
// package mcp-remote uses runs) that writes the URL it is given to a
// fifo, and returns a channel that yields what the first opening wrote.
func browserShim(t *testing.T, dir string) <-chan string {
	t.Helper()
	fifo := filepath.Join(dir, "opened")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$1\" > '" + fifo + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "browser"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	opened := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until the browser is opened, or the cleanup below
		opened <- strings.TrimSpace(string(b))
	}()
	t.Cleanup(func() {
		// Unblock the reader if the browser was never opened (a writer
		// that closes at once is an end of file).
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	})
	return opened
}

// remotePerson waits for mcp-remote to open the browser and acts as
// alice there: signs in, allows "MCP CLI Proxy", and lands on its
// loopback callback.
func remotePerson(ctx context.Context, browser *http.Client, opened <-chan string, base string) error {
	var authURL string
	select {
	case authURL = <-opened:
	case <-ctx.Done():
		return errors.New("mcp-remote did not open the browser")
	}
	u, err := url.Parse(authURL)
	if err != nil || !strings.HasPrefix(authURL, base+"/oauth/authorize?") {
		return fmt.Errorf("mcp-remote opened %q, not the server's authorization endpoint", authURL)
	}
	redirect := u.Query().Get("redirect_uri")
	resp, body, err := allowAsAlice(ctx, browser, authURL, base, "MCP CLI Proxy")
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Request.URL.String(), redirect+"?") {
		return fmt.Errorf("the browser ended at %s (HTTP %d), not mcp-remote's callback %s: %.500s", resp.Request.URL, resp.StatusCode, redirect, body)
	}
	return nil
}

// personErr is the person's outcome if it is known yet.
func personErr(person <-chan error) error {
	select {
	case err := <-person:
		return err
	default:
		return errors.New("still waiting")
	}
}
