package metrics

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// CheckEMF checks one log line against the embedded metric format: the
// specification's JSON Schema (testdata/emf.schema.json), and that every
// dimension names a string member and every metric a number at the top
// level. It returns the line decoded.
func CheckEMF(t testing.TB, line []byte) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/emf.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Fatalf("not a JSON object: %s: %v", line, err)
	}
	if err := rs.Validate(v); err != nil {
		t.Fatalf("line %s: %v", line, err)
	}
	if err := members(line); err != nil {
		t.Fatalf("line %s: %v", line, err)
	}
	return v
}

// members checks that the directives' names are the line's members.
func members(line []byte) error {
	var l struct {
		AWS EMFMetadata `json:"_aws"`
	}
	var top map[string]any
	if err := json.Unmarshal(line, &l); err != nil {
		return err
	}
	if err := json.Unmarshal(line, &top); err != nil {
		return err
	}
	for _, d := range l.AWS.CloudWatchMetrics {
		for _, set := range d.Dimensions {
			for _, name := range set {
				if _, ok := top[name].(string); !ok {
					return fmt.Errorf("dimension %q is not a string member", name)
				}
			}
		}
		for _, m := range d.Metrics {
			if _, ok := top[m.Name].(float64); !ok {
				return fmt.Errorf("metric %q is not a number member", m.Name)
			}
		}
	}
	return nil
}

func TestEMFLinesFollowTheFormat(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	c := NewEMF(&buf, "Elicitation", 2, func() time.Time { return at })
	st := elicitation.State{Owner: "ci", Kind: elicitation.KindApproval, CreatedAt: at}
	c.Created(st)
	decided := st
	decided.Status, decided.Decision, decided.DecidedAt = elicitation.StatusSubmitted, elicitation.DecisionSubmitted, at.Add(90*time.Second)
	c.Resolved(decided)
	c.Notified("slack", false)

	var lines []map[string]any
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		lines = append(lines, CheckEMF(t, sc.Bytes()))
	}
	want := []struct {
		metric string
		value  float64
		dims   map[string]string
	}{
		{RequestsCreated, 1, map[string]string{"principal": "ci", "kind": "approval"}},
		{RequestsApproved, 1, map[string]string{"principal": "ci", "kind": "approval"}},
		{TimeToDecision, 90, map[string]string{"principal": "ci", "kind": "approval"}},
		{NotifyFailed, 1, map[string]string{"target_type": "slack"}},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		l := lines[i]
		if l[w.metric] != w.value {
			t.Errorf("line %d: %s = %v, want %v", i, w.metric, l[w.metric], w.value)
		}
		for k, v := range w.dims {
			if l[k] != v {
				t.Errorf("line %d: %s = %v, want %q", i, k, l[k], v)
			}
		}
		aws := l["_aws"].(map[string]any)
		if aws["Timestamp"] != float64(at.UnixMilli()) {
			t.Errorf("line %d: Timestamp %v", i, aws["Timestamp"])
		}
		d := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
		if d["Namespace"] != "Elicitation" {
			t.Errorf("line %d: namespace %v", i, d["Namespace"])
		}
	}
}

func TestEMFSchemaRefusesMalformedLines(t *testing.T) {
	t.Parallel()
	// The check can fail: each of these breaks one rule of the format.
	for name, line := range map[string]string{
		"no _aws":         `{"x":1}`,
		"no timestamp":    `{"_aws":{"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"x"}]}]},"x":1}`,
		"bad unit":        `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"x","Unit":"Requests"}]}]},"x":1}`,
		"empty namespace": `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"","Dimensions":[[]],"Metrics":[{"Name":"x"}]}]},"x":1}`,
		"missing value":   `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"x"}]}]}}`,
		"missing dim":     `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["principal"]],"Metrics":[{"Name":"x"}]}]},"x":1}`,
	} {
		b, _ := os.ReadFile("testdata/emf.schema.json")
		var s jsonschema.Schema
		_ = json.Unmarshal(b, &s)
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		_ = json.Unmarshal([]byte(line), &v)
		if rs.Validate(v) == nil && members([]byte(line)) == nil {
			t.Errorf("%s: %s passed the check", name, line)
		}
	}
}

func TestPrincipalLabelsAreBounded(t *testing.T) {
	t.Parallel()
	b := newPrincipals(2)
	got := []string{b.label("a"), b.label(""), b.label("c"), b.label("a"), b.label("d")}
	if want := "a anonymous other a other"; strings.Join(got, " ") != want {
		t.Errorf("labels %v, want %s", got, want)
	}
}

// inbox is a pending index of fixed entries.
type inbox []elicitation.InboxEntry

func (in inbox) PendingEntries(_ context.Context, now time.Time, limit int) ([]elicitation.InboxEntry, error) {
	var out []elicitation.InboxEntry
	for _, e := range in {
		if e.ExpiresAt.After(now) && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

// TestEMFRecordsPending: RecordPending writes the requests pending now as
// gauge lines, one per principal and kind (in that order) and one in all,
// each a valid EMF line; a request past its expiry is not pending.
func TestEMFRecordsPending(t *testing.T) {
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	later := now.Add(time.Hour)
	in := inbox{
		{ID: "1", Owner: "ci", Kind: elicitation.KindApproval, ExpiresAt: later},
		{ID: "2", Owner: "ci", Kind: elicitation.KindApproval, ExpiresAt: later},
		{ID: "3", Owner: "bot", Kind: elicitation.KindSelection, ExpiresAt: later},
		{ID: "4", Owner: "bot", Kind: elicitation.KindApproval, ExpiresAt: now},
	}
	var buf bytes.Buffer
	if err := NewEMF(&buf, "Elicitation", 0, func() time.Time { return now }).RecordPending(context.Background(), in, now); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		l := CheckEMF(t, []byte(line))
		got = append(got, fmt.Sprintf("%v/%v=%v", l[LabelPrincipal], l[LabelKind], l[RequestsPending]))
	}
	if want := "bot/selection=1 ci/approval=2 <nil>/<nil>=3"; strings.Join(got, " ") != want {
		t.Errorf("pending lines %q, want %q", strings.Join(got, " "), want)
	}
}
