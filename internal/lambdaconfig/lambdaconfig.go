// Package lambdaconfig holds what the three Lambda functions
// (functions/mcp, functions/review, functions/submit) share: their
// configuration, read from the environment by the mains and parsed here,
// the AWS clients, the elicitation service over DynamoDB, the page-token
// keyring from Secrets Manager, review URLs and routing under API Gateway.
// Each main builds its handler from these and adapts it to HTTP API events
// (payload 2.0); each links only what it uses.
//
// The environment (template.yaml sets it):
//
//	TABLE_NAME               the DynamoDB table (required)
//	LOG_LEVEL                debug, info, warn or error (default info)
//	MAX_WAIT_SECONDS         bound of one elicit_await (default 20)
//	WAIT_MARGIN_SECONDS      kept free before the invocation's deadline (default 2)
//	RETENTION_DAYS           days a request is kept after it expires (default 7)
//	PUBLIC_BASE_URL          custom domain for review URLs (default: from each request)
//	API_KEY_CACHE_SECONDS    how long a verified API key is trusted without a read (default 30)
//	TOKEN_SECRET_ARN         Secrets Manager secret with the page-token keyring
//	TOKEN_KEYS               the keyring itself, instead of TOKEN_SECRET_ARN (sam local, tests)
//
// and the AWS variables the Lambda runtime sets (AWS_REGION and the execution
// role's credentials), plus the endpoint overrides of AWSEnv.
package lambdaconfig

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

// Env is the functions' configuration.
type Env struct {
	Table          string
	LogLevel       slog.Level
	MaxWait        time.Duration
	WaitMargin     time.Duration
	Retention      time.Duration
	PublicBaseURL  string
	APIKeyCacheTTL time.Duration
	TokenSecretARN string
	TokenKeys      string
	// Version names the build to MCP clients.
	Version string
	// AWS is what the SDK needs: on Lambda, the region and the execution
	// role's credentials, which the runtime puts in the environment.
	AWS AWSEnv
}

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

// Defaults of Env.
const (
	DefaultMaxWait        = 20 * time.Second
	DefaultWaitMargin     = 2 * time.Second
	DefaultRetentionDays  = 7
	DefaultAPIKeyCacheTTL = 30 * time.Second
)

// FromEnv parses the configuration from getenv (os.Getenv in the mains).
func FromEnv(getenv func(string) string) (Env, error) {
	e := Env{
		Table:          strings.TrimSpace(getenv("TABLE_NAME")),
		PublicBaseURL:  strings.TrimRight(strings.TrimSpace(getenv("PUBLIC_BASE_URL")), "/"),
		TokenSecretARN: strings.TrimSpace(getenv("TOKEN_SECRET_ARN")),
		TokenKeys:      strings.TrimSpace(getenv("TOKEN_KEYS")),
		Version:        getenv("AWS_LAMBDA_FUNCTION_VERSION"),
		AWS: AWSEnv{
			Region:                 getenv("AWS_REGION"),
			AccessKeyID:            getenv("AWS_ACCESS_KEY_ID"),
			SecretAccessKey:        getenv("AWS_SECRET_ACCESS_KEY"),
			SessionToken:           getenv("AWS_SESSION_TOKEN"),
			DynamoDBEndpoint:       orDefault(getenv("AWS_ENDPOINT_URL_DYNAMODB"), getenv("AWS_ENDPOINT_URL")),
			SecretsManagerEndpoint: orDefault(getenv("AWS_ENDPOINT_URL_SECRETS_MANAGER"), getenv("AWS_ENDPOINT_URL")),
		},
	}
	if e.AWS.Region == "" {
		e.AWS.Region = getenv("AWS_DEFAULT_REGION")
	}
	var errs []error
	if e.Table == "" {
		errs = append(errs, errors.New("TABLE_NAME is not set"))
	}
	if e.AWS.Region == "" {
		errs = append(errs, errors.New("AWS_REGION is not set"))
	}
	if e.AWS.AccessKeyID == "" || e.AWS.SecretAccessKey == "" {
		errs = append(errs, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (Lambda sets them from the execution role)"))
	}
	if err := e.LogLevel.UnmarshalText([]byte(orDefault(getenv("LOG_LEVEL"), "info"))); err != nil {
		errs = append(errs, fmt.Errorf("LOG_LEVEL: %w", err))
	}
	seconds := func(name string, def time.Duration, lo, hi float64) time.Duration {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return def
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < lo || f > hi {
			errs = append(errs, fmt.Errorf("%s=%q: want a number of seconds from %v to %v", name, v, lo, hi))
			return def
		}
		return time.Duration(f * float64(time.Second))
	}
	e.MaxWait = seconds("MAX_WAIT_SECONDS", DefaultMaxWait, 1, 900)
	e.WaitMargin = seconds("WAIT_MARGIN_SECONDS", DefaultWaitMargin, 0.1, 60)
	e.APIKeyCacheTTL = seconds("API_KEY_CACHE_SECONDS", DefaultAPIKeyCacheTTL, 0, 3600)
	days := seconds("RETENTION_DAYS", DefaultRetentionDays*time.Second, 1, 3650)
	e.Retention = time.Duration(days.Seconds() * float64(24*time.Hour))
	if e.PublicBaseURL != "" {
		u, err := url.Parse(e.PublicBaseURL)
		if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			errs = append(errs, fmt.Errorf("PUBLIC_BASE_URL=%q: want an absolute http(s) URL without query", e.PublicBaseURL))
		}
	}
	return e, errors.Join(errs...)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Logger returns the functions' logger: JSON lines on stderr, which Lambda
// sends to CloudWatch Logs.
func (e Env) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: e.LogLevel}))
}

