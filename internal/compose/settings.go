// Package compose wires the elicitation service together, the same way for
// the local server (cmd/elicitation) and the three Lambda functions
// (functions/mcp, functions/review, functions/submit).
//
// It holds one Settings struct (every setting of every deployment), one
// table of their names (Table: the flag --max-wait is the environment
// variable ELICITATION_MAX_WAIT, on the laptop and on Lambda alike), their
// defaults (in the same table), the one function that builds review URLs
// (ReviewURL), and the composition itself (Build), which makes the store,
// the service, the template checker, the page-token keys, the MCP handler
// and the review and submit handlers from Settings.
//
// Only cmd/* and functions/* read the environment: they pass os.Getenv to
// FromEnv (cmd/elicitation then binds each row to a flag with
// fs.Var(row.Value(&s), row.Name, row.Help())) and call Build with the
// Parts their deployment provides. Build is split into parts so that a binary
// links only what it serves: the MCP handler comes from the subpackage
// compose/mcpendpoint (it alone links the MCP SDK), the store from the
// deployment (boltstore locally, DynamoDB over lambdaconfig's clients on
// Lambda), the review pages only when Parts.Pages is set (compose.Pages),
// and the keys each part needs by the part itself (Keyring for the page
// tokens, StateKeys for the push state).
//
// # Adding a setting
//
// Add a field to Settings and one row to Table (its name, scope, default,
// usage and the field it binds; a check if some values are invalid). The
// flag, the environment variable, the default, the help text and the parse
// error are all derived from that row; run go test ./internal/compose
// -update to regenerate the table in docs/configuration.md, and set the
// variable in template.yaml if the functions need another value than the
// default (infra's TestEnvironmentNamesSettings checks every variable
// there names a Lambda row). Read the field where the part it configures
// is built (Build, or the part's own constructor in a subpackage).
package compose

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// Settings is every setting of the local server and the Lambda functions.
// Its zero value is not useful: start from Defaults (FromEnv and Flags do).
type Settings struct {
	// Where the local server listens.
	Addr       string // MCP endpoint, and the review routes unless ReviewAddr
	ReviewAddr string // optional second listener for the review routes

	// PublicURL is the base of review URLs (a custom domain, a tunnel, a
	// LAN address); empty: derived (ReviewURL).
	PublicURL string

	// TrustedProxies are the tunnel or reverse proxy in front of the
	// local server: a request from one of them comes from the address
	// its X-Forwarded-For names (ratelimit.Proxies.Forwarded, applied by
	// HTTPServer). Lambda has API Gateway's sourceIp instead.
	TrustedProxies ratelimit.Proxies

	// The store.
	Store       string // "bolt" or "dynamodb" (always dynamodb on Lambda)
	DataDir     string // embedded store, API keys file and token secret
	Table       string // DynamoDB table
	CreateTable bool   // create the DynamoDB table if missing (local only)

	// The waits and the records' life.
	MaxWait    time.Duration // bound of one elicit_await
	WaitMargin time.Duration // kept free before a request's deadline
	Retention  time.Duration // kept after expiresAt
	MaxPending int           // requests one principal may have pending at once; 0 no cap

	// Page-token keys: the keyring text, else the Secrets Manager secret
	// holding it, else (locally) a random key generated once in DataDir.
	TokenKeys      string
	TokenSecretARN string

	// Push-state keys (the sealer of a sessionless push's request state
	// and kept review link): the keyring text, else the Secrets Manager
	// secret holding it, else (locally) a random key kept in DataDir.
	// Without any (a Lambda stack without the secret) hosts without a
	// session are not pushed to.
	StateKeys      string
	StateSecretARN string

	// API keys on /mcp (always required on Lambda).
	RequireAPIKey  bool
	APIKeyCacheTTL time.Duration

	// OAuth makes /mcp an OAuth 2.1 protected resource and the
	// deployment its authorization server (internal/authserver), people
	// signing in with the reviewers' issuer. APIKeys keeps API keys
	// working beside it, for machine agents.
	OAuth   bool
	APIKeys bool
	// OAuthClients are the operator's pre-registered OAuth clients: a
	// JSON array (clientreg.Client's form), or a file holding one.
	OAuthClients string
	// OAuthRevocationCacheTTL is how long the MCP endpoint trusts a token
	// family it found live (authserver.Config.RevocationCacheTTL); 0
	// reads the family on every call.
	OAuthRevocationCacheTTL time.Duration
	// OAuthRequests, OAuthRequestsPerSource and OAuthRequestsPerClient
	// bound the authorization server's token, revocation and
	// authorization requests an hour, in all, per source and per client
	// (authserver.Config.Requests).
	OAuthRequests, OAuthRequestsPerSource, OAuthRequestsPerClient int

	// Push sends the review URL to hosts that can show it (SPEC §3
	// "Best-effort push"); a request's push: false still turns it off.
	Push bool

	// HostForm lets a request's askInHost ask for the answer in the
	// host's own form (form elicitation); off unless the operator opts in.
	HostForm bool

	// App offers the MCP App's decision tools to hosts that declare the
	// io.modelcontextprotocol/ui extension; off unless the operator opts in.
	App bool

	// Stateless serves every era without sessions, as the Lambda function
	// does (the local default serves sessions and 2026-07-28 at once).
	Stateless bool

	// Notifications (docs/notifications.md): the targets' configuration,
	// a file path or the document itself; on Lambda the Secrets Manager
	// secret holding its references' values; locally how often the
	// deliverer sweeps for expiry notices and retries.
	NotifyConfig    string
	NotifySecretARN string
	NotifyInterval  time.Duration
	// The Slack app that decides from interactive Slack targets
	// (docs/notifications.md): its signing secret and bot token (locally),
	// else the Secrets Manager secret holding both (on Lambda), and the
	// Web API's base URL.
	SlackSigningSecret string
	SlackBotToken      string
	SlackSecretARN     string
	SlackAPIURL        string
	// Reviewer sign-in (internal/reviewauth): with an issuer, reviewers
	// sign in with OpenID Connect and requests may name reviewers and a
	// quorum; without one the review link alone decides.
	OIDCIssuer          string
	OIDCClientID        string
	OIDCClientSecret    string // local; prefer the environment variable to the flag
	OIDCClientSecretARN string // Lambda: the Secrets Manager secret holding it
	OIDCGroupsClaim     string
	ReviewSessionTTL    time.Duration
	// Reviewers is the deployment's default list of who may decide
	// (comma-separated e-mail addresses and group:NAME), for requests
	// that name none; BarOwner refuses the principal that created a
	// request as its reviewer.
	Reviewers string
	BarOwner  bool
	// Standing approvals (with sign-in): how long one may last at most,
	// and whether one for a gate call must hold one of its arguments.
	StandingMaxTTL          time.Duration
	StandingRequireArgument bool

	CleanupInterval time.Duration // local: how often to remove requests past retention; 0 never
	LogLevel        slog.Level

	// Metrics (docs/operations.md): the local server's Prometheus
	// listener (empty: none), the CloudWatch namespace of the Lambda
	// functions' embedded metric lines (empty: none), and how many
	// principals get a label of their own.
	MetricsAddr       string
	MetricsNamespace  string
	MetricsPrincipals int

	// Limits of the listeners and of MCP sessions (limits.go).
	Limits

	// Version names the build to MCP clients (not a setting: the build or
	// the Lambda runtime sets it).
	Version string
}

