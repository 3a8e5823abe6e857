package linktest

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

const module = "github.com/mcp-elicitation/elicitation/"

// Prefixes of import paths, by what they bring.
var (
	awsSDK = []string{"github.com/aws/aws-sdk-go-v2", "github.com/aws/smithy-go"}
	lambda = []string{"github.com/aws/aws-lambda-go", "github.com/awslabs/aws-lambda-go-api-proxy"}
	mcpSDK = []string{"github.com/modelcontextprotocol/"}
	openID = []string{"github.com/coreos/go-oidc"}
	// The authorization server for MCP clients and the OAuth framework it
	// is built on.
	oauthServer = []string{"github.com/zitadel/", "github.com/mcp-elicitation/elicitation/internal/authserver"}
	everyAWS    = slices.Concat(awsSDK, lambda)
	// The SDK's default configuration loader and the credential chain it
	// brings (SSO, SSO-OIDC, STS, IMDS, processes): a function builds its
	// clients from the Lambda environment (internal/lambdaconfig).
	credChain = []string{"github.com/aws/aws-sdk-go-v2/config", "github.com/aws/aws-sdk-go-v2/service/sso", "github.com/aws/aws-sdk-go-v2/service/sts",
		"github.com/aws/aws-sdk-go-v2/service/signin", "github.com/aws/aws-sdk-go-v2/credentials/"}
	nonStdlib = []string{"."} // any path with a dot in its first element: not the standard library
)

// row is a binary (or a package that promises to stay small) and the
// import prefixes it must not link, with why.
type row struct {
	pkg  string
	deny []string
	why  string
}

// allowed lists, per package, the prefixes it links by design that a
// deny prefix of its row would match.
var allowed = map[string][]string{
	"internal/elicitation": {"github.com/gowebpki/jcs"},
}

// forbidden is the table.
var forbidden = []row{
	{"cmd/mcp-elicitation-proxy", everyAWS, "the proxy's embedded service uses the embedded store only (compose/embeddedstore)"},
	{"cmd/elicitation", lambda, "the local server needs no Lambda runtime or API Gateway adapter (DynamoDB through the AWS SDK is its own option)"},
	{"cmd/elicitation-bench", everyAWS, "the load generator talks MCP over HTTP"},
	{"cmd/mcp-elicitation-proxy", oauthServer, "the proxy's embedded service takes no OAuth tokens: the MCP endpoint links accesstoken's interface, not the server"},
	{"internal/compose/mcpendpoint", oauthServer, "the MCP endpoint verifies through accesstoken.Verifier; the binary that serves OAuth hands it the server"},
	{"functions/mcp", openID, "reviewer sign-in is the review and submit functions' (compose/signin)"},
	{"functions/review", mcpSDK, "the review page is plain HTTP"},
	{"functions/submit", mcpSDK, "the submission endpoint is plain HTTP"},
	{"functions/notify", mcpSDK, "notifications are sent over HTTP and SMTP"},
	{"functions/oauth", mcpSDK, "the authorization server and the protected-resource metadata are plain HTTP (authserver.ResourceMetadata)"},
	{"functions/mcp", credChain, "a function's AWS clients come from the Lambda environment (lambdaconfig), not config.LoadDefaultConfig"},
	{"functions/review", credChain, "a function's AWS clients come from the Lambda environment (lambdaconfig), not config.LoadDefaultConfig"},
	{"functions/submit", credChain, "a function's AWS clients come from the Lambda environment (lambdaconfig), not config.LoadDefaultConfig"},
	{"functions/oauth", credChain, "a function's AWS clients come from the Lambda environment (lambdaconfig), not config.LoadDefaultConfig"},
	{"functions/notify", credChain, "a function's AWS clients come from the Lambda environment (lambdaconfig), not config.LoadDefaultConfig"},
	// Packages every deployment shares.
	{"internal/compose", slices.Concat(everyAWS, mcpSDK, openID), "the composition is deployment-neutral: the Lambda side (internal/lambdaconfig) and the MCP part (compose/mcpendpoint) add theirs"},
	{"internal/compose/embeddedstore", everyAWS, "what the proxy opens its embedded store with"},
	{"internal/elicitation", nonStdlib, "the domain imports only the standard library and the RFC 8785 canonicalizer (a standing approval's constrained values compare canonically)"},
	{"receipt", slices.Concat([]string{module + "internal/"}, everyAWS, mcpSDK, openID), "the verifier third parties import links no part of the service: go-jose and the RFC 8785 canonicalizer only"},
}

// deps lists what pkg links, as go list -deps prints it.
func deps(t *testing.T, root, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./"+pkg)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./%s: %v\n%s", pkg, err, stderr.String())
	}
	return strings.Fields(string(out))
}

func TestEachBinaryLinksWhatItUses(t *testing.T) {
	root := testenv.Root(t)
	for _, row := range forbidden {
		t.Run(row.pkg, func(t *testing.T) {
			all := deps(t, root, row.pkg)
			if len(all) == 0 || all[len(all)-1] != module+row.pkg {
				t.Fatalf("go list -deps ./%s does not end with the package itself: %q", row.pkg, all)
			}
			for _, d := range all {
				if slices.ContainsFunc(allowed[row.pkg], func(a string) bool { return strings.HasPrefix(d, a) }) {
					continue
				}
				for _, p := range row.deny {
					if denied(d, p) {
						t.Errorf("%s links %s (forbidden prefix %q): %s", row.pkg, d, p, row.why)
						break
					}
				}
			}
		})
	}
}

// denied reports whether the linked package d matches the forbidden prefix
// p: "." matches any package outside the standard library and this module.
func denied(d, p string) bool {
	if p == "." {
		return !strings.HasPrefix(d, module) && strings.Contains(strings.Split(d, "/")[0], ".")
	}
	return strings.HasPrefix(d, p)
}

// TestEveryBinaryHasARow keeps the table whole: a new cmd/* or
// functions/* needs its row.
func TestEveryBinaryHasARow(t *testing.T) {
	root := testenv.Root(t)
	cmd := exec.Command("go", "list", "./cmd/...", "./functions/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(p, module)
		if !slices.ContainsFunc(forbidden, func(r row) bool { return r.pkg == rel }) {
			t.Errorf("%s has no row in the table of forbidden imports", rel)
		}
	}
}
