package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The operator's audit command derives expiry like every other read: a
// request still stored as pending after its expiresAt shows as expired.
func TestAuditDerivesExpiry(t *testing.T) {
	// An id may start with "-" (ids are base64url): it is still the
	// operand, after flags or after "--", never read as a flag.
	dash := "-" + elicitation.NewID()[1:]
	for _, tc := range []struct {
		name string
		id   string
		args func(dir, id string) []string
	}{
		{"id after flags", elicitation.NewID(), func(dir, id string) []string { return []string{"audit", "--data-dir", dir, id} }},
		{"dash id after flags", dash, func(dir, id string) []string { return []string{"audit", "--data-dir", dir, id} }},
		{"dash id after --", dash, func(dir, id string) []string { return []string{"audit", "--data-dir=" + dir, "--", id} }},
	} {
		t.Run(tc.name, func(t *testing.T) { testAuditDerivesExpiry(t, tc.id, tc.args) })
	}
}

func testAuditDerivesExpiry(t *testing.T, id string, args func(dir, id string) []string) {
	dir := t.TempDir()
	store, err := boltstore.Open(filepath.Join(dir, "elicitation.db"))
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now().Add(-2 * time.Hour).UTC()
	st := elicitation.State{
		ID: id, Kind: elicitation.KindApproval, Owner: elicitation.Anonymous, Status: elicitation.StatusPending,
		CreatedAt: created, ExpiresAt: created.Add(time.Hour), RetainUntil: created.Add(time.Hour + elicitation.DefaultRetention),
	}
	_, hash := elicitation.NewReviewKey()
	req := elicitation.Request{State: st, Payload: elicitation.Payload{Message: "Ship?", Context: json.RawMessage("1"), ReviewKeyHash: hash}}
	if err := store.Create(context.Background(), req, elicitation.AuditEntry{At: created, Action: elicitation.ActionCreated, Principal: elicitation.Anonymous}); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), args(dir, st.ID), &out, io.Discard, noEnv); err != nil {
		t.Fatal(err)
	}
	var got struct{ State struct{ Status string } }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.State.Status != "expired" {
		t.Fatalf("audit of a request past its expiresAt: status %q, want expired (%v)\n%s", got.State.Status, err, out.String())
	}
}

// ELICITATION_REQUIRE_API_KEY takes exactly true or false (compose's one
// boolean parser); anything else is refused, never read as false (which
// would serve /mcp without API keys).
func TestRequireAPIKeyEnv(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    bool
		wantErr bool
	}{
		{"", false, false}, {"true", true, false}, {"false", false, false},
		{"1", false, true}, {"TRUE", false, true}, {"0", false, true}, {"yes", false, true}, {"on", false, true},
	} {
		getenv := func(k string) string {
			if k == "ELICITATION_REQUIRE_API_KEY" {
				return tc.value
			}
			return ""
		}
		cfg, err := parseServe(nil, io.Discard, getenv)
		if (err != nil) != tc.wantErr || (err == nil && cfg.RequireAPIKey != tc.want) {
			t.Errorf("ELICITATION_REQUIRE_API_KEY=%q: RequireAPIKey %v, err %v; want %v, error %v", tc.value, cfg.RequireAPIKey, err, tc.want, tc.wantErr)
		}
	}
}

// --retention 0 would be read by the service as "the default" (7 days),
// keeping requests far longer than asked: it is refused.
func TestZeroRetentionRefused(t *testing.T) {
	if _, err := parseServe([]string{"--retention", "0s"}, io.Discard, noEnv); err == nil {
		t.Fatal("--retention 0s accepted; the service would keep requests for the default 7 days")
	}
	if cfg, err := parseServe([]string{"--retention", "1m"}, io.Discard, noEnv); err != nil || cfg.Retention != time.Minute {
		t.Fatalf("--retention 1m: %v %v", cfg.Retention, err)
	}
}
