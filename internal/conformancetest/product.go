package conformancetest

import "fmt"

// Product is what the product's endpoint (local default, --stateless,
// the Lambda function) knowingly does not pass of revision's requirement
// set, with why: the scenarios that drive the suite's own fixtures, which
// the product does not have (Fixture runs the Tasks and input-required
// ones on the fixture server), and the checks that need them. Each
// endpoint adds its own (sessions, SSE polling).
func Product(revision string) Known {
	k := Known{
		"completion-complete":           "the product declares no completions: neither its prompt nor any resource template takes an argument to complete",
		"json-schema-2020-12":           tool("json_schema_2020_12_tool"),
		"prompts-get-simple":            prompt("test_simple_prompt"),
		"prompts-get-with-args":         prompt("test_prompt_with_arguments"),
		"prompts-get-embedded-resource": prompt("test_prompt_with_embedded_resource"),
		"prompts-get-with-image":        prompt("test_prompt_with_image"),
		"resources-read-text":           resource("test://static-text"),
		"resources-read-binary":         resource("test://static-binary"),
		"resources-templates-read":      resource("test://template/{id}/data"),
		"tools-call-simple-text":        tool("test_simple_text"),
		"tools-call-image":              tool("test_image_content"),
		"tools-call-audio":              tool("test_audio_content"),
		"tools-call-embedded-resource":  tool("test_embedded_resource"),
		"tools-call-mixed-content":      tool("test_multiple_content_types"),
		"tools-call-error":              tool("test_error_handling"),
		"tools-call-with-progress":      tool("test_tool_with_progress"),
	}
	if revision == Rev20251125 {
		return k.With(Known{
			"resources-subscribe":          "the product declares no resources.subscribe: its resources never change",
			"resources-unsubscribe":        "the product declares no resources.subscribe: its resources never change",
			"tools-call-with-logging":      tool("test_tool_with_logging"),
			"tools-call-sampling":          tool("test_sampling"),
			"tools-call-elicitation":       tool("test_elicitation"),
			"elicitation-sep1034-defaults": tool("test_elicitation_sep1034_defaults"),
			"elicitation-sep1330-enums":    tool("test_elicitation_sep1330_enums"),
		})
	}
	k = k.With(Known{
		"server-stateless/sep-2575-server-rejects-undeclared-capability":              diagnostic("test_missing_capability"),
		"server-stateless/sep-2575-missing-capability-http-400":                       diagnostic("test_missing_capability"),
		"server-stateless/sep-2575-http-server-no-independent-requests-on-stream":     diagnostic("test_streaming_elicitation"),
		"server-stateless/sep-2575-server-no-log-without-loglevel":                    diagnostic("test_logging_tool"),
		"server-stateless/sep-2575-server-sends-prompts-list-changed-on-subscription": "skipped by the suite: the product declares no listChanged (its tools and prompts never change)",
		"server-stateless/sep-2575-server-sends-tools-list-changed-on-subscription":   "skipped by the suite: the product declares no listChanged (its tools and prompts never change)",
		"caching/sep-2549-resources-read-caching-hints":                               "skipped by the suite: resources/list is empty without --mcp-app, so there is no resources/read to check",
		"http-custom-header-server-validation":                                        "no product tool declares an x-mcp-header annotation (none takes an argument a gateway routes on)",
	})
	for _, sc := range InputRequiredScenarios {
		k[sc] = "calls the suite's input-required fixture tools (test_input_required_result_*), which the product does not have; the fixture server runs it (TestConformanceFixture)"
	}
	for _, sc := range TasksScenarios {
		k[sc] = "calls the suite's Tasks fixture tools (greet, slow_compute, failing_job, ...), which the product does not have; the fixture server runs it (TestConformanceFixture)"
	}
	k["tasks-status-notifications"] = StatusSkipped
	return k
}

// InputRequiredScenarios are the suite's input-required-result-* scenarios
// that call its input-required fixtures (test_input_required_result_*),
// which the fixture server has (its inputs_test.go).
var InputRequiredScenarios = []string{
	"input-required-result-basic-elicitation", "input-required-result-basic-sampling",
	"input-required-result-basic-list-roots", "input-required-result-request-state",
	"input-required-result-multiple-input-requests", "input-required-result-multi-round",
	"input-required-result-missing-input-response", "input-required-result-non-tool-request",
	"input-required-result-result-type", "input-required-result-tampered-state",
	"input-required-result-capability-check", "input-required-result-ignore-extra-params",
}

// TasksScenarios are the suite's scenarios for the io.modelcontextprotocol/tasks
// extension (2026-07-28, run but not scored: an extension is optional).
var TasksScenarios = []string{
	"tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields", "tasks-request-state-removal",
	"tasks-mrtr-input", "tasks-request-headers", "tasks-dispatch-and-envelope", "tasks-status-notifications",
	"tasks-required-task-error", "tasks-mrtr-composition",
}

// StatusSkipped: the suite skips tasks-status-notifications on every server.
const StatusSkipped = "skipped by the suite itself on every server: its harness awaits a rewrite for the subscriptions/listen channel (the product's notifications/tasks are TestExtTaskNotifications')"

func tool(name string) string {
	return fmt.Sprintf("calls the suite's fixture tool %s, which the product does not have", name)
}

func prompt(name string) string {
	return fmt.Sprintf("gets the suite's fixture prompt %s, which the product does not have", name)
}

func resource(uri string) string {
	return fmt.Sprintf("reads the suite's fixture resource %s; the product serves a resource only with --mcp-app (its ui:// page)", uri)
}

func diagnostic(name string) string {
	return fmt.Sprintf("needs the suite's diagnostic tool %s, which the product does not have", name)
}