// awsConfig is the SDK configuration of a function.
func (e Env) awsConfig() aws.Config {
	return aws.Config{
		Region:      e.AWS.Region,
		Credentials: credentials.NewStaticCredentialsProvider(e.AWS.AccessKeyID, e.AWS.SecretAccessKey, e.AWS.SessionToken),
		Retryer:     dynamostore.Retryer,
		HTTPClient:  dynamostore.HTTPClient(),
	}
}

// DynamoDB returns the DynamoDB client, with the store's retry policy.
func DynamoDB(e Env) *dynamodb.Client {
	return dynamodb.NewFromConfig(e.awsConfig(), func(o *dynamodb.Options) {
		if e.AWS.DynamoDBEndpoint != "" {
			o.BaseEndpoint = aws.String(e.AWS.DynamoDBEndpoint)
		}
	})
}

// Service builds the elicitation service over the DynamoDB table, checking
// templates at creation with templates (the review page's Liquid engine;
// give the review handler the same one).
func Service(e Env, db *dynamodb.Client, templates *review.TemplateChecker) *elicitation.Service {
	return elicitation.NewService(elicitation.Config{
		Store:      dynamostore.New(db, e.Table, dynamostore.Options{}),
		MaxWait:    e.MaxWait,
		WaitMargin: e.WaitMargin,
		Retention:  e.Retention,
		Templates:  templates,
	})
}

// ReviewURL builds the review URL handed to the agent: PUBLIC_BASE_URL if
// set, else the API's own address from the request's API Gateway context
// (domain name, and the stage unless it is $default), else https and the
// request's Host.
func (e Env) ReviewURL(r *http.Request, id, key string) string {
	if e.PublicBaseURL != "" {
		return e.PublicBaseURL + review.Path(id, key)
	}
	if r != nil {
		if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.DomainName != "" {
			base := "https://" + rc.DomainName
			if rc.Stage != "" && rc.Stage != "$default" {
				base += "/" + url.PathEscape(rc.Stage)
			}
			return base + review.Path(id, key)
		}
	}
	if r != nil && r.Host != "" {
		return "https://" + r.Host + review.Path(id, key)
	}
	return review.Path(id, key)
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
// "GET /review/{id}/{key}") and answers 404 elsewhere, on any stage.
func Route(pattern string, h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(pattern, h)
	return stripStage(mux)
}

// Keyring reads the page-token keyring: TOKEN_KEYS, or the secret named by
// TOKEN_SECRET_ARN (read once, at start-up). It is a function rather than a
// method of Env so that the MCP function, which needs no keyring, does not
// link the Secrets Manager client (text/template and Liquid make the linker
// keep every exported method of reachable types).
func Keyring(ctx context.Context, e Env) (*pagetoken.Keyring, error) {
	text := e.TokenKeys
	if text == "" {
		if e.TokenSecretARN == "" {
			return nil, errors.New("neither TOKEN_SECRET_ARN nor TOKEN_KEYS is set: the review page cannot sign its tokens")
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		sm := secretsmanager.NewFromConfig(e.awsConfig(), func(o *secretsmanager.Options) {
			if e.AWS.SecretsManagerEndpoint != "" {
				o.BaseEndpoint = aws.String(e.AWS.SecretsManagerEndpoint)
			}
		})
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(e.TokenSecretARN)})
		if err != nil {
			return nil, fmt.Errorf("read the page-token secret %s: %w", e.TokenSecretARN, err)
		}
		text = aws.ToString(out.SecretString)
	}
	k, err := ParseKeyring(text)
	if err != nil {
		return nil, fmt.Errorf("page-token keyring: %w", err)
	}
	return k, nil
}

// InitialKeyID is the key id of a bare secret: the value Secrets Manager
// generates when the stack is created.
const InitialKeyID = "k0"

// ParseKeyring reads the token secret's value: keyring text
// ("k1:NEWBASE64,k0:OLDBASE64", the first key current), or a bare base64
// secret, which is the key InitialKeyID (so that "k1:NEW,k0:<the old bare
// value>" rotates it).
func ParseKeyring(text string) (*pagetoken.Keyring, error) {
	text = strings.TrimSpace(text)
	if text != "" && !strings.ContainsAny(text, ":,") {
		text = InitialKeyID + ":" + text
	}
	return pagetoken.ParseKeyring(text)
}
