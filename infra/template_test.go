// Package infra_test checks template.yaml, the SAM template that deploys the
// service, without AWS or the SAM CLI: goformation parses it (with intrinsic
// handlers that keep references instead of turning them into nulls), its
// bundled SAM JSON schema catches property typos and wrong types, and the
// tests below assert what goformation cannot (enum values, references to
// missing resources, unknown tags, Globals) and what the product needs
// (routes, IAM, timeouts, concurrency, the secret, alarms, outputs).
package infra_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
	"github.com/awslabs/goformation/v7/schema"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
)

const templatePath = "../template.yaml"

// ref is one reference the template makes: Ref, Fn::GetAtt or a ${} in
// Fn::Sub.
type ref struct{ kind, name, attr string }

// parsed is the template three ways: goformation's typed view, the
// intrinsified JSON as a generic tree, and the references it makes.
type parsed struct {
	raw  []byte
	tmpl *cloudformation.Template
	tree map[string]any
	json []byte
	refs []ref
}

var (
	parseOnce sync.Once
	parsedT   *parsed
	parseErr  error
)

// The intrinsic handlers keep references visible: a Ref to a parameter
// gives its default (so typed fields such as ReservedConcurrentExecutions
// parse); any other Ref, GetAtt and Sub gives a marker string.
func parse() (*parsed, error) {
	parseOnce.Do(func() {
		p := &parsed{}
		p.raw, parseErr = os.ReadFile(templatePath)
		if parseErr != nil {
			return
		}
		var mu sync.Mutex
		record := func(r ref) {
			mu.Lock()
			p.refs = append(p.refs, r)
			mu.Unlock()
		}
		params := func(template any) map[string]any {
			m, _ := template.(map[string]any)
			ps, _ := m["Parameters"].(map[string]any)
			return ps
		}
		opts := &intrinsics.ProcessorOptions{IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{
			"Ref": func(_ string, input, template any) any {
				name, _ := input.(string)
				record(ref{kind: "Ref", name: name})
				if p, ok := params(template)[name].(map[string]any); ok {
					if d, ok := p["Default"]; ok {
						if p["Type"] == "Number" {
							if f, err := strconv.ParseFloat(str(d), 64); err == nil {
								return f
							}
						}
						return d
					}
				}
				return "{Ref:" + name + "}"
			},
			"Fn::GetAtt": func(_ string, input, _ any) any {
				var parts []string
				switch v := input.(type) {
				case string:
					parts = strings.SplitN(v, ".", 2)
				case []any:
					for _, x := range v {
						s, _ := x.(string)
						parts = append(parts, s)
					}
				}
				if len(parts) != 2 {
					record(ref{kind: "GetAtt", name: fmt.Sprint(input)})
					return "{GetAtt:?}"
				}
				record(ref{kind: "GetAtt", name: parts[0], attr: parts[1]})
				return "{GetAtt:" + parts[0] + "." + parts[1] + "}"
			},
			"Fn::Sub": func(_ string, input, _ any) any {
				s, _ := input.(string)
				if l, ok := input.([]any); ok && len(l) > 0 {
					s, _ = l[0].(string)
				}
				for _, m := range regexp.MustCompile(`\$\{([^!}][^}]*)\}`).FindAllStringSubmatch(s, -1) {
					name, attr, _ := strings.Cut(m[1], ".")
					record(ref{kind: "Sub", name: name, attr: attr})
				}
				return s
			},
		}}
		p.json, parseErr = intrinsics.ProcessYAML(p.raw, opts)
		if parseErr != nil {
			return
		}
		if parseErr = json.Unmarshal(p.json, &p.tree); parseErr != nil {
			return
		}
		// goformation's types (and its schema) name the HttpApi property
		// AccessLogSetting, as the CloudFormation resource specification
		// does; SAM's translator reads AccessLogSettings. Rename it for
		// goformation's strict unmarshalling (what ParseYAMLWithOptions does
		// after ProcessYAML).
		typed := bytes.ReplaceAll(p.json, []byte(`"AccessLogSettings":`), []byte(`"AccessLogSetting":`))
		p.tmpl = &cloudformation.Template{}
		if parseErr = json.Unmarshal(typed, p.tmpl); parseErr != nil {
			return
		}
		// And the plain goformation entry point must accept the template
		// apart from that one name.
		if _, err := goformation.ParseYAMLWithOptions(bytes.ReplaceAll(p.raw, []byte("AccessLogSettings:"), []byte("AccessLogSetting:")), opts); err != nil {
			parseErr = fmt.Errorf("goformation: %w", err)
			return
		}
		parsedT = p
	})
	return parsedT, parseErr
}

func load(t *testing.T) *parsed {
	t.Helper()
	p, err := parse()
	if err != nil {
		t.Fatalf("parse %s: %v", templatePath, err)
	}
	return p
}

// get walks a generic tree: get(tree, "Resources", "Table", "Properties").
func get(v any, path ...string) any {
	for _, k := range path {
		switch m := v.(type) {
		case map[string]any:
			v = m[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(m) {
				return nil
			}
			v = m[i]
		default:
			return nil
		}
	}
	return v
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func num(t *testing.T, what string, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err == nil {
			return f
		}
	}
	t.Fatalf("%s = %#v, want a number", what, v)
	return 0
}

func strs(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			out = append(out, str(e))
		}
	case string:
		out = []string{x}
	}
	return out
}

var functions = map[string]struct {
	dir    string
	routes []string // METHOD PATH, each an event of the function
}{
	"McpFunction":    {"mcp", []string{"ANY /mcp"}},
	"ReviewFunction": {"review", []string{"GET /review/{id}/{key}", "GET /review/{id}", "GET /review", "GET /.well-known/jwks.json"}},
	"SubmitFunction": {"submit", []string{"POST /review/{id}/{key}", "POST /review/{id}", "POST /review", "POST /slack/interactions"}},
	// With OAuth on (Condition OAuthOn). The consent page's exact path wins
	// over the submit function's POST /review/{id}/{key}: HTTP API prefers
	// a full match of route and method to one with path variables.
	"OAuthFunction": {"oauth", []string{
		"GET /oauth/authorize", "ANY /oauth/token", "ANY /oauth/revoke", "ANY /oauth/register", "ANY /oauth/keys",
		"ANY /.well-known/oauth-authorization-server", "ANY /.well-known/openid-configuration",
		"ANY /.well-known/oauth-protected-resource", "ANY /.well-known/oauth-protected-resource/mcp",
		"GET /review/oauth/consent", "POST /review/oauth/consent",
	}},
}