// Scope says which deployments read a setting.
type Scope uint8

// The scopes.
const (
	Local  Scope = 1 << iota // cmd/elicitation serve
	Lambda                   // functions/*
	Both   = Local | Lambda
)

// Setting is one row of Table.
type Setting struct {
	// Name is the flag's name; the environment variable is Env(Name).
	Name  string
	Scope Scope
	// Required names the deployments that must set it (no default
	// there).
	Required Scope
	Default  string
	Usage    string
	// bind returns the Value that parses into the field of s.
	bind func(s *Settings) Value
	// envDefault, if set, is the default when it depends on the
	// environment (FromEnv applies it; Defaults leaves the field empty).
	envDefault func(getenv func(string) string) string
	// check, if set, refuses values the type accepts but the service
	// cannot use.
	check func(s *Settings) error
	// Renamed is the variable's name before ELICITATION_* names (the
	// Lambda functions' old environment): set, it is refused with a
	// message naming the new one, rather than silently ignored.
	Renamed string
}

// Env is a setting's environment variable: --max-wait is ELICITATION_MAX_WAIT.
func Env(name string) string {
	return "ELICITATION_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Table is every setting, in the order of the help text.
var Table = []Setting{
	{Name: "addr", Scope: Local, Default: "127.0.0.1:8080",
		Usage: "address of the MCP endpoint /mcp, and of the review page unless --review-addr",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.Addr) }},
	{Name: "review-addr", Scope: Local,
		Usage: "serve the review page on this second address instead (for example the LAN address, so a phone can reach it while /mcp stays on loopback)",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.ReviewAddr) }},
	{Name: "public-url", Scope: Both, Renamed: "PUBLIC_BASE_URL",
		Usage: "base URL reviewers open (a custom domain, a LAN address or a tunnel); default: the review address locally, the API's own address on Lambda",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.PublicURL) },
		check: checkPublicURL},
	{Name: "trusted-proxies", Scope: Local,
		Usage: "comma-separated CIDRs or addresses of the tunnel client or reverse proxy in front of the server (127.0.0.1/32,::1/128): a request whose connection comes from one of them counts, in every per-source and keyless per-principal limit, as from the address its X-Forwarded-For names (the rightmost one not itself in this list); from any other peer the header is ignored. Empty: every request is its connection's address (a tunnel's, for all its callers). Not on Lambda, where API Gateway's sourceIp is the source",
		bind:  func(s *Settings) Value { return &s.TrustedProxies }},
	{Name: "data-dir", Scope: Local, envDefault: DefaultDataDir,
		Usage: "directory of the embedded store, the API keys and the page-token secret",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.DataDir) }},
	{Name: "store", Scope: Local, Default: "bolt",
		Usage: `"bolt" (embedded, in --data-dir) or "dynamodb" (AWS environment variables; AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local)`,
		bind:  func(s *Settings) Value { return (*stringValue)(&s.Store) },
		check: func(s *Settings) error {
			if s.Store != "bolt" && s.Store != "dynamodb" {
				return errors.New(`must be "bolt" or "dynamodb"`)
			}
			return nil
		}},
	{Name: "table", Scope: Both, Required: Lambda, Default: "elicitation", Renamed: "TABLE_NAME",
		Usage: "DynamoDB table (with --store dynamodb; on Lambda, the stack's table)",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.Table) },
		check: func(s *Settings) error {
			if strings.TrimSpace(s.Table) == "" {
				return errors.New("must not be empty")
			}
			return nil
		}},
	{Name: "create-table", Scope: Local, Default: "false",
		Usage: "create the DynamoDB table if it does not exist",
		bind:  func(s *Settings) Value { return (*boolValue)(&s.CreateTable) }},
	{Name: "max-wait", Scope: Both, Default: elicitation.DefaultMaxWait.String(), Renamed: "MAX_WAIT_SECONDS",
		Usage: "longest single elicit_await; waitSeconds can only shorten it",
		bind:  func(s *Settings) Value { return (*durationValue)(&s.MaxWait) },
		check: between(func(s *Settings) time.Duration { return s.MaxWait }, time.Second, 15*time.Minute)},
	{Name: "wait-margin", Scope: Both, Default: (2 * time.Second).String(), Renamed: "WAIT_MARGIN_SECONDS",
		Usage: "time an elicit_await keeps free before its request's deadline (the Lambda invocation's end)",
		bind:  func(s *Settings) Value { return (*durationValue)(&s.WaitMargin) },
		check: between(func(s *Settings) time.Duration { return s.WaitMargin }, 100*time.Millisecond, time.Minute)},
	{Name: "retention", Scope: Both, Default: "7d", Renamed: "RETENTION_DAYS",
		Usage: "how long a request is kept after it expires (168h, 7d, 0.5d)",
		bind:  func(s *Settings) Value { return (*durationValue)(&s.Retention) },
		check: between(func(s *Settings) time.Duration { return s.Retention }, time.Nanosecond, 3650*24*time.Hour)},
	{Name: "max-pending-per-principal", Scope: Both, Default: strconv.Itoa(elicitation.DefaultMaxPending),
		Usage: fmt.Sprintf("most requests one principal (its API key, else anonymous) may have pending at once, so that one agent cannot crowd the others out of a reviewer's inbox (which reads the %d most urgent); past it a create gets the tool error busy until one of its requests is decided, canceled or expires; 0 no cap", elicitation.MaxInbox),
		bind:  func(s *Settings) Value { return (*intValue)(&s.MaxPending) },
		check: nonNegative(func(s *Settings) int { return s.MaxPending })},
	{Name: "token-keys", Scope: Both, Renamed: "TOKEN_KEYS",
		Usage: `page-token signing keys "kid:base64secret[,kid:base64secret…]", the first signs; default: --token-secret-arn, else a random key kept in --data-dir`,
		bind:  func(s *Settings) Value { return (*stringValue)(&s.TokenKeys) }},
	{Name: "token-secret-arn", Scope: Lambda, Renamed: "TOKEN_SECRET_ARN",
		Usage: "Secrets Manager secret holding the page-token keyring (the review, submit and MCP functions read it at start-up; the MCP function signs receipts with keys derived from it)",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.TokenSecretARN) }},
	{Name: "state-keys", Scope: Both,
		Usage: `keys sealing the request state of a push without a session "kid:base64secret[,…]", the first seals; every process of a deployment needs the same; default: --state-secret-arn on Lambda, else a random key kept in --data-dir`,
		bind:  func(s *Settings) Value { return (*stringValue)(&s.StateKeys) }},
	{Name: "state-secret-arn", Scope: Lambda,
		Usage: "Secrets Manager secret holding the push-state keys (the MCP function reads it at start-up)",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.StateSecretARN) }},
	{Name: "require-api-key", Scope: Local, Default: "false",
		Usage: `require a bearer API key on /mcp (create keys with "elicitation keys create"); each key's principal owns what it creates (always on Lambda)`,
		bind:  func(s *Settings) Value { return (*boolValue)(&s.RequireAPIKey) }},
	{Name: "api-key-cache-ttl", Scope: Both, Default: "30s", Renamed: "API_KEY_CACHE_SECONDS",
		Usage: "how long a verified API key is trusted without a read (a revocation takes effect within it)",
		bind:  func(s *Settings) Value { return (*durationValue)(&s.APIKeyCacheTTL) },
		check: between(func(s *Settings) time.Duration { return s.APIKeyCacheTTL }, 0, time.Hour)},
	{Name: "oauth", Scope: Both, Default: "false",
		Usage: "OAuth 2.1 sign-in for MCP hosts on /mcp (claude.ai, ChatGPT, Claude Desktop, VS Code, ...): the deployment is their authorization server, people sign in with --oidc-issuer and consent on the review listener",
		bind:  func(s *Settings) Value { return (*boolValue)(&s.OAuth) },
		check: checkOAuth},
	{Name: "oauth-clients", Scope: Both,
		Usage: `pre-registered OAuth clients for --oauth: a JSON array, or a file holding one, of {"client_id", "client_name", "redirect_uris", "token_endpoint_auth_method" ("none", "client_secret_basic" or "client_secret_post"), "client_secret_hash" ("sha256:" and the hex SHA-256 of a random secret of 32 bytes or more)}`,
		bind:  func(s *Settings) Value { return (*stringValue)(&s.OAuthClients) }},
	{Name: "api-keys", Scope: Both, Default: "true",
		Usage: "with OAuth on, also accept API keys on /mcp (machine agents); false: only people's OAuth tokens",
		bind:  func(s *Settings) Value { return (*boolValue)(&s.APIKeys) }},
	{Name: "oauth-revocation-cache-ttl", Scope: Both, Default: "30s",
		Usage: "how long /mcp trusts an OAuth token's grant it found live without a read (a revocation by another process takes effect within it; 0: a read per call)",
		bind:  func(s *Settings) Value { return (*durationValue)(&s.OAuthRevocationCacheTTL) },
		check: between(func(s *Settings) time.Duration { return s.OAuthRevocationCacheTTL }, 0, time.Hour)},
	// The defaults are authserver.DefaultRequestsPerSource's,
	// DefaultRequestsPerClient's and DefaultRequests' counts.
	{Name: "oauth-requests-per-source", Scope: Both, Default: "3000",
		Usage: "most OAuth token, revocation and authorization requests an hour from one source (its IP address; on Lambda the caller's, per execution environment), so that one address's flood does not stop the others; past it 429 temporarily_unavailable with Retry-After (a host keeps its tokens and tries later); that many may come at once",
		bind:  func(s *Settings) Value { return (*intValue)(&s.OAuthRequestsPerSource) },
		check: atLeastOne(func(s *Settings) int { return s.OAuthRequestsPerSource })},
	{Name: "oauth-requests-per-client", Scope: Both, Default: "10000",
		Usage: "most OAuth token, revocation and authorization requests an hour naming one client id (all its hosts' people together), so that one client's flood does not stop the others; keep it above --oauth-requests-per-source, or one source could spend a client's, whose id anyone may name; past it 429 temporarily_unavailable with Retry-After",
		bind:  func(s *Settings) Value { return (*intValue)(&s.OAuthRequestsPerClient) },
		check: atLeastOne(func(s *Settings) int { return s.OAuthRequestsPerClient })},
	{Name: "oauth-requests", Scope: Both, Default: "30000",
		Usage: "most OAuth token, revocation and authorization requests an hour in all (per process; on Lambda per execution environment); past it every source gets 429 temporarily_unavailable with Retry-After",
		bind:  func(s *Settings) Value { return (*intValue)(&s.OAuthRequests) },
		check: atLeastOne(func(s *Settings) int { return s.OAuthRequests })},
	{Name: "push", Scope: Both, Default: "true",
		Usage: "push the review URL to MCP hosts that declare URL elicitation (a request's push: false also turns it off)",
		bind:  func(s *Settings) Value { return (*boolValue)(&s.Push) }},
	{Name: "host-form", Scope: Both, Default: "false",
		Usage: "let an agent's askInHost ask for the answer in the host's own form where the host declares form elicitation (never with reviewer sign-in; without it the form is the same capability as the review link)",
		bind:  func(s *Settings) Value { return (*boolValue)(&s.HostForm) }},
	{Name: "mcp-app", Scope: Both, Default: "false",
		Usage: "offer the review as an MCP App: the ui:// page the creating tools name in _meta.ui.resourceUri and its app-only tools (elicit_app_view, elicit_app_decide), for hosts that declare the io.modelcontextprotocol/ui extension (never decides with reviewer sign-in, named reviewers or a quorum)",
		bind:  func(s *Settings) Value { return (*boolValue)(&s.App) }},
	{Name: "stateless", Scope: Local, Default: "false",
		Usage: "serve every protocol era without sessions, with JSON responses, as the Lambda function does (clients never need it)",
		bind:  func(s *Settings) Value { return (*boolValue)(&s.Stateless) }},
	{Name: "notify-config", Scope: Both,
		Usage: "notification targets (docs/notifications.md): a YAML or JSON file, or the document itself; ${VAR} in it reads the environment (locally); default: no targets",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.NotifyConfig) }},
	{Name: "notify-secret-arn", Scope: Lambda,
		Usage: "Secrets Manager secret holding the values of the ${NAME} references in notify-config, as a JSON object (only the notify function reads it)",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.NotifySecretARN) }},
	{Name: "notify-interval", Scope: Local, Default: "5s",
		Usage: "how often the notification deliverer looks for expiry notices and retries that are due",
		bind:  func(s *Settings) Value { return (*durationValue)(&s.NotifyInterval) },
		check: between(func(s *Settings) time.Duration { return s.NotifyInterval }, 100*time.Millisecond, time.Hour)},
	{Name: "slack-signing-secret", Scope: Local,
		Usage: "the Slack app's signing secret (set it in the environment): with it, POST /slack/interactions on the review listener takes decisions from interactive Slack targets (docs/notifications.md); empty: none",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.SlackSigningSecret) }},
	{Name: "slack-bot-token", Scope: Local,
		Usage: "the Slack app's bot token (xoxb-…; set it in the environment), for the comment dialog (views.open) and the mapping by e-mail (users.info); needed with --slack-signing-secret",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.SlackBotToken) }},
	{Name: "slack-secret-arn", Scope: Lambda,
		Usage: `Secrets Manager secret holding the Slack app's {"signingSecret": "…", "botToken": "xoxb-…"} (the submit function reads it at start-up and then serves POST /slack/interactions); empty: no decisions from Slack`,
		bind:  func(s *Settings) Value { return (*stringValue)(&s.SlackSecretARN) }},
	{Name: "slack-api-url", Scope: Both, Default: "https://slack.com/api",
		Usage: "the Slack Web API's base URL (interaction response URLs must be on its host or on hooks. and its host)",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.SlackAPIURL) },
		check: checkSlackAPIURL},
	{Name: "oidc-issuer", Scope: Both,
		Usage: "OpenID Connect issuer reviewers sign in with (https://accounts.google.com, https://login.microsoftonline.com/TENANT/v2.0, an Okta, Cognito or Keycloak issuer); empty: no sign-in, and anyone holding a review link decides (docs/security.md)",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.OIDCIssuer) },
		check: checkSignIn},
	{Name: "oidc-client-id", Scope: Both,
		Usage: "this deployment's client id at the issuer; register <public URL>/review/oidc/callback as its redirect URI",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.OIDCClientID) }},
	{Name: "oidc-client-secret", Scope: Local,
		Usage: "the client's secret (set it in the environment rather than on the command line); empty for a public client, which relies on PKCE alone",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.OIDCClientSecret) }},
	{Name: "oidc-client-secret-arn", Scope: Lambda,
		Usage: "Secrets Manager secret holding the client's secret (the review function reads it at the first sign-in); empty for a public client",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.OIDCClientSecretARN) }},
	{Name: "oidc-groups-claim", Scope: Both, Default: "groups",
		Usage: "the ID token or UserInfo claim listing a reviewer's groups, for reviewers named group:NAME",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.OIDCGroupsClaim) }},
	{Name: "review-session-ttl", Scope: Both, Default: "30m",
		Usage: "how long a reviewer stays signed in (the session cookie is never renewed)",
		bind:  func(s *Settings) Value { return (*durationValue)(&s.ReviewSessionTTL) },
		check: between(func(s *Settings) time.Duration { return s.ReviewSessionTTL }, time.Minute, 12*time.Hour)},
	{Name: "reviewers", Scope: Both,
		Usage: "with sign-in: who may decide requests that name no reviewers, as comma-separated e-mail addresses and group:NAME entries; empty: any signed-in reviewer",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.Reviewers) },
		check: func(s *Settings) error { _, err := s.ReviewerPolicy(); return err }},
	{Name: "bar-owner", Scope: Both, Default: "true",
		Usage: "with sign-in: refuse a reviewer whose e-mail address or subject is the principal that created the request (name API key principals after their owners' addresses)",
		bind:  func(s *Settings) Value { return (*boolValue)(&s.BarOwner) }},
	{Name: "standing-approval-max-ttl", Scope: Both, Default: elicitation.DefaultRuleMaxTTL.String(),
		Usage: "with sign-in: the longest a standing approval (\"approve calls like this for…\", docs/review-page.md) may last; the page offers no longer",
		bind:  func(s *Settings) Value { return (*durationValue)(&s.StandingMaxTTL) },
		check: between(func(s *Settings) time.Duration { return s.StandingMaxTTL }, time.Minute, 30*24*time.Hour)},
	{Name: "standing-approval-require-argument", Scope: Both, Default: "true",
		Usage: "with sign-in: a standing approval of a tool call the proxy's gate asks about must hold at least one of the call's arguments to a value (false: the tool alone may be approved standing)",
		bind:  func(s *Settings) Value { return (*boolValue)(&s.StandingRequireArgument) }},
	{Name: "cleanup-interval", Scope: Local, Default: "1h",
		Usage: `how often to remove requests past their retention (0 disables; "elicitation cleanup" does it once)`,
		bind:  func(s *Settings) Value { return (*durationValue)(&s.CleanupInterval) },
		check: between(func(s *Settings) time.Duration { return s.CleanupInterval }, 0, 1<<63-1)},
	{Name: "metrics-addr", Scope: Local,
		Usage: "serve Prometheus metrics at /metrics on this address (for example 127.0.0.1:9464); empty: none. A listener of its own, so that the review page's listener never shows them",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.MetricsAddr) }},
	{Name: "metrics-namespace", Scope: Lambda, Default: "Elicitation",
		Usage: "CloudWatch namespace of the metrics the functions write to their logs in the embedded metric format; empty: none",
		bind:  func(s *Settings) Value { return (*stringValue)(&s.MetricsNamespace) }},
	{Name: "metrics-principals", Scope: Both, Default: "50",
		Usage: "how many distinct principals get a metrics label of their own; later ones are counted as \"other\"",
		bind:  func(s *Settings) Value { return (*intValue)(&s.MetricsPrincipals) },
		check: func(s *Settings) error {
			if s.MetricsPrincipals < 1 || s.MetricsPrincipals > 1000 {
				return errors.New("must be from 1 to 1000")
			}
			return nil
		}},
	{Name: "log-level", Scope: Both, Default: "info", Renamed: "LOG_LEVEL",
		Usage: "debug, info, warn or error",
		bind:  func(s *Settings) Value { return (*levelValue)(&s.LogLevel) }},
}

