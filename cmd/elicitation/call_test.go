package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The README's first request by hand: elicitation call creates the
// request, the reviewer approves on the page, and elicit_result, the whole
// command, returns decision "submitted".
func TestCallFirstRequest(t *testing.T) {
	m := start(t, "--data-dir", t.TempDir())
	addr := strings.TrimSuffix(strings.TrimPrefix(m.MCPURL, "http://"), "/mcp")
	env := func(k string) string {
		if k == "ELICITATION_ADDR" {
			return addr
		}
		return ""
	}
	callJSON := func(args ...string) map[string]any {
		t.Helper()
		var out, stderr bytes.Buffer
		if err := run(context.Background(), append([]string{"call"}, args...), &out, &stderr, env); err != nil {
			t.Fatalf("call %q: %v\n%s", args, err, stderr.String())
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("call %q printed %q: %v", args, out.String(), err)
		}
		return v
	}
	created := callJSON("elicit_approval", "message=Deploy api v1.3?", `context={"service": "api", "version": "1.3", "replicas": 3}`)
	id, _ := created["elicitationId"].(string)
	reviewURL, _ := created["reviewUrl"].(string)
	if id == "" || reviewURL == "" || created["status"] != "pending" {
		t.Fatalf("created %v", created)
	}
	st := callJSON("elicit_status", "elicitationId="+id, "includeAudit=true")
	if st["status"] != "pending" || st["audit"] == nil {
		t.Fatalf("status %v", st)
	}
	token, _ := openReview(t, reviewURL)
	if code := submit(t, reviewURL, url.Values{"token": {token}, "decision": {"submitted"}}); code != http.StatusOK && code != http.StatusSeeOther {
		t.Fatalf("approve: %d", code)
	}
	res := callJSON("elicit_result", "elicitationId="+id)
	if res["decision"] != "submitted" || res["status"] != "consumed" {
		t.Fatalf("elicit_result after Approve: %v, want decision submitted", res)
	}

	// A tool error is the command's error, with the tool's sentence.
	err := run(context.Background(), []string{"call", "elicit_result", "elicitationId=nope"}, io.Discard, io.Discard, env)
	if err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Errorf("call elicit_result of an unknown id: %v", err)
	}
	// A misspelled tool is named as unknown, with the tools there are.
	err = run(context.Background(), []string{"call", "elicit_aproval", "message=m"}, io.Discard, io.Discard, env)
	if err == nil || !strings.Contains(err.Error(), `unknown tool "elicit_aproval"`) || !strings.Contains(err.Error(), "elicit_approval, ") || strings.Contains(err.Error(), "Bad Request") {
		t.Errorf("call elicit_aproval: %v, want unknown tool and the list", err)
	}
	for _, args := range [][]string{{"call"}, {"call", "elicit_status", "noequals"}} {
		if err := run(context.Background(), args, io.Discard, io.Discard, env); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
	if err := run(context.Background(), []string{"call", "--url", "http://127.0.0.1:1/mcp", "elicit_status", "elicitationId=x"}, io.Discard, io.Discard, env); err == nil || !strings.Contains(err.Error(), "is elicitation serve running") {
		t.Errorf("call to nothing: %v", err)
	}
}

// Under --require-api-key, call sends $ELICITATION_API_KEY.
func TestCallWithAPIKey(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"keys", "create", "--data-dir", dir, "--principal", "alice", "--json"}, &out, io.Discard, noEnv); err != nil {
		t.Fatal(err)
	}
	var k struct{ Key string }
	if err := json.Unmarshal(out.Bytes(), &k); err != nil {
		t.Fatal(err)
	}
	m := start(t, "--data-dir", dir, "--require-api-key")
	for key, ok := range map[string]bool{k.Key: true, "": false} {
		env := func(name string) string {
			if name == "ELICITATION_API_KEY" {
				return key
			}
			return ""
		}
		err := run(context.Background(), []string{"call", "--url", m.MCPURL, "elicit_approval", "message=Ship?", "context=1"}, io.Discard, io.Discard, env)
		if (err == nil) != ok {
			t.Errorf("key %q: err %v, want success %v", key, err, ok)
		}
	}
}