func fnNames() []string {
	names := make([]string, 0, len(functions))
	for n := range functions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// effective returns a function's property with the Globals merged in as
// SAM merges them (maps merge, the function's value wins); goformation
// does not merge Globals.
func effective(p *parsed, fn string, path ...string) any {
	own := get(p.tree, append([]string{"Resources", fn, "Properties"}, path...)...)
	global := get(p.tree, append([]string{"Globals", "Function"}, path...)...)
	om, ok1 := own.(map[string]any)
	gm, ok2 := global.(map[string]any)
	switch {
	case ok1 && ok2:
		merged := map[string]any{}
		for k, v := range gm {
			merged[k] = v
		}
		for k, v := range om {
			merged[k] = v
		}
		return merged
	case own != nil:
		return own
	}
	return global
}

// notSettings are the template's variables that are not compose settings:
// the Go runtime's, and a value whose change starts fresh execution
// environments (so that they read a rotated secret).
var notSettings = map[string]bool{"GOGC": true, "GOMEMLIMIT": true, "TOKEN_SECRET_GENERATION": true, "AWS_ENDPOINT_URL_DYNAMODB": true, "NOTIFY_SECRET_GENERATION": true}

// functionSettings reads a function's environment as the function does
// (compose.FromEnv, scope Lambda), with each intrinsic replaced by a
// plausible value of what it names.
func functionSettings(t *testing.T, p *parsed, fn string) compose.Settings {
	t.Helper()
	vars := env(p, fn)
	for k, v := range vars {
		vars[k] = strings.ReplaceAll(v, "${RetentionDays}", "7")
		if strings.HasPrefix(v, "{") {
			switch k {
			case compose.Env("public-url"):
				vars[k] = "https://elicit.example.com"
			default:
				vars[k] = "resolved-" + k
			}
		}
	}
	s, err := compose.FromEnv(func(k string) string { return vars[k] }, compose.Lambda)
	if err != nil {
		t.Fatalf("%s's environment does not parse as the function reads it: %v", fn, err)
	}
	return s
}

// Every variable the template sets is a setting the functions read, under
// the local server's name, and parses.
func TestEnvironmentNamesSettings(t *testing.T) {
	p := load(t)
	for _, fn := range []string{"McpFunction", "ReviewFunction", "SubmitFunction", "NotifyFunction", "OAuthFunction"} {
		for k := range env(p, fn) {
			if notSettings[k] {
				continue
			}
			name := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(k, "ELICITATION_"), "_", "-"))
			i := slices.IndexFunc(compose.Table, func(r compose.Setting) bool { return r.Name == name })
			ok := i >= 0
			var row compose.Setting
			if ok {
				row = compose.Table[i]
			}
			if !ok || compose.Env(name) != k || !row.In(compose.Lambda) {
				t.Errorf("%s sets %s, which no Lambda setting of internal/compose reads", fn, k)
			}
		}
		functionSettings(t, p, fn)
	}
	if got := env(p, "McpFunction")[compose.Env("retention")]; got != "${RetentionDays}d" {
		t.Errorf("McpFunction %s = %q, want the RetentionDays parameter in days", compose.Env("retention"), got)
	}
}

func env(p *parsed, fn string) map[string]string {
	out := map[string]string{}
	own, _ := get(p.tree, "Resources", fn, "Properties", "Environment", "Variables").(map[string]any)
	global, _ := get(p.tree, "Globals", "Function", "Environment", "Variables").(map[string]any)
	for _, m := range []map[string]any{global, own} {
		for k, v := range m {
			out[k] = str(v)
		}
	}
	return out
}

func ptr(n int) *int { return &n }

func TestSchema(t *testing.T) {
	p := load(t)
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema.SamSchema), &s); err != nil {
		t.Fatalf("goformation's SAM schema: %v", err)
	}
	// The bundled schema names the HttpApi property AccessLogSetting (as the
	// CloudFormation resource specification does); SAM's translator reads
	// AccessLogSettings. Accept the name SAM reads.
	httpAPI := s.Definitions["AWS::Serverless::HttpApi"].Properties["Properties"]
	if httpAPI == nil || httpAPI.Properties["AccessLogSetting"] == nil {
		t.Fatal("the SAM schema changed shape: no AWS::Serverless::HttpApi AccessLogSetting")
	}
	b, err := json.Marshal(httpAPI.Properties["AccessLogSetting"])
	if err != nil {
		t.Fatal(err)
	}
	var plural jsonschema.Schema
	if err := json.Unmarshal(b, &plural); err != nil {
		t.Fatal(err)
	}
	httpAPI.Properties["AccessLogSettings"] = &plural
	// Its Parameter definition wants MinValue and MaxValue as strings, while
	// CloudFormation (and goformation's own Parameter type) take numbers.
	param := s.Definitions["Parameter"]
	if param == nil || param.Properties["MinValue"] == nil {
		t.Fatal("the SAM schema changed shape: no Parameter MinValue")
	}
	for _, k := range []string{"MinValue", "MaxValue"} {
		param.Properties[k] = &jsonschema.Schema{Types: []string{"number", "string"}}
	}
	// Its DynamoDB event predates two properties SAM documents for it
	// (event filtering and partial batch responses): add them, with their
	// documented shapes.
	ddb := s.Definitions["AWS::Serverless::Function.DynamoDBEvent"]
	if ddb == nil || ddb.Properties["Stream"] == nil {
		t.Fatal("the SAM schema changed shape: no AWS::Serverless::Function.DynamoDBEvent Stream")
	}
	if ddb.Properties["FilterCriteria"] == nil {
		ddb.Properties["FilterCriteria"] = &jsonschema.Schema{Type: "object", Required: []string{"Filters"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{"Filters": {Type: "array", MaxItems: ptr(5), Items: &jsonschema.Schema{
				Type: "object", Required: []string{"Pattern"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
				Properties: map[string]*jsonschema.Schema{"Pattern": {Type: "string", MaxLength: ptr(4096)}},
			}}}}
	}
	if ddb.Properties["FunctionResponseTypes"] == nil {
		ddb.Properties["FunctionResponseTypes"] = &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Enum: []any{"ReportBatchItemFailures"}}}
	}
	s.ID = ""
	resolved, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve the SAM schema: %v", err)
	}
	var doc any
	if err := json.Unmarshal(p.json, &doc); err != nil {
		t.Fatal(err)
	}
	// goformation evaluates the Conditions section's functions to booleans,
	// which the schema (rightly) refuses; TestReferences checks conditions.
	delete(doc.(map[string]any), "Conditions")
	if err := resolved.Validate(doc); err != nil {
		t.Errorf("template.yaml does not satisfy the SAM schema: %v", err)
	}
}

