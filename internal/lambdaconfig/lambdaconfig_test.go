package lambdaconfig_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
)

func getenv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

var base = map[string]string{
	"ELICITATION_TABLE": "elicitation", "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s",
}

func with(kv ...string) map[string]string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	s, e, err := lambdaconfig.FromEnv(getenv(base))
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxWait != 20*time.Second || s.WaitMargin != 2*time.Second || s.Retention != 7*24*time.Hour || s.APIKeyCacheTTL != 30*time.Second || e.Region != "eu-west-1" {
		t.Errorf("defaults: %+v %+v", s, e)
	}
	if s.Store != "dynamodb" || !s.RequireAPIKey || !s.Stateless {
		t.Errorf("a function must use the table, require API keys and keep no session: %+v", s)
	}
	s, e, err = lambdaconfig.FromEnv(getenv(with("ELICITATION_MAX_WAIT", "12.5s", "ELICITATION_WAIT_MARGIN", "3s", "ELICITATION_RETENTION", "30d",
		"ELICITATION_PUBLIC_URL", "https://elicit.example.com/", "AWS_ENDPOINT_URL", "http://127.0.0.1:8000", "AWS_ENDPOINT_URL_SECRETS_MANAGER", "http://127.0.0.1:9000")))
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxWait != 12500*time.Millisecond || s.WaitMargin != 3*time.Second || s.Retention != 30*24*time.Hour || s.PublicURL != "https://elicit.example.com/" ||
		e.DynamoDBEndpoint != "http://127.0.0.1:8000" || e.SecretsManagerEndpoint != "http://127.0.0.1:9000" {
		t.Errorf("parsed: %+v %+v", s, e)
	}
	for _, bad := range []map[string]string{
		with("ELICITATION_TABLE", " "), with("AWS_REGION", ""), with("AWS_ACCESS_KEY_ID", ""), with("ELICITATION_MAX_WAIT", "soon"),
		with("ELICITATION_MAX_WAIT", "0s"), with("ELICITATION_RETENTION", "-1d"), with("ELICITATION_LOG_LEVEL", "chatty"),
		with("ELICITATION_PUBLIC_URL", "elicit.example.com"), with("ELICITATION_PUBLIC_URL", "https://x.example.com/?q=1"),
		// A variable of the functions' old environment is refused by name
		// rather than silently ignored.
		with("MAX_WAIT_SECONDS", "20"), with("TABLE_NAME", "old"),
	} {
		if _, _, err := lambdaconfig.FromEnv(getenv(bad)); err == nil {
			t.Errorf("FromEnv(%v) succeeded, want an error", bad)
		}
	}
}

// serve runs a request through the API Gateway adapter as a Lambda
// invocation would, with the request context of ev.
func serve(t *testing.T, h http.Handler, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "r1"})
	resp, err := httpadapter.NewV2(h).ProxyWithContext(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func event(method, path, stage string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: path,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "abc.execute-api.eu-west-1.amazonaws.com", Stage: stage,
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path},
		},
	}
}

func TestReviewURLAndRouting(t *testing.T) {
	t.Parallel()
	var got []string
	h := lambdaconfig.Route("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Context().Deadline(); !ok {
			t.Error("the handler's context has no deadline: the invocation's deadline is lost")
		}
		got = append(got, compose.ReviewURL("", r, "ID", "KEY"), compose.ReviewURL("https://elicit.example.com", r, "ID", "KEY"))
		io.WriteString(w, "ok")
	}))
	for _, tc := range []struct {
		path, stage string
		status      int
		url         string
	}{
		{"/mcp", "$default", 200, "https://abc.execute-api.eu-west-1.amazonaws.com/review/ID/KEY"},
		{"/prod/mcp", "prod", 200, "https://abc.execute-api.eu-west-1.amazonaws.com/prod/review/ID/KEY"},
		{"/other", "$default", 404, ""},
		{"/prod/other", "prod", 404, ""},
	} {
		got = nil
		resp := serve(t, h, event("POST", tc.path, tc.stage))
		if resp.StatusCode != tc.status {
			t.Errorf("%s on stage %s: %d, want %d", tc.path, tc.stage, resp.StatusCode, tc.status)
			continue
		}
		if tc.status == 200 && (len(got) != 2 || got[0] != tc.url || got[1] != "https://elicit.example.com/review/ID/KEY") {
			t.Errorf("%s on stage %s: review URLs %q, want %s and the custom domain's", tc.path, tc.stage, got, tc.url)
		}
	}
	// A request without API Gateway context (a gateway in front that
	// sets X-Forwarded-Proto): its Host.
	r := httptest.NewRequest("POST", "http://localhost:9000/mcp", nil)
	r.Header.Set("X-Forwarded-Proto", "https")
	if u := compose.ReviewURL("", r, "ID", "KEY"); u != "https://localhost:9000/review/ID/KEY" {
		t.Errorf("ReviewURL without API Gateway = %q", u)
	}
}

