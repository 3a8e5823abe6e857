// Package lambdaconfig holds what the Lambda functions (functions/mcp,
// functions/review, functions/submit, functions/oauth) need beyond
// internal/compose: the AWS SDK's part of the environment, the DynamoDB and
// Secrets Manager clients built from it, and routing under API Gateway.
// Each main reads its settings with FromEnv, builds its part with
// compose.Build and adapts the handler to HTTP API events (payload 2.0);
// each links only what it uses.
//
// The settings are compose.Table's, under the same ELICITATION_* names as
// the local server's (template.yaml sets them; compose.Scope Lambda says
// which apply), plus the AWS variables the Lambda runtime sets (AWS_REGION
// and the execution role's credentials) and the endpoint overrides of
// AWSEnv.
package lambdaconfig

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/grant"
)

// AWSEnv is the AWS SDK's part of the environment. The functions build
// their clients from it directly rather than with config.LoadDefaultConfig,
// whose credential chain (SSO, STS, IMDS, shared files) a Lambda function
// never uses: that keeps the bootstrap smaller and its start faster.
type AWSEnv struct {
	Region          string // AWS_REGION
	AccessKeyID     string // AWS_ACCESS_KEY_ID
	SecretAccessKey string // AWS_SECRET_ACCESS_KEY
	SessionToken    string // AWS_SESSION_TOKEN
	// Endpoints override the services' endpoints (DynamoDB Local, test
	// doubles): AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SECRETS_MANAGER,
	// else AWS_ENDPOINT_URL.
	DynamoDBEndpoint       string
	SecretsManagerEndpoint string
}

// FromEnv reads a function's settings (compose.FromEnv with scope Lambda;
// the version from AWS_LAMBDA_FUNCTION_VERSION) and the AWS environment
// from getenv (os.Getenv in the mains). The settings are usable for a
// logger even when err is not nil.
func FromEnv(getenv func(string) string) (compose.Settings, AWSEnv, error) {
	s, err := compose.FromEnv(getenv, compose.Lambda)
	s.Version = getenv("AWS_LAMBDA_FUNCTION_VERSION")
	e := AWSEnv{
		Region:                 getenv("AWS_REGION"),
		AccessKeyID:            getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey:        getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:           getenv("AWS_SESSION_TOKEN"),
		DynamoDBEndpoint:       orDefault(getenv("AWS_ENDPOINT_URL_DYNAMODB"), getenv("AWS_ENDPOINT_URL")),
		SecretsManagerEndpoint: orDefault(getenv("AWS_ENDPOINT_URL_SECRETS_MANAGER"), getenv("AWS_ENDPOINT_URL")),
	}
	if e.Region == "" {
		e.Region = getenv("AWS_DEFAULT_REGION")
	}
	errs := []error{err}
	if e.Region == "" {
		errs = append(errs, errors.New("AWS_REGION is not set"))
	}
	if e.AccessKeyID == "" || e.SecretAccessKey == "" {
		errs = append(errs, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (Lambda sets them from the execution role)"))
	}
	return s, e, errors.Join(errs...)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// AWSConfig is the SDK configuration of a function: the region and the
// execution role's credentials from the environment, the store's retry
// policy and HTTP client (the notify function's SES client is built on it).
func (e AWSEnv) AWSConfig() aws.Config { return e.awsConfig() }

// awsConfig is the SDK configuration of a function.
func (e AWSEnv) awsConfig() aws.Config {
	return aws.Config{
		Region:      e.Region,
		Credentials: credentials.NewStaticCredentialsProvider(e.AccessKeyID, e.SecretAccessKey, e.SessionToken),
		Retryer:     dynamostore.Retryer,
		HTTPClient:  dynamostore.HTTPClient(),
	}
}

// DynamoDB returns the DynamoDB client, with the store's retry policy.
func DynamoDB(e AWSEnv) *dynamodb.Client {
	return dynamodb.NewFromConfig(e.awsConfig(), func(o *dynamodb.Options) {
		if e.DynamoDBEndpoint != "" {
			o.BaseEndpoint = aws.String(e.DynamoDBEndpoint)
		}
	})
}

// The review and submit functions answer a person behind a gateway that
// gives up after 10 s: their DynamoDB calls make fewer, shorter attempts
// than the store's default, so that every retry of a call ends within the
// function's timeout minus ResponseMargin and the person gets the page that
// says what failed (infra/template_test.go checks the sum).
const (
	PageAttempts       = 3
	PageAttemptTimeout = 2 * time.Second
	PageMaxBackoff     = 250 * time.Millisecond
)

// PageDynamoDB returns the DynamoDB client of the review and submit
// functions: the store's retry policy with PageAttempts attempts of at
// most PageAttemptTimeout each, at most PageMaxBackoff apart.
func PageDynamoDB(e AWSEnv) *dynamodb.Client {
	return dynamodb.NewFromConfig(e.awsConfig(), func(o *dynamodb.Options) {
		if e.DynamoDBEndpoint != "" {
			o.BaseEndpoint = aws.String(e.DynamoDBEndpoint)
		}
		o.Retryer = retry.AddWithMaxBackoffDelay(retry.AddWithMaxAttempts(dynamostore.Retryer(), PageAttempts), PageMaxBackoff)
		o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			tr.ResponseHeaderTimeout = PageAttemptTimeout
		})
	})
}