func TestOnlyKnownTags(t *testing.T) {
	p := load(t)
	known := map[string]bool{"Ref": true, "GetAtt": true, "Sub": true, "Not": true, "Equals": true, "If": true, "Join": true, "Select": true, "Split": true, "And": true, "Or": true, "Condition": true, "FindInMap": true, "Base64": true, "GetAZs": true, "ImportValue": true, "Cidr": true}
	for i, line := range strings.Split(string(p.raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, m := range regexp.MustCompile(`(?:^|[\s\[:,-])!([A-Za-z]+)`).FindAllStringSubmatch(line, -1) {
			if !known[m[1]] {
				t.Errorf("template.yaml:%d: unknown tag !%s", i+1, m[1])
			}
		}
	}
}

func TestResourceTypes(t *testing.T) {
	p := load(t)
	want := map[string]string{
		"Api":                    "AWS::Serverless::HttpApi",
		"ApiAccessLogs":          "AWS::Logs::LogGroup",
		"McpFunction":            "AWS::Serverless::Function",
		"McpFunctionLogs":        "AWS::Logs::LogGroup",
		"ReviewFunction":         "AWS::Serverless::Function",
		"ReviewFunctionLogs":     "AWS::Logs::LogGroup",
		"SubmitFunction":         "AWS::Serverless::Function",
		"SubmitFunctionLogs":     "AWS::Logs::LogGroup",
		"Table":                  "AWS::DynamoDB::Table",
		"TokenSecret":            "AWS::SecretsManager::Secret",
		"PushStateSecret":        "AWS::SecretsManager::Secret",
		"AlarmTopic":             "AWS::SNS::Topic",
		"AlarmEmailSubscription": "AWS::SNS::Subscription",
		"McpErrorsAlarm":         "AWS::CloudWatch::Alarm",
		"McpThrottlesAlarm":      "AWS::CloudWatch::Alarm",
		"ReviewErrorsAlarm":      "AWS::CloudWatch::Alarm",
		"ReviewThrottlesAlarm":   "AWS::CloudWatch::Alarm",
		"SubmitErrorsAlarm":      "AWS::CloudWatch::Alarm",
		"SubmitThrottlesAlarm":   "AWS::CloudWatch::Alarm",
		"Api5xxAlarm":            "AWS::CloudWatch::Alarm",
		"Api4xxAlarm":            "AWS::CloudWatch::Alarm",
		"NotifyFunction":         "AWS::Serverless::Function",
		"NotifyFunctionLogs":     "AWS::Logs::LogGroup",
		"NotifySecret":           "AWS::SecretsManager::Secret",
		"NotifyErrorsAlarm":      "AWS::CloudWatch::Alarm",
		"OAuthFunction":          "AWS::Serverless::Function",
		"OAuthFunctionLogs":      "AWS::Logs::LogGroup",
		"OAuthErrorsAlarm":       "AWS::CloudWatch::Alarm",
		"OAuthThrottlesAlarm":    "AWS::CloudWatch::Alarm",
	}
	got := map[string]string{}
	for name, r := range p.tmpl.Resources {
		got[name] = r.AWSCloudFormationType()
	}
	for name, typ := range want {
		if got[name] != typ {
			t.Errorf("resource %s: type %q, want %q", name, got[name], typ)
		}
	}
	for name, typ := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected resource %s (%s): add it to this test", name, typ)
		}
	}
	if tr := get(p.tree, "Transform"); str(tr) != "AWS::Serverless-2016-10-31" {
		t.Errorf("Transform = %v, want AWS::Serverless-2016-10-31", tr)
	}
	fns := p.tmpl.GetAllServerlessFunctionResources()
	if len(fns) != len(functions)+1 {
		t.Errorf("%d serverless functions, want %d (the HTTP functions and NotifyFunction)", len(fns), len(functions)+1)
	}
}

func TestFunctions(t *testing.T) {
	p := load(t)
	for _, fn := range fnNames() {
		t.Run(fn, func(t *testing.T) {
			if _, err := p.tmpl.GetServerlessFunctionWithName(fn); err != nil {
				t.Fatalf("goformation: %v", err)
			}
			if got := str(effective(p, fn, "Runtime")); got != "provided.al2023" {
				t.Errorf("Runtime = %q, want provided.al2023", got)
			}
			if got := strs(effective(p, fn, "Architectures")); !slices.Equal(got, []string{"arm64"}) {
				t.Errorf("Architectures = %q, want [arm64]", got)
			}
			if got := str(effective(p, fn, "Handler")); got != "bootstrap" {
				t.Errorf("Handler = %q, want bootstrap", got)
			}
			if got := str(effective(p, fn, "CodeUri")); got != "." {
				t.Errorf("CodeUri = %q, want . (the module root, where the Makefile is)", got)
			}
			if got := str(get(p.tree, "Resources", fn, "Metadata", "BuildMethod")); got != "makefile" {
				t.Errorf("Metadata.BuildMethod = %q, want makefile", got)
			}
			if e := env(p, fn); !strings.Contains(e["ELICITATION_TABLE"], "{Ref:Table}") {
				t.Errorf("ELICITATION_TABLE = %q, want !Ref Table", e["ELICITATION_TABLE"])
			}
			for k, v := range env(p, fn) {
				if strings.Contains(v, "{Ref:Api}") || strings.Contains(v, "${Api") || strings.Contains(v, "execute-api") {
					t.Errorf("%s = %q refers to the API: a circular dependency (derive the URL from the request)", k, v)
				}
			}
		})
	}
}

