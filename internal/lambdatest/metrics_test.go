package lambdatest_test

import (
	"bytes"
	"context"
	"encoding/json"
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
// with the test clock: a request past its expiry is counted once, in an
// EMF line, and a second sweep counts nothing.
func TestExpirySweepUnderNotifyPolicy(t *testing.T) {
	testenv.Slow(t, "DynamoDB Local")
	t.Parallel()
	endpoint := dynamotest.Endpoint(t)
	table := dynamotest.Table(t, dynamotest.Client(endpoint))
	enf := lambdatest.NewEnforcer(t, "NotifyFunction", lambdatest.Policies(t)["NotifyFunction"], endpoint)
	clock := testclock.New(time.Now().UTC())
	creator := elicitation.NewService(elicitation.Config{Store: dynamostore.New(dynamotest.Client(endpoint), table, dynamostore.Options{}), Now: clock.Now})
	if _, err := creator.CreateApproval(context.Background(), "alice", elicitation.ApprovalInput{Message: "Ship?", Context: json.RawMessage(`1`), TimeoutSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	a := &compose.App{Metrics: metrics.NewEMF(&lines, "Elicitation", 0, clock.Now)}
	a.Service = elicitation.NewService(elicitation.Config{Store: dynamostore.New(dynamotest.Client(enf.URL), table, dynamostore.Options{}), Now: clock.Now, Observer: a.Metrics})
	sweep := compose.ExpirySweep(a)
	if err := sweep(context.Background()); err != nil || lines.Len() != 0 {
		t.Fatalf("a sweep before the expiry: %v, lines %q", err, lines.String())
	}
	clock.Add(61 * time.Second)
	for range 2 {
		if err := sweep(context.Background()); err != nil {
			t.Fatalf("sweep: %v (refused: %v)", err, enf.Denied())
		}
	}
	if denied := enf.Denied(); len(denied) > 0 {
		t.Fatalf("the notify function's policy refused %v", denied)
	}
	got := strings.Split(strings.TrimSpace(lines.String()), "\n")
	var l map[string]any
	if len(got) != 1 || json.Unmarshal([]byte(got[0]), &l) != nil || l[metrics.RequestsExpired] != 1.0 || l["principal"] != "alice" || l["kind"] != "approval" {
		t.Fatalf("EMF lines after two sweeps: %q", got)
	}
}
