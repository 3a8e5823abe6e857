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
// (keys only), the function it triggers with partial batch responses,
// retries, bisection and a dead-letter queue, the schedule of the expiry
// sweep, the function's least-privilege policy, and who sees the
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
	if !slices.Equal(strs(get(stream, "FunctionResponseTypes")), []string{"ReportBatchItemFailures"}) {
		t.Errorf("FunctionResponseTypes %v, want [ReportBatchItemFailures] (partial batch responses)", get(stream, "FunctionResponseTypes"))
	}
	if get(stream, "BisectBatchOnFunctionError") != true {
		t.Error("BisectBatchOnFunctionError is not set")
	}
	if n := num(t, "MaximumRetryAttempts", get(stream, "MaximumRetryAttempts")); n < 1 || n > 10 {
		t.Errorf("MaximumRetryAttempts %v, want 1..10: retried, then recorded in the dead-letter queue", n)
	}
	if got := str(get(stream, "DestinationConfig", "OnFailure", "Destination")); got != "{GetAtt:NotifyDeadLetterQueue.Arn}" {
		t.Errorf("on-failure destination %q, want the dead-letter queue", got)
	}
	if got := str(get(stream, "DestinationConfig", "OnFailure", "Type")); got != "SQS" {
		t.Errorf("on-failure destination type %q, want SQS", got)
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
	dlq := get(p.tree, "Resources", "NotifyDeadLetterQueue", "Properties")
	if n := num(t, "MessageRetentionPeriod", get(dlq, "MessageRetentionPeriod")); n < 7*24*3600 {
		t.Errorf("the dead-letter queue keeps messages %v s, want at least a week", n)
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
	var secret, sqs, ses, streamRead bool
	for _, st := range statements(t, p, fn) {
		for _, a := range strs(get(st, "Action")) {
			res := strs(get(st, "Resource"))
			switch {
			case strings.HasPrefix(a, "secretsmanager:"):
				secret = a == "secretsmanager:GetSecretValue" && slices.Equal(res, []string{"{Ref:NotifySecret}"})
				if !secret {
					t.Errorf("%s: %s on %v, want GetSecretValue on the notify secret only", fn, a, res)
				}
			case a == "sqs:SendMessage":
				sqs = slices.Equal(res, []string{"{GetAtt:NotifyDeadLetterQueue.Arn}"})
			case a == "ses:SendEmail":
				ses = len(res) > 0 && strings.Contains(res[0], ":identity/")
			case a == "dynamodb:GetRecords":
				streamRead = slices.Equal(res, []string{"{GetAtt:Table.StreamArn}"})
			}
		}
	}
	if !secret || !sqs || !ses || !streamRead {
		t.Errorf("%s: notify secret %v, dead-letter queue %v, SES %v, stream %v: want all", fn, secret, sqs, ses, streamRead)
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

	// Alarms on its errors and on dead letters.
	var errorsAlarm, dlqAlarm bool
	for _, r := range p.tree["Resources"].(map[string]any) {
		props := get(r, "Properties")
		if str(get(r, "Type")) != "AWS::CloudWatch::Alarm" {
			continue
		}
		dim := str(get(props, "Dimensions", "0", "Value"))
		errorsAlarm = errorsAlarm || dim == "{Ref:NotifyFunction}" && str(get(props, "MetricName")) == "Errors"
		dlqAlarm = dlqAlarm || dim == "{GetAtt:NotifyDeadLetterQueue.QueueName}" && str(get(props, "MetricName")) == "ApproximateNumberOfMessagesVisible"
	}
	if !errorsAlarm || !dlqAlarm {
		t.Errorf("alarms: notify errors %v, dead letters %v; want both", errorsAlarm, dlqAlarm)
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