// TestBuildTargets runs `make -n build-<LogicalId>` as `sam build` runs it
// (in the module root, with ARTIFACTS_DIR set), through the top-level
// Makefile when it includes infra/lambda.mk, and checks each builds its
// function's package as SAM needs it.
func TestBuildTargets(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is not on PATH: sam build runs the Makefile targets (apt-get install -y make)")
	}
	makefiles := []string{"infra/lambda.mk"}
	if b, err := os.ReadFile("../Makefile"); err == nil && bytes.Contains(b, []byte("include infra/lambda.mk")) {
		makefiles = append(makefiles, "Makefile")
	}
	for _, mf := range makefiles {
		for _, fn := range fnNames() {
			art := filepath.Join(t.TempDir(), "artifacts")
			cmd := exec.Command("make", "-n", "-f", mf, "build-"+fn, "ARTIFACTS_DIR="+art)
			cmd.Dir = ".."
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("make -f %s build-%s: %v\n%s", mf, fn, err, out)
				continue
			}
			s := string(out)
			for _, want := range []string{
				"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "-tags lambda.norpc", "-trimpath",
				"-o " + art + "/bootstrap", "./functions/" + functions[fn].dir,
			} {
				if !strings.Contains(s, want) {
					t.Errorf("make -f %s build-%s does not contain %q:\n%s", mf, fn, want, s)
				}
			}
		}
	}
}

func TestRoutes(t *testing.T) {
	p := load(t)
	routes := map[string]string{}
	for _, fn := range fnNames() {
		events, _ := get(p.tree, "Resources", fn, "Properties", "Events").(map[string]any)
		want := functions[fn].routes
		if len(events) != len(want) {
			t.Errorf("%s has %d events, want %d (%v)", fn, len(events), len(want), want)
		}
		timeout := num(t, fn+" Timeout", get(p.tree, "Resources", fn, "Properties", "Timeout"))
		for name, e := range events {
			if got := str(get(e, "Type")); got != "HttpApi" {
				t.Errorf("%s event %s: Type %q, want HttpApi", fn, name, got)
			}
			props := get(e, "Properties")
			if got := str(get(props, "ApiId")); got != "{Ref:Api}" {
				t.Errorf("%s event %s: ApiId %q, want !Ref Api", fn, name, got)
			}
			if got := str(get(props, "PayloadFormatVersion")); got != "2.0" {
				t.Errorf("%s event %s: PayloadFormatVersion %q, want 2.0", fn, name, got)
			}
			method, path := str(get(props, "Method")), str(get(props, "Path"))
			key := method + " " + path
			if !slices.Contains(want, key) {
				t.Errorf("%s event %s: %s, want one of %v", fn, name, key, want)
			}
			if other, dup := routes[key]; dup {
				t.Errorf("route %s is served by both %s and %s", key, other, fn)
			}
			routes[key] = fn
			it := num(t, fn+" TimeoutInMillis", get(props, "TimeoutInMillis"))
			if it > 30000 || it < timeout*1000 {
				t.Errorf("%s event %s: TimeoutInMillis %v, want between the function's timeout (%v s) and the API's 30 s", fn, name, it, timeout)
			}
		}
	}
}

func TestTimeouts(t *testing.T) {
	p := load(t)
	mcp := num(t, "McpFunction Timeout", get(p.tree, "Resources", "McpFunction", "Properties", "Timeout"))
	if mcp >= 30 {
		t.Errorf("McpFunction Timeout %v s, want under the HTTP API's 30 s", mcp)
	}
	s := functionSettings(t, p, "McpFunction")
	maxWait, margin := s.MaxWait.Seconds(), s.WaitMargin.Seconds()
	if maxWait+margin >= mcp {
		t.Errorf("ELICITATION_MAX_WAIT %v + ELICITATION_WAIT_MARGIN %v >= McpFunction Timeout %v: a wait could outlive its invocation", maxWait, margin, mcp)
	}
	if maxWait > 20 {
		t.Errorf("ELICITATION_MAX_WAIT %v, want at most SPEC §3's default 20 s", maxWait)
	}
	if rm := lambdaconfig.ResponseMargin.Seconds(); maxWait+margin+rm >= mcp {
		t.Errorf("ELICITATION_MAX_WAIT %v + ELICITATION_WAIT_MARGIN %v + the response margin %v >= McpFunction Timeout %v", maxWait, margin, rm, mcp)
	}
	for _, fn := range []string{"ReviewFunction", "SubmitFunction", "OAuthFunction"} {
		to := num(t, fn+" Timeout", get(p.tree, "Resources", fn, "Properties", "Timeout"))
		if to >= 30 || to < 3 {
			t.Errorf("%s Timeout %v s, want 3..29", fn, to)
		}
		// The gateway's integration timeout must leave the function time to
		// end on its own (a timed-out function is the gateway's bare 5xx)...
		for name, e := range get(p.tree, "Resources", fn, "Properties", "Events").(map[string]any) {
			if it := num(t, fn+" TimeoutInMillis", get(get(e, "Properties"), "TimeoutInMillis")) / 1000; to > it-2 {
				t.Errorf("%s Timeout %v s leaves less than 2 s under its route %s's integration timeout %v s", fn, to, name, it)
			}
		}
		// ...and every attempt of a store call must end before the request's
		// context does, leaving the margin to write the page: every
		// attempt's timeout and the longest backoff before each retry.
		pageRetryBudget := lambdaconfig.PageAttempts*lambdaconfig.PageAttemptTimeout + (lambdaconfig.PageAttempts-1)*lambdaconfig.PageMaxBackoff
		if budget := pageRetryBudget.Seconds(); budget > to-lambdaconfig.ResponseMargin.Seconds() {
			t.Errorf("%s: a store call's attempts can take %v s, more than its Timeout %v s minus the response margin %v s", fn, budget, to, lambdaconfig.ResponseMargin.Seconds())
		}
	}
}

func TestReservedConcurrency(t *testing.T) {
	p := load(t)
	total := 0.0
	for _, fn := range fnNames() {
		v := get(p.tree, "Resources", fn, "Properties", "ReservedConcurrentExecutions")
		if v == nil {
			t.Errorf("%s has no ReservedConcurrentExecutions", fn)
			continue
		}
		n := num(t, fn+" ReservedConcurrentExecutions", v)
		if n < 1 {
			t.Errorf("%s ReservedConcurrentExecutions %v, want at least 1", fn, n)
		}
		total += n
	}
	// Lambda keeps 100 unreserved executions; the default account quota is 1000.
	if total+100 > 1000 {
		t.Errorf("the reservations (%v) do not fit the default account quota of 1000 with 100 unreserved", total)
	}
	if get(p.tree, "Resources", "McpFunction", "Properties", "ReservedConcurrentExecutions") == nil {
		t.Error("the MCP function must be capped, or waiting agents can take every execution")
	}
}

