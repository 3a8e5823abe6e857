package infra_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNotifyFunction checks the notification wiring: the table's stream
// (keys only), the function it triggers, which the stream never retries
// (the outbox and the sweep are the one retry: no partial batch
// responses, no retries, no bisection, no dead-letter queue), the schedule
// of the sweep, the function's least-privilege policy, and who sees the
// targets' secrets.
func TestNotifyFunction(t *testing.T) {
	p := load(t)
	const fn = "NotifyFunction"
	if got := str(get(p.tree, "Resources", "Table", "Properties", "StreamSpecification", "StreamViewType")); got != "KEYS_ONLY" {
		t.Errorf("the table's stream view %q, want KEYS_ONLY (the function reads the item back; the review link stays out of stream records)", got)
	}
	props := get(p.tree, "Resources", fn, "Properties")
	events, _ := get(props, "Events").(map[string]any)
	var stream, sweep any
	for _, e := range events {
		switch str(get(e, "Type")) {
		case "DynamoDB":
			stream = get(e, "Properties")
		case "Schedule":
			sweep = get(e, "Properties")
		default:
			t.Errorf("%s has a %s event", fn, str(get(e, "Type")))
		}
	}
	if len(events) != 2 || stream == nil || sweep == nil {
		t.Fatalf("%s events %v, want a DynamoDB stream and a schedule", fn, events)
	}
	if got := str(get(stream, "Stream")); got != "{GetAtt:Table.StreamArn}" {
		t.Errorf("stream %q, want !GetAtt Table.StreamArn", got)
	}
	if n := num(t, "MaximumRetryAttempts", get(stream, "MaximumRetryAttempts")); n != 0 {
		t.Errorf("MaximumRetryAttempts %v, want 0: the outbox and the sweep retry a notice, never the stream (the default, -1, would also hold the shard)", n)
	}
	for _, k := range []string{"FunctionResponseTypes", "BisectBatchOnFunctionError", "DestinationConfig"} {
		if v := get(stream, k); v != nil {
			t.Errorf("the stream's %s is %v: a second retry policy beside the outbox's", k, v)
		}
	}
	filters, _ := get(stream, "FilterCriteria", "Filters").([]any)
	if len(filters) != 1 {
		t.Fatalf("FilterCriteria %v, want one filter", get(stream, "FilterCriteria"))
	}
	var pattern struct {
		EventName []string `json:"eventName"`
		DynamoDB  struct {
			Keys struct {
				PK struct {
					S []map[string]string `json:"S"`
				} `json:"pk"`
			} `json:"Keys"`
		} `json:"dynamodb"`
	}
	if err := json.Unmarshal([]byte(str(get(filters[0], "Pattern"))), &pattern); err != nil {
		t.Fatalf("filter pattern is not JSON: %v", err)
	}
	if !slices.Equal(pattern.EventName, []string{"INSERT"}) || len(pattern.DynamoDB.Keys.PK.S) != 1 || pattern.DynamoDB.Keys.PK.S[0]["prefix"] != "outbox#" {
		t.Errorf("filter pattern %+v, want new items whose pk starts with outbox#", pattern)
	}
	if got := str(get(sweep, "Schedule")); got != "rate(1 minute)" {
		t.Errorf("sweep schedule %q, want rate(1 minute)", got)
	}
	if to := num(t, fn+" Timeout", get(props, "Timeout")); to < 30 || to > 900 {
		t.Errorf("%s Timeout %v, want room for a batch of 10-second attempts", fn, to)
	}
	if n := num(t, fn+" ReservedConcurrentExecutions", get(props, "ReservedConcurrentExecutions")); n < 1 {
		t.Errorf("%s ReservedConcurrentExecutions %v", fn, n)
	}

	// Least privilege: read requests, append audit entries, work the
	// outbox; never write a request.
	gs := tableGrants(t, p, fn)
	for _, c := range []struct {
		action, prefix string
		want           bool
	}{
		{"dynamodb:GetItem", "req#", true}, {"dynamodb:Query", "req#", true}, {"dynamodb:ConditionCheckItem", "req#", true},
		{"dynamodb:PutItem", "req#", false}, {"dynamodb:UpdateItem", "req#", false}, {"dynamodb:DeleteItem", "req#", false},
		{"dynamodb:PutItem", "audit#", true}, {"dynamodb:UpdateItem", "audit#", false}, {"dynamodb:DeleteItem", "audit#", false},
		{"dynamodb:Query", "outbox#", true}, {"dynamodb:UpdateItem", "outbox#", true}, {"dynamodb:DeleteItem", "outbox#", true},
		{"dynamodb:GetItem", "apikey#", false},
	} {
		if got := allowed(gs, c.action, c.prefix); got != c.want {
			t.Errorf("%s may %s on %s* items: %v, want %v", fn, c.action, c.prefix, got, c.want)
		}
	}
	var secret, ses, streamRead bool
	for _, st := range statements(t, p, fn) {
		for _, a := range strs(get(st, "Action")) {
			res := strs(get(st, "Resource"))
			switch {
			case strings.HasPrefix(a, "secretsmanager:"):
				secret = a == "secretsmanager:GetSecretValue" && slices.Equal(res, []string{"{Ref:NotifySecret}"})
				if !secret {
					t.Errorf("%s: %s on %v, want GetSecretValue on the notify secret only", fn, a, res)
				}
			case strings.HasPrefix(a, "sqs:"):
				t.Errorf("%s may %s: it has no queue", fn, a)
			case a == "ses:SendEmail":
				ses = len(res) > 0 && strings.Contains(res[0], ":identity/")
			case a == "dynamodb:GetRecords":
				streamRead = slices.Equal(res, []string{"{GetAtt:Table.StreamArn}"})
			}
		}
	}
	if !secret || !ses || !streamRead {
		t.Errorf("%s: notify secret %v, SES %v, stream %v: want all", fn, secret, ses, streamRead)
	}

	// The document reaches the functions that write deliveries; only the
	// notify function gets the secret of its references' values.
	for _, f := range []string{"McpFunction", "SubmitFunction", fn} {
		if got := env(p, f)["ELICITATION_NOTIFY_CONFIG"]; got != "" && got != "{Ref:NotifyConfig}" {
			t.Errorf("%s ELICITATION_NOTIFY_CONFIG = %q, want !Ref NotifyConfig", f, got)
		} else if _, ok := env(p, f)["ELICITATION_NOTIFY_CONFIG"]; !ok {
			t.Errorf("%s does not get ELICITATION_NOTIFY_CONFIG", f)
		}
	}
	for _, f := range fnNames() {
		if _, ok := env(p, f)["ELICITATION_NOTIFY_SECRET_ARN"]; ok {
			t.Errorf("%s gets the notify secret; only NotifyFunction may", f)
		}
	}
	if got := env(p, fn)["ELICITATION_NOTIFY_SECRET_ARN"]; got != "{Ref:NotifySecret}" {
		t.Errorf("NotifyFunction ELICITATION_NOTIFY_SECRET_ARN = %q, want !Ref NotifySecret", got)
	}
	if v := str(get(p.tree, "Resources", "NotifySecret", "Properties", "SecretString")); v != "{}" {
		t.Errorf("the notify secret's initial value is %q, want {} (the operator puts the values in)", v)
	}
	functionSettings(t, p, fn) // parses as the function reads it

	// An alarm on its errors.
	var errorsAlarm bool
	for _, r := range p.tree["Resources"].(map[string]any) {
		props := get(r, "Properties")
		if str(get(r, "Type")) != "AWS::CloudWatch::Alarm" {
			continue
		}
		dim := str(get(props, "Dimensions", "0", "Value"))
		errorsAlarm = errorsAlarm || dim == "{Ref:NotifyFunction}" && str(get(props, "MetricName")) == "Errors"
	}
	if !errorsAlarm {
		t.Error("no alarm on the notify function's errors")
	}

	// sam build builds it like the others.
	art := filepath.Join(t.TempDir(), "artifacts")
	cmd := exec.Command("make", "-n", "-f", "infra/lambda.mk", "build-"+fn, "ARTIFACTS_DIR="+art)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "./functions/notify") || !strings.Contains(string(out), "-o "+art+"/bootstrap") {
		t.Errorf("make build-%s: %v\n%s", fn, err, out)
	}
}
