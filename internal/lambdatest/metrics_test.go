package lambdatest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/metrics"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestMetricsOnLambda: the MCP function, under the Runtime Interface
// Emulator, writes a CloudWatch embedded metric format line to its log for
// a request it creates, in the default namespace, with the principal and
// kind as dimensions (internal/metrics' tests check lines against the
// format's schema).
func TestMetricsOnLambda(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	s := newStack(t, stackOptions{})
	mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-approval", phKey, s.keys["alice"]))

	var found map[string]any
	for deadline := time.Now().Add(5 * time.Second); found == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(s.fn["mcp"].Logs(), "\n") {
			var v map[string]any
			if i := strings.Index(line, `{"_aws"`); i < 0 || json.Unmarshal([]byte(line[i:]), &v) != nil {
				if i := strings.Index(line, "{"); i < 0 || json.Unmarshal([]byte(line[i:]), &v) != nil {
					continue
				}
			}
			if _, ok := v[metrics.RequestsCreated]; ok {
				found = v
			}
		}
	}
	if found == nil {
		t.Fatalf("no EMF line for %s in the MCP function's log:\n%s", metrics.RequestsCreated, s.fn["mcp"].Logs())
	}
	b, _ := json.Marshal(found)
	var l struct {
		AWS       metrics.EMFMetadata `json:"_aws"`
		Principal string              `json:"principal"`
		Kind      string              `json:"kind"`
		Value     float64             `json:"elicitation_requests_created_total"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	ok := l.Principal == "alice" && l.Kind == "approval" && l.Value == 1 && l.AWS.Timestamp > 0 && len(l.AWS.CloudWatchMetrics) == 1
	if ok {
		d := l.AWS.CloudWatchMetrics[0]
		ok = d.Namespace == "Elicitation" && len(d.Dimensions) == 1 && strings.Join(d.Dimensions[0], ",") == "principal,kind" &&
			len(d.Metrics) == 1 && d.Metrics[0].Name == metrics.RequestsCreated && d.Metrics[0].Unit == "Count"
	}
	if !ok {
		t.Fatalf("EMF line %s", b)
	}
}

// TestExpirySweepUnderNotifyPolicy: the metrics' expiry sweep, as the
// notify function runs it on its schedule, through the IAM enforcer with
// the notify function's policy from template.yaml (the pending index, the
// request's state, the audit trail's once-only append), on DynamoDB Local
// with the test clock: each sweep records the requests pending (EMF gauge
// lines: alice's one, then none); a request past its expiry is counted
// once, in an EMF line, and a second sweep counts nothing.
func TestExpirySweepUnderNotifyPolicy(t *testing.T) {
	testenv.Slow(t, "DynamoDB Local")
	t.Parallel()
	endpoint := dynamotest.Endpoint(t)
	table := dynamotest.Table(t, dynamotest.Client(endpoint))
	enf := lambdatest.NewEnforcer(t, "NotifyFunction", lambdatest.Policies(t)["NotifyFunction"], endpoint)
	clock := testclock.New(time.Now().UTC())
	creator := elicitation.NewService(elicitation.Config{Store: dynamostore.New(dynamotest.Client(endpoint), table, dynamostore.Options{}), Now: clock.Now})
	if _, err := creator.Create(context.Background(), "alice", elicitation.KindApproval, elicitation.Input{Message: "Ship?", Context: json.RawMessage(`1`), TimeoutSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	a := &compose.App{Metrics: metrics.NewEMF(&lines, "Elicitation", 0, clock.Now), Store: dynamostore.New(dynamotest.Client(enf.URL), table, dynamostore.Options{})}
	a.Service = elicitation.NewService(elicitation.Config{Store: a.Store, Now: clock.Now, Observer: a.Metrics})
	sweep := compose.ExpirySweep(a)
	if err := sweep(context.Background()); err != nil || lines.String() != pendingLines(t, &lines, "alice/approval=1", "<nil>/<nil>=1") {
		t.Fatalf("a sweep before the expiry: %v, lines %q", err, lines.String())
	}
	lines.Reset()
	clock.Add(61 * time.Second)
	for range 2 {
		if err := sweep(context.Background()); err != nil {
			t.Fatalf("sweep: %v (refused: %v)", err, enf.Denied())
		}
	}
	if denied := enf.Denied(); len(denied) > 0 {
		t.Fatalf("the notify function's policy refused %v", denied)
	}
	var expired []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(lines.String()), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if _, ok := l[metrics.RequestsPending]; ok {
			if l[metrics.RequestsPending] != 0.0 || l["principal"] != nil {
				t.Errorf("a pending line after the expiry: %q, want none pending", line)
			}
			continue
		}
		expired = append(expired, l)
	}
	if len(expired) != 1 || expired[0][metrics.RequestsExpired] != 1.0 || expired[0]["principal"] != "alice" || expired[0]["kind"] != "approval" {
		t.Fatalf("EMF lines after two sweeps: %q", lines.String())
	}
}

// pendingLines is lines' text if every line is a pending gauge and they
// read want ("principal/kind=n", in order), else "" (and the test fails).
func pendingLines(t *testing.T, lines *bytes.Buffer, want ...string) string {
	t.Helper()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(lines.String()), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil || l[metrics.RequestsPending] == nil {
			t.Errorf("not a pending gauge line: %q", line)
			return ""
		}
		got = append(got, fmt.Sprintf("%v/%v=%v", l["principal"], l["kind"], l[metrics.RequestsPending]))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pending gauges %q, want %q", got, want)
		return ""
	}
	return lines.String()
}