func TestTable(t *testing.T) {
	p := load(t)
	tab := get(p.tree, "Resources", "Table")
	props := get(tab, "Properties")
	if got := str(get(props, "BillingMode")); got != "PAY_PER_REQUEST" {
		t.Errorf("BillingMode %q, want PAY_PER_REQUEST (on demand)", got)
	}
	attrs := map[string]string{}
	for _, a := range get(props, "AttributeDefinitions").([]any) {
		attrs[str(get(a, "AttributeName"))] = str(get(a, "AttributeType"))
	}
	if want := map[string]string{"pk": "S", "sk": "S", "gpk": "S", "retainUntil": "N", "ipk": "S", "expiresAt": "N", "opk": "S", "createdAt": "N"}; fmt.Sprint(attrs) != fmt.Sprint(want) {
		t.Errorf("AttributeDefinitions %v, want %v", attrs, want)
	}
	keys := func(v any) string {
		var out []string
		for _, k := range v.([]any) {
			out = append(out, str(get(k, "AttributeName"))+" "+str(get(k, "KeyType")))
		}
		return strings.Join(out, ", ")
	}
	if got := keys(get(props, "KeySchema")); got != "pk HASH, sk RANGE" {
		t.Errorf("KeySchema %s, want pk HASH, sk RANGE", got)
	}
	gsis, _ := get(props, "GlobalSecondaryIndexes").([]any)
	if len(gsis) != 3 || str(get(gsis[2], "IndexName")) != "owned" || keys(get(gsis[2], "KeySchema")) != "opk HASH, createdAt RANGE" ||
		str(get(gsis[2], "Projection", "ProjectionType")) != "ALL" {
		t.Errorf("GlobalSecondaryIndexes %v, want the owners' index (opk, createdAt, all attributes) third", gsis)
	}
	if len(gsis) < 2 || str(get(gsis[1], "IndexName")) != "pending" || keys(get(gsis[1], "KeySchema")) != "ipk HASH, expiresAt RANGE" ||
		str(get(gsis[1], "Projection", "ProjectionType")) != "INCLUDE" {
		t.Errorf("GlobalSecondaryIndexes %v, want the inbox's pending index (ipk, expiresAt) second", gsis)
	}
	if len(gsis) < 1 || str(get(gsis[0], "IndexName")) != "retain" || keys(get(gsis[0], "KeySchema")) != "gpk HASH, retainUntil RANGE" ||
		str(get(gsis[0], "Projection", "ProjectionType")) != "KEYS_ONLY" {
		t.Errorf("GlobalSecondaryIndexes %v, want the keys-only retain index (gpk, retainUntil)", gsis)
	}
	if get(props, "TimeToLiveSpecification", "Enabled") != true || str(get(props, "TimeToLiveSpecification", "AttributeName")) != "ttl" {
		t.Errorf("TimeToLiveSpecification %v, want enabled on ttl", get(props, "TimeToLiveSpecification"))
	}
	if get(props, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled") != true {
		t.Errorf("point-in-time recovery is not enabled")
	}
	if str(get(tab, "DeletionPolicy")) != "Retain" || str(get(tab, "UpdateReplacePolicy")) != "Retain" {
		t.Errorf("the table's DeletionPolicy/UpdateReplacePolicy should be Retain: it holds the API keys and the audit trails")
	}
	if get(props, "TableName") != nil {
		t.Errorf("the table has a fixed name: two stacks in one account would collide")
	}
}

// grant is one Allow statement on the table, reduced to what matters.
type grant struct {
	actions []string
	leading []string // dynamodb:LeadingKeys patterns; nil means any key
}

func statements(t *testing.T, p *parsed, fn string) []any {
	t.Helper()
	var out []any
	for _, pol := range get(p.tree, "Resources", fn, "Properties", "Policies").([]any) {
		st, ok := get(pol, "Statement").([]any)
		if !ok {
			t.Fatalf("%s: a policy that is not an inline policy document: %v (use statements, so that this test can read them)", fn, pol)
		}
		out = append(out, st...)
	}
	return out
}

func tableGrants(t *testing.T, p *parsed, fn string) []grant {
	t.Helper()
	var gs []grant
	for _, st := range statements(t, p, fn) {
		if str(get(st, "Effect")) != "Allow" {
			t.Errorf("%s: a statement that is not Allow: %v", fn, st)
			continue
		}
		actions := strs(get(st, "Action"))
		for _, a := range actions {
			if strings.Contains(a, "*") {
				t.Errorf("%s: wildcard action %q", fn, a)
			}
		}
		res := strs(get(st, "Resource"))
		for _, r := range res {
			if r == "*" {
				t.Errorf("%s: statement on every resource: %v", fn, st)
			}
		}
		if !strings.HasPrefix(actions[0], "dynamodb:") || slices.Equal(res, []string{"{GetAtt:Table.StreamArn}"}) {
			continue // not items of the table (the stream: TestNotifyFunction)
		}
		if len(res) == 1 && slices.ContainsFunc(indexGrants[fn], func(index string) bool { return res[0] == "${Table.Arn}/index/"+index }) {
			// The index statements a function may have: TestIndexGrants.
			continue
		}
		if !slices.Equal(res, []string{"{GetAtt:Table.Arn}"}) {
			t.Errorf("%s: DynamoDB statement on %q, want only the table (no index, no other table)", fn, res)
		}
		cond := get(st, "Condition")
		if get(cond, "ForAnyValue:StringLike") != nil {
			t.Errorf("%s: ForAnyValue on LeadingKeys lets a request name any key beside an allowed one; use ForAllValues", fn)
		}
		g := grant{actions: actions, leading: strs(get(cond, "ForAllValues:StringLike", "dynamodb:LeadingKeys"))}
		if len(g.leading) == 0 {
			t.Errorf("%s: DynamoDB statement without a dynamodb:LeadingKeys condition: %v", fn, st)
		}
		gs = append(gs, g)
	}
	return gs
}