// Defaults returns the settings with every default of Table applied.
func Defaults() Settings {
	var s Settings
	for _, row := range Table {
		if row.Default == "" {
			continue
		}
		if err := row.bind(&s).Set(row.Default); err != nil {
			panic(fmt.Sprintf("compose: default of --%s %q: %v", row.Name, row.Default, err))
		}
	}
	return s
}

// FromEnv reads the settings of scope (only those named, if any names
// are given) from getenv (os.Getenv in the mains) over the defaults and
// checks them. Every bad value is reported, with the variable's name.
func FromEnv(getenv func(string) string, scope Scope, names ...string) (Settings, error) {
	s := Defaults()
	var errs []error
	for _, row := range Table {
		if row.Scope&scope == 0 || len(names) > 0 && !slices.Contains(names, row.Name) {
			continue
		}
		if row.Renamed != "" && scope&Lambda != 0 && getenv(row.Renamed) != "" {
			errs = append(errs, fmt.Errorf("%s is set but no longer read: it is now %s (docs/configuration.md)", row.Renamed, Env(row.Name)))
		}
		v := strings.TrimSpace(getenv(Env(row.Name)))
		if v == "" && row.envDefault != nil {
			v = row.envDefault(getenv)
		}
		if v == "" {
			if row.Required&scope != 0 {
				errs = append(errs, fmt.Errorf("%s is not set", Env(row.Name)))
			}
			continue
		}
		if err := row.bind(&s).Set(v); err != nil {
			errs = append(errs, fmt.Errorf("$%s=%q: %w", Env(row.Name), v, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	if scope == Lambda {
		// What the functions cannot do otherwise: the stack's table, keys
		// on every call, no process kept between two requests.
		s.Store, s.RequireAPIKey, s.Stateless = "dynamodb", true, true
	}
	return s, s.Check(scope)
}

// Value parses a setting into its field of Settings; it is a flag.Value
// (cmd/elicitation binds each row to a flag with
// fs.Var(row.Value(&s), row.Name, row.Help())). This package does not
// import flag, so that the Lambda functions do not link it.
type Value interface {
	String() string
	Set(string) error
}

// Value returns the Value of the row's field in s.
func (row Setting) Value(s *Settings) Value { return row.bind(s) }

// Help is the row's usage text, naming its environment variable (and, in
// backquotes, the kind of value flag.PrintDefaults shows).
func (row Setting) Help() string {
	kind := ""
	switch row.bind(&Settings{}).(type) {
	case *durationValue:
		kind = "; a `duration` (20s, 168h; or days, 7d)"
	case *levelValue:
		kind = " (a `level`)"
	}
	return row.Usage + kind + " ($" + Env(row.Name) + ")"
}

// In reports whether the row applies to scope.
func (row Setting) In(scope Scope) bool { return row.Scope&scope != 0 }

// Check applies each setting's check, naming the flag (locally) or the
// variable (on Lambda) of a value that fails.
func (s *Settings) Check(scope Scope) error {
	var errs []error
	for _, row := range Table {
		if row.Scope&scope == 0 || row.check == nil {
			continue
		}
		if err := row.check(s); err != nil {
			name := "--" + row.Name
			if scope == Lambda {
				name = Env(row.Name)
			}
			v := row.bind(s)
			text := v.String()
			if _, ok := v.(*stringValue); ok {
				text = strconv.Quote(text)
			}
			errs = append(errs, fmt.Errorf("%s %s: %w", name, text, err))
		}
	}
	return errors.Join(errs...)
}

// Logger is the logger of a deployment: JSON lines on Lambda (CloudWatch
// reads them), text elsewhere, at s.LogLevel.
func (s Settings) Logger(w io.Writer, json bool) *slog.Logger {
	o := &slog.HandlerOptions{Level: s.LogLevel}
	if json {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}

// DefaultDataDir is the local server's data directory unless
// ELICITATION_DATA_DIR says otherwise: $XDG_DATA_HOME/mcp-elicitation, else
// ~/.local/share/mcp-elicitation.
func DefaultDataDir(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "mcp-elicitation")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "share", "mcp-elicitation")
	}
	return ".mcp-elicitation"
}

func between(field func(*Settings) time.Duration, lo, hi time.Duration) func(*Settings) error {
	return func(s *Settings) error {
		if d := field(s); d < lo || d > hi {
			if lo == time.Nanosecond {
				return errors.New("must be positive")
			}
			return fmt.Errorf("must be between %v and %v", lo, hi)
		}
		return nil
	}
}

// SignIn reports whether reviewers sign in.
func (s Settings) SignIn() bool { return s.OIDCIssuer != "" }

// OAuthOn reports whether /mcp takes OAuth tokens from this deployment's
// authorization server: people sign in there with the reviewers' issuer,
// so never without one.
func (s Settings) OAuthOn() bool { return s.OAuth && s.SignIn() }

// MCPAuth says which credentials /mcp takes: API keys, OAuth tokens,
// both, or neither (an open endpoint, locally only).
func (s Settings) MCPAuth() (keys, oauth bool) {
	oauth = s.OAuthOn()
	keys = s.RequireAPIKey || (oauth && s.APIKeys)
	if oauth && !s.APIKeys {
		keys = false
	}
	return keys, oauth
}

// ReviewerPolicy is the deployment's rule of who may decide.
func (s Settings) ReviewerPolicy() (elicitation.ReviewerPolicy, error) {
	var list []string
	for _, r := range strings.Split(s.Reviewers, ",") {
		if r = strings.TrimSpace(r); r != "" {
			list = append(list, r)
		}
	}
	if len(list) > 0 && !s.SignIn() {
		return elicitation.ReviewerPolicy{}, errors.New("a reviewers policy needs reviewer sign-in (--oidc-issuer)")
	}
	parsed, err := elicitation.ParseReviewers(list)
	if err != nil {
		return elicitation.ReviewerPolicy{}, errors.New(elicitation.PublicMessage(err))
	}
	return elicitation.ReviewerPolicy{Reviewers: parsed, BarOwner: s.BarOwner}, nil
}

func checkSignIn(s *Settings) error {
	if s.OIDCIssuer == "" {
		return nil
	}
	u, err := url.Parse(s.OIDCIssuer)
	if err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" {
		return errors.New("want the issuer's https URL")
	}
	if strings.TrimSpace(s.OIDCClientID) == "" {
		return errors.New("needs --oidc-client-id too")
	}
	return nil
}

func checkOAuth(s *Settings) error {
	if s.OAuth && !s.SignIn() {
		return errors.New("needs --oidc-issuer: people sign in there to connect their hosts")
	}
	return nil
}

func checkSlackAPIURL(s *Settings) error {
	u, err := url.Parse(s.SlackAPIURL)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.RawQuery != "" {
		return errors.New("want the Web API's absolute http(s) URL, https://slack.com/api")
	}
	if (s.SlackSigningSecret == "") != (s.SlackBotToken == "") {
		return errors.New("--slack-signing-secret and --slack-bot-token go together: the app needs both")
	}
	return nil
}

func checkPublicURL(s *Settings) error {
	if s.PublicURL == "" {
		return nil
	}
	u, err := url.Parse(s.PublicURL)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("want an absolute http(s) URL without query")
	}
	return nil
}