func TestParseKeyring(t *testing.T) {
	t.Parallel()
	// What Secrets Manager generates for the stack (64 alphanumerics) is
	// key k0; rotation text names keys explicitly.
	gen := strings.Repeat("Ab3dE5gH", 8)
	k0, err := compose.ParseKeyring(gen + "\n")
	if err != nil {
		t.Fatalf("a generated secret: %v", err)
	}
	if k0.CurrentKeyID() != compose.InitialKeyID {
		t.Errorf("current key %q, want %q", k0.CurrentKeyID(), compose.InitialKeyID)
	}
	now := time.Now()
	tok, err := k0.Seal(pagetoken.Claims{ElicitationID: "e1", RenderID: "r1", Expires: now.Add(time.Hour), RequestExpires: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := compose.ParseKeyring("k1:" + pagetoken.GenerateSecret() + ",k0:" + gen)
	if err != nil {
		t.Fatalf("rotated keyring: %v", err)
	}
	if rotated.CurrentKeyID() != "k1" {
		t.Errorf("after rotation the current key is %q, want k1", rotated.CurrentKeyID())
	}
	if c, err := rotated.Open(tok, now); err != nil || c.ElicitationID != "e1" {
		t.Errorf("a token sealed before the rotation: %v, %v; want it still valid", c, err)
	}
	for _, bad := range []string{"", "short", "k1:"} {
		if _, err := compose.ParseKeyring(bad); err == nil {
			t.Errorf("ParseKeyring(%q) succeeded", bad)
		}
	}
}

// TestResponseMargin: a handler's request context ends ResponseMargin
// before the invocation, so a store call that hangs until its context ends
// still leaves the handler time to write its own page.
func TestResponseMargin(t *testing.T) {
	t.Parallel()
	deadline := time.Now().Add(3 * time.Second)
	h := lambdaconfig.Route("GET /review/{id}/{key}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := r.Context().Deadline()
		if !ok || !d.Equal(deadline.Add(-lambdaconfig.ResponseMargin)) {
			t.Errorf("handler deadline %v (%v), want the invocation's %v minus %v", d, ok, deadline, lambdaconfig.ResponseMargin)
		}
		<-r.Context().Done() // a store call that never answers
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "the app's own page")
	}))
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "r1"})
	resp, err := httpadapter.NewV2(h).ProxyWithContext(ctx, event("GET", "/review/a/b", "$default"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Body != "the app's own page" {
		t.Errorf("response %d %q, want the handler's page", resp.StatusCode, resp.Body)
	}
	if ctx.Err() != nil {
		t.Error("the handler answered only after the invocation's deadline")
	}
}

// SourceIP is the caller's address from the gateway's request context, not
// an X-Forwarded-For the caller wrote; without API Gateway, the remote
// address.
func TestSourceIP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ source, forwarded, want string }{
		{"203.0.113.10", "", "203.0.113.10"},
		{"203.0.113.10", "198.51.100.7", "203.0.113.10"},
		{"2001:db8::1", "", "2001:db8::1"},
	} {
		var got string
		h := lambdaconfig.Route("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = lambdaconfig.SourceIP(r)
			w.WriteHeader(http.StatusNoContent)
		}))
		ev := event("POST", "/oauth/register", "$default")
		ev.RequestContext.HTTP.SourceIP = tc.source
		ev.Headers = map[string]string{"x-forwarded-for": tc.forwarded}
		serve(t, h, ev)
		if got != tc.want {
			t.Errorf("source %s, X-Forwarded-For %q: SourceIP %q, want %q", tc.source, tc.forwarded, got, tc.want)
		}
	}
	r := httptest.NewRequest("POST", "http://localhost/oauth/register", nil)
	r.RemoteAddr = "192.0.2.4:5555"
	if got := lambdaconfig.SourceIP(r); got != "192.0.2.4" {
		t.Errorf("without API Gateway: %q, want the remote address 192.0.2.4", got)
	}
}