// allowed reports whether fn's grants allow action on an item whose
// partition key starts with prefix.
func allowed(gs []grant, action, prefix string) bool {
	for _, g := range gs {
		if !slices.Contains(g.actions, action) {
			continue
		}
		for _, l := range g.leading {
			if strings.HasSuffix(l, "*") && strings.HasPrefix(prefix, strings.TrimSuffix(l, "*")) {
				return true
			}
		}
	}
	return false
}

// indexGrants names the indexes each function may query, one statement
// each: the review function the reviewer's inbox and the keys-only index
// of kept requests (the Insights page), the submit function the pending
// index (a batch's "every request that matches"), the MCP function the
// owners' index (tasks/list), the notify function the pending index (the
// metrics' expiry sweep).
var indexGrants = map[string][]string{"ReviewFunction": {"pending", "retain"}, "SubmitFunction": {"pending"}, "McpFunction": {"owned"}, "NotifyFunction": {"pending"}}

// indexLeading is the LeadingKeys each index's grant is held to: the
// pending index's one partition, the owners' digests.
var indexLeading = map[string][]string{"pending": {"pending"}, "owned": {"owner#*"}, "retain": {"retain#*"}}

// TestIndexGrants: the review function may Query the pending index, in
// its one partition, the MCP function the owners' index, and nothing else
// on them; no other function has an index statement (tableGrants refuses
// any other resource).
func TestIndexGrants(t *testing.T) {
	p := load(t)
	for _, fn := range fnNames() {
		n := 0
		for _, st := range statements(t, p, fn) {
			res := strs(get(st, "Resource"))
			if len(res) != 1 || !strings.Contains(res[0], "/index/") {
				continue
			}
			n++
			index := strings.TrimPrefix(res[0], "${Table.Arn}/index/")
			if !slices.Contains(indexGrants[fn], index) {
				t.Errorf("%s: a statement on %s, want none but on %v", fn, res[0], indexGrants[fn])
			}
			if got := strs(get(st, "Action")); !slices.Equal(got, []string{"dynamodb:Query"}) {
				t.Errorf("%s: %v on %s, want dynamodb:Query only", fn, got, res[0])
			}
			if got, want := strs(get(st, "Condition", "ForAllValues:StringLike", "dynamodb:LeadingKeys")), indexLeading[index]; !slices.Equal(got, want) {
				t.Errorf("%s: index LeadingKeys %v, want %v", fn, got, want)
			}
		}
		if want := len(indexGrants[fn]); n != want {
			t.Errorf("%s has %d index statements, want %d", fn, n, want)
		}
	}
	// The index the grant names is the table's.
	if got := str(get(p.tree, "Resources", "Table", "Properties", "GlobalSecondaryIndexes", "1", "IndexName")); got != "pending" {
		t.Errorf("the table's second index is %q, want pending", got)
	}
	if got := str(get(p.tree, "Resources", "Table", "Properties", "GlobalSecondaryIndexes", "2", "IndexName")); got != "owned" {
		t.Errorf("the table's third index is %q, want owned", got)
	}
}

