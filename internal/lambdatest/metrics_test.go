package lambdatest_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/metrics"
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