// Store returns compose.Parts.Store: the settings' table through db.
func Store(db *dynamodb.Client) func(context.Context, compose.Settings) (elicitation.Store, error) {
	return func(_ context.Context, s compose.Settings) (elicitation.Store, error) {
		return dynamostore.New(db, s.Table, dynamostore.Options{}), nil
	}
}

// Secret returns compose.Parts.Secret: a Secrets Manager secret's string.
// It is a function rather than a method of AWSEnv so that the MCP
// function, which needs no keyring, does not link the Secrets Manager
// client (text/template and Liquid make the linker keep every exported
// method of reachable types).
func Secret(e AWSEnv) func(context.Context, string) (string, error) {
	return func(ctx context.Context, arn string) (string, error) {
		sm := secretsmanager.NewFromConfig(e.awsConfig(), func(o *secretsmanager.Options) {
			if e.SecretsManagerEndpoint != "" {
				o.BaseEndpoint = aws.String(e.SecretsManagerEndpoint)
			}
		})
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			return "", err
		}
		return aws.ToString(out.SecretString), nil
	}
}

// Grants opens the authorization server's grant store (clients, logins,
// codes, token families: grant#<kind>#<id> items) in the app's table, for
// oauthpart.Options.Grants.
func Grants(a *compose.App) (grant.Store, error) {
	st, ok := a.Store.(*dynamostore.Store)
	if !ok {
		return nil, fmt.Errorf("no grant store in a store of type %T", a.Store)
	}
	return st.Grants(a.Now), nil
}

// SourceIP is the address of the caller of r as API Gateway saw it (the
// HTTP API's requestContext.http.sourceIp), else r's remote address:
// whom a per-source limit counts (client registrations), never the
// gateway's own address.
func SourceIP(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.HTTP.SourceIP != "" {
		return rc.HTTP.SourceIP
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// stripStage removes a named stage's prefix from the path, which HTTP API
// payload 2.0 keeps in rawPath ("/prod/mcp"), so that the routes match on
// any stage.
func stripStage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.Stage != "" && rc.Stage != "$default" {
			prefix := "/" + rc.Stage
			if p, ok := strings.CutPrefix(r.URL.Path, prefix); ok && strings.HasPrefix(p, "/") {
				r2 := r.Clone(r.Context())
				r2.URL.Path, r2.URL.RawPath = p, ""
				r = r2
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Route serves h at pattern (a net/http ServeMux pattern such as "/mcp" or
// "GET /review/{id}/{key}") and answers 404 elsewhere, on any stage. The
// request's context ends ResponseMargin before the invocation does, and
// carries the API's own address (gatewayBase) for review URLs.
func Route(pattern string, h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(pattern, h)
	return gatewayBase(stripStage(beforeDeadline(mux)))
}

// gatewayBase puts the API's own address in the request's context
// (compose.WithRequestBase): https, the domain name of its API Gateway
// context, and the stage unless it is $default. compose.ReviewBase uses it
// when no public URL is set.
func gatewayBase(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.DomainName != "" {
			base := "https://" + rc.DomainName
			if rc.Stage != "" && rc.Stage != "$default" {
				base += "/" + url.PathEscape(rc.Stage)
			}
			r = r.WithContext(compose.WithRequestBase(r.Context(), base))
		}
		next.ServeHTTP(w, r)
	})
}

// ResponseMargin is the time a handler keeps, after its request's context
// ends, to write its own response (the page that says what failed) before
// the Lambda invocation ends; without it a slow store call ends as the
// gateway's bare 5xx. template.yaml's function timeouts leave room for it
// (infra/template_test.go checks).
const ResponseMargin = time.Second

// beforeDeadline ends each request's context ResponseMargin before the
// invocation's deadline.
func beforeDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d, ok := r.Context().Deadline(); ok {
			ctx, cancel := context.WithDeadline(r.Context(), d.Add(-ResponseMargin))
			defer cancel()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}