func TestPolicies(t *testing.T) {
	p := load(t)
	type access struct {
		action, prefix string
		want           bool
	}
	reads := []string{"dynamodb:GetItem", "dynamodb:Query"}
	writes := []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
	cases := map[string][]access{}
	add := func(fn string, actions []string, prefix string, want bool) {
		for _, a := range actions {
			cases[fn] = append(cases[fn], access{a, prefix, want})
		}
	}
	// The MCP function creates, reads, cancels and consumes requests, and
	// looks up API keys; it never deletes and never writes keys.
	add("McpFunction", reads, "req#", true)
	add("McpFunction", writes[:2], "req#", true)
	add("McpFunction", writes[:2], "audit#", true)
	add("McpFunction", []string{"dynamodb:GetItem"}, "apikey#", true)
	add("McpFunction", writes, "apikey#", false)
	add("McpFunction", []string{"dynamodb:Query"}, "apikeys", false)
	add("McpFunction", writes[2:], "req#", false)
	// The review function reads requests and appends to audit trails: it
	// cannot write a request's state or answer, so it cannot decide.
	add("ReviewFunction", reads, "req#", true)
	add("ReviewFunction", writes[:2], "audit#", true)
	add("ReviewFunction", reads, "audit#", true) // the audit chain's head
	add("ReviewFunction", writes, "req#", false)
	add("ReviewFunction", reads, "apikey#", false)
	add("ReviewFunction", writes[2:], "audit#", false)
	// The submit function decides: state, answer, audit.
	add("SubmitFunction", reads, "req#", true)
	add("SubmitFunction", writes[:2], "req#", true)
	add("SubmitFunction", writes[:2], "audit#", true)
	add("SubmitFunction", reads, "apikey#", false)
	add("SubmitFunction", writes[2:], "req#", false)
	// Both write notices to the outbox with the events they tell, and
	// withdraw the expiry notices a decision or a cancel makes moot.
	for _, fn := range []string{"McpFunction", "SubmitFunction"} {
		add(fn, []string{"dynamodb:PutItem", "dynamodb:DeleteItem"}, "outbox#", true)
		add(fn, []string{"dynamodb:UpdateItem", "dynamodb:Query"}, "outbox#", false)
	}
	add("ReviewFunction", append(reads, writes...), "outbox#", false)
	// Each principal's pending count: the MCP function counts creates (and
	// cancels) and recounts, the submit function counts decisions; the
	// review function never touches it.
	add("McpFunction", []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}, "owner#", true)
	add("McpFunction", []string{"dynamodb:PutItem", "dynamodb:DeleteItem"}, "owner#", false)
	add("SubmitFunction", []string{"dynamodb:UpdateItem"}, "owner#", true)
	add("SubmitFunction", []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"}, "owner#", false)
	add("ReviewFunction", append(reads, writes...), "owner#", false)
	// The grants (OAuth): the OAuth function alone keeps them (a delete is
	// a conditional update leaving a tombstone); the MCP function reads a
	// token's family, nothing else of them; the others nothing.
	add("OAuthFunction", []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}, "grant#", true)
	add("OAuthFunction", []string{"dynamodb:DeleteItem", "dynamodb:Query"}, "grant#", false)
	for _, prefix := range []string{"req#", "audit#", "outbox#", "owner#", "apikey#"} {
		add("OAuthFunction", append(reads, writes...), prefix, false)
	}
	add("McpFunction", []string{"dynamodb:GetItem"}, "grant#family#", true)
	add("McpFunction", append([]string{"dynamodb:Query"}, writes...), "grant#family#", false)
	for _, kind := range []string{"grant#client#", "grant#login#", "grant#code#"} {
		add("McpFunction", append(reads, writes...), kind, false)
	}
	for _, fn := range []string{"ReviewFunction", "SubmitFunction"} {
		add(fn, append(reads, writes...), "grant#", false)
	}
	for _, fn := range fnNames() {
		gs := tableGrants(t, p, fn)
		for _, c := range cases[fn] {
			if got := allowed(gs, c.action, c.prefix); got != c.want {
				t.Errorf("%s may %s on %s* items: %v, want %v", fn, c.action, c.prefix, got, c.want)
			}
		}
		for _, g := range gs {
			for _, a := range g.actions {
				switch {
				case a == "dynamodb:GetItem", a == "dynamodb:Query", a == "dynamodb:PutItem", a == "dynamodb:UpdateItem":
				case a == "dynamodb:DeleteItem" && slices.Equal(g.leading, []string{"outbox#*"}):
				default:
					t.Errorf("%s is granted %s on %v, which no function needs", fn, a, g.leading)
				}
			}
		}
	}
	// Each function reads only its own secret: the review and submit
	// functions the page-token keys (and the review function reviewer
	// sign-in's client secret, the submit function the Slack app's), the MCP
	// function the push-state keys and the page-token keys (the receipts'
	// signing keys derive from them).
	ownSecret := map[string]string{"McpFunction": "{Ref:PushStateSecret}", "ReviewFunction": "{Ref:TokenSecret}", "SubmitFunction": "{Ref:TokenSecret}", "OAuthFunction": "{Ref:TokenSecret}"}
	raw, _ := os.ReadFile(filepath.Join("..", "template.yaml"))
	for _, fn := range fnNames() {
		var secret bool
		for _, st := range statements(t, p, fn) {
			for _, a := range strs(get(st, "Action")) {
				if strings.HasPrefix(a, "secretsmanager:") && fn == "SubmitFunction" && get(st, "Sid") == "SlackSecret" {
					// The Slack app's secret, where the stack has one (the token secret
					// again otherwise); goformation reads !If as null: check the text.
					if a != "secretsmanager:GetSecretValue" || !strings.Contains(string(raw), "Resource: !If [HasSlackSecret, !Ref SlackSecretArn, !Ref TokenSecret]") {
						t.Errorf("%s: %s, want GetSecretValue on the Slack secret if the stack has one, else the token secret", fn, a)
					}
					continue
				}
				if strings.HasPrefix(a, "secretsmanager:") && fn == "McpFunction" && get(st, "Sid") == "TokenSecret" {
					// The keyring receipts are signed (and OAuth tokens verified) with.
					if a != "secretsmanager:GetSecretValue" || !slices.Equal(strs(get(st, "Resource")), []string{"{Ref:TokenSecret}"}) {
						t.Errorf("%s: %s on %v, want only GetSecretValue on the token secret", fn, a, get(st, "Resource"))
					}
					continue
				}
				if strings.HasPrefix(a, "secretsmanager:") {
					if (fn == "ReviewFunction" || fn == "OAuthFunction") && get(st, "Sid") == "OidcClientSecret" {
						// Reviewer sign-in's client secret, where the stack has one
						// (the token secret again otherwise).
						// (goformation reads !If as null: check the template's text.)
						raw, _ := os.ReadFile(filepath.Join("..", "template.yaml"))
						if a != "secretsmanager:GetSecretValue" || !strings.Contains(string(raw), "Resource: !If [HasOidcClientSecret, !Ref OidcClientSecretArn, !Ref TokenSecret]") {
							t.Errorf("%s: %s, want GetSecretValue on the OIDC client secret if the stack has one, else the token secret", fn, a)
						}
						continue
					}
					if a != "secretsmanager:GetSecretValue" || !slices.Equal(strs(get(st, "Resource")), []string{ownSecret[fn]}) {
						t.Errorf("%s: %s on %v, want only GetSecretValue on %s", fn, a, get(st, "Resource"), ownSecret[fn])
					}
					secret = true
				}
			}
		}
		if want := ownSecret[fn] != ""; secret != want {
			t.Errorf("%s may read a secret: %v, want %v", fn, secret, want)
		}
	}
}

func TestSecret(t *testing.T) {
	p := load(t)
	props := get(p.tree, "Resources", "TokenSecret", "Properties")
	if get(props, "SecretString") != nil {
		t.Fatal("the token secret's value is in the template: generate it in the account (GenerateSecretString)")
	}
	gen := get(props, "GenerateSecretString")
	n := num(t, "PasswordLength", get(gen, "PasswordLength"))
	// The functions read a bare secret as base64 (pagetoken keyring text
	// "k0:<secret>"): alphanumerics only, a multiple of 4 long, at least 32
	// bytes decoded.
	if int(n)%4 != 0 || n*3/4 < 32 || get(gen, "ExcludePunctuation") != true {
		t.Errorf("GenerateSecretString %v: want ExcludePunctuation and a length that is a multiple of 4, decoding to >= 32 bytes", gen)
	}
	// The MCP function signs receipts with keys derived from the keyring
	// (and, with OAuth on, verifies tokens with them).
	for _, fn := range []string{"McpFunction", "ReviewFunction", "SubmitFunction", "OAuthFunction"} {
		if got := env(p, fn)["ELICITATION_TOKEN_SECRET_ARN"]; got != "{Ref:TokenSecret}" {
			t.Errorf("%s ELICITATION_TOKEN_SECRET_ARN = %q, want !Ref TokenSecret", fn, got)
		}
	}
	if got := env(p, "McpFunction")["ELICITATION_STATE_SECRET_ARN"]; got != "{Ref:PushStateSecret}" {
		t.Errorf("McpFunction ELICITATION_STATE_SECRET_ARN = %q, want !Ref PushStateSecret", got)
	}
	for _, fn := range []string{"ReviewFunction", "SubmitFunction"} {
		if _, ok := env(p, fn)["ELICITATION_STATE_SECRET_ARN"]; ok {
			t.Errorf("%s sees the push-state secret, which only the MCP function uses", fn)
		}
	}
}