// The flag.Values of the table's fields.
type (
	stringValue   string
	boolValue     bool
	durationValue time.Duration
	levelValue    slog.Level
)

func (v *stringValue) Set(s string) error { *v = stringValue(strings.TrimSpace(s)); return nil }
func (v *stringValue) String() string     { return string(*v) }

func (v *boolValue) Set(s string) error {
	b, err := ParseBool(s)
	if err != nil {
		return err
	}
	*v = boolValue(b)
	return nil
}

// ParseBool is the one reader of every boolean setting, flag or variable:
// exactly "true" or "false". Anything else (0, 1, f, FALSE, no, an empty
// -flag= value) is refused rather than read as false, which could turn
// off the owner bar or leave /mcp open without API keys; the caller's
// error names the setting (FromEnv the variable, the flag package the
// flag).
func ParseBool(s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("want true or false (nothing else is read as a boolean)")
}
func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

// Set reads a Go duration (20s, 168h) or a number of days (7d, 0.5d).
func (v *durationValue) Set(s string) error {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		f, err := strconv.ParseFloat(n, 64)
		if err != nil || f < 0 || f > 1e5 {
			return errors.New("not a duration like 20s, 168h or 7d")
		}
		*v = durationValue(f * float64(24*time.Hour))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("not a duration like 20s, 168h or 7d")
	}
	*v = durationValue(d)
	return nil
}
func (v *durationValue) String() string { return time.Duration(*v).String() }

func (v *levelValue) Set(s string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return errors.New("not debug, info, warn or error")
	}
	*v = levelValue(l)
	return nil
}
func (v *levelValue) String() string { return slog.Level(*v).String() }