func TestThrottlingAlarmsOutputs(t *testing.T) {
	p := load(t)
	rs := get(p.tree, "Resources", "Api", "Properties", "DefaultRouteSettings")
	if num(t, "ThrottlingRateLimit", get(rs, "ThrottlingRateLimit")) <= 0 || num(t, "ThrottlingBurstLimit", get(rs, "ThrottlingBurstLimit")) <= 0 {
		t.Errorf("the HTTP API has no throttling: %v", rs)
	}
	if f := str(get(p.tree, "Resources", "Api", "Properties", "AccessLogSettings", "Format")); strings.Contains(f, "$context.path") || strings.Contains(f, "rawPath") {
		t.Errorf("the access log records paths, which carry review keys: %s", f)
	}
	alarms := map[string]bool{}
	for name, r := range p.tree["Resources"].(map[string]any) {
		if str(get(r, "Type")) != "AWS::CloudWatch::Alarm" {
			continue
		}
		props := get(r, "Properties")
		if !slices.Equal(strs(get(props, "AlarmActions")), []string{"{Ref:AlarmTopic}"}) {
			t.Errorf("alarm %s notifies %v, want the alarm topic", name, get(props, "AlarmActions"))
		}
		if str(get(props, "Namespace")) == "AWS/Lambda" {
			alarms[str(get(props, "Dimensions", "0", "Value"))+" "+str(get(props, "MetricName"))] = true
		}
	}
	for _, fn := range fnNames() {
		for _, m := range []string{"Errors", "Throttles"} {
			if !alarms["{Ref:"+fn+"} "+m] {
				t.Errorf("no alarm on %s %s", fn, m)
			}
		}
	}
	outs := p.tree["Outputs"].(map[string]any)
	if str(get(outs, "ConnectorUrl", "Condition")) != "OAuthOn" || !strings.Contains(string(p.raw), `Value: !If [HasPublicBaseUrl, !Sub "${PublicBaseUrl}/mcp", !Sub "https://${Api}.execute-api.${AWS::Region}.${AWS::URLSuffix}/mcp"]`) {
		t.Errorf("output ConnectorUrl = %v, want the MCP URL (under PublicBaseUrl if set) with OAuth on", get(outs, "ConnectorUrl"))
	}
	for name, suffix := range map[string]string{"McpUrl": "/mcp", "ReviewBaseUrl": "/review/"} {
		v := str(get(outs, name, "Value"))
		if !strings.HasPrefix(v, "https://${Api}.execute-api.") || !strings.HasSuffix(v, suffix) {
			t.Errorf("output %s = %q, want https://${Api}.execute-api....%s", name, v, suffix)
		}
	}
}

// TestReferences asserts what goformation does not: every Ref, GetAtt, Sub
// variable, Condition and DependsOn names something that exists.
func TestReferences(t *testing.T) {
	p := load(t)
	if len(p.refs) < 20 {
		t.Fatalf("only %d references recorded: the intrinsic handlers did not run", len(p.refs))
	}
	resources := p.tree["Resources"].(map[string]any)
	params, _ := p.tree["Parameters"].(map[string]any)
	conds, _ := p.tree["Conditions"].(map[string]any)
	pseudo := map[string]bool{"AWS::Region": true, "AWS::AccountId": true, "AWS::Partition": true, "AWS::URLSuffix": true, "AWS::StackName": true, "AWS::StackId": true, "AWS::NoValue": true, "AWS::NotificationARNs": true}
	used := map[string]bool{}
	seen := map[ref]bool{}
	for _, r := range p.refs {
		if seen[r] {
			continue
		}
		seen[r] = true
		used[r.name] = true
		_, isRes := resources[r.name]
		_, isParam := params[r.name]
		switch {
		case r.kind == "GetAtt" && !isRes:
			t.Errorf("!GetAtt %s.%s: no resource %s", r.name, r.attr, r.name)
		case r.kind == "Sub" && r.attr != "" && !isRes:
			t.Errorf("${%s.%s}: no resource %s", r.name, r.attr, r.name)
		case !isRes && !isParam && !pseudo[r.name]:
			t.Errorf("%s %s: no such resource, parameter or pseudo parameter", r.kind, r.name)
		}
	}
	for name, r := range resources {
		if c := str(get(r, "Condition")); c != "" {
			if _, ok := conds[c]; !ok {
				t.Errorf("resource %s: no condition %s", name, c)
			}
		}
		for _, d := range strs(get(r, "DependsOn")) {
			if _, ok := resources[d]; !ok {
				t.Errorf("resource %s depends on missing %s", name, d)
			}
		}
	}
	for name := range params {
		if !used[name] {
			t.Errorf("parameter %s is never used", name)
		}
	}
}

// TestLocalInvokeRecipe: the env.json of docs/deploy.md's `sam local invoke
// --env-vars` recipe sets only variables template.yaml declares for each
// function (SAM silently drops the others), and names only the template's
// functions.
func TestLocalInvokeRecipe(t *testing.T) {
	p := load(t)
	doc, err := os.ReadFile(filepath.Join("..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)--env-vars env.json.*?```json\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/deploy.md has no json block after its --env-vars env.json recipe")
	}
	var recipe map[string]map[string]string
	if err := json.Unmarshal(m[1], &recipe); err != nil {
		t.Fatalf("the env.json block: %v", err)
	}
	for _, fn := range fnNames() {
		if _, ok := recipe[fn]; !ok {
			t.Errorf("env.json gives nothing for %s", fn)
		}
	}
	for fn, vars := range recipe {
		if _, ok := get(p.tree, "Resources", fn).(map[string]any); !ok {
			t.Errorf("env.json names %s, which template.yaml does not define", fn)
			continue
		}
		declared := env(p, fn)
		for k := range vars {
			if _, ok := declared[k]; !ok {
				t.Errorf("env.json sets %s for %s, which template.yaml does not declare for it (SAM would drop it)", k, fn)
			}
		}
	}
	for _, cmd := range regexp.MustCompile(`sam local invoke (\w+)`).FindAllSubmatch(doc, -1) {
		if _, ok := get(p.tree, "Resources", string(cmd[1])).(map[string]any); !ok {
			t.Errorf("docs/deploy.md invokes %s, which template.yaml does not define", cmd[1])
		}
	}
}
