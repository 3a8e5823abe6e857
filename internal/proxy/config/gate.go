package config

// The human gate's configuration (docs/gate.md): confirm_if, ambiguous_if,
// policies.confirm_destructive, elicitation.fallback_on_unsupported:
// review_page and the elicitation_service block. Every key here is an
// extension of the Python original and off unless configured; confirm_if's
// always, ambiguous_if's query_min_length and generic_terms keep the
// original's names and meaning.

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// FallbackReviewPage is the value of elicitation.fallback_on_unsupported that
// sends a client without form elicitation to the elicitation service's review
// page instead of a structured error.
const FallbackReviewPage = "review_page"

// fallbacks are the supported values of elicitation.fallback_on_unsupported.
var fallbacks = []string{FallbackStructuredError, FallbackReviewPage}

// Defaults of the elicitation_service block.
const (
	DefaultWaitSeconds    = 20
	DefaultTimeoutSeconds = 3600
	// DefaultAmbiguityField is the argument ambiguous_if inspects when its
	// field is not set.
	DefaultAmbiguityField = "query"
	// DefaultMaxCandidates bounds the options a candidate source offers.
	DefaultMaxCandidates = 50
)

// ElicitationService is where the gate asks a human when the host cannot:
// exactly one of URL (a running elicitation service) and Embedded (one the
// proxy starts itself) is set.
type ElicitationService struct {
	// URL is the service's MCP endpoint (streamable HTTP).
	URL string
	// APIKeyEnv names the environment variable holding the bearer API key
	// for URL; the proxy's main reads it.
	APIKeyEnv string
	Embedded  *EmbeddedService
	// Reviewers names who may decide the gate's review requests (e-mail
	// addresses and group:NAME entries, as elicit_approval's reviewers):
	// it needs reviewer sign-in on the service.
	Reviewers []string
	// WaitSeconds is how long one tool call waits for the reviewer before
	// it returns elicitation_pending.
	WaitSeconds int
	// TimeoutSeconds is each review request's lifetime.
	TimeoutSeconds int
	// Line is where the block starts, for messages about it.
	Line int
}

// EmbeddedService is an elicitation service inside the proxy process.
type EmbeddedService struct {
	// Listen is the address its review pages are served on.
	Listen string
	// PublicURL is the base of review URLs as the reviewer reaches them;
	// default http://<Listen>.
	PublicURL string
	// DataDir holds its embedded store; empty means in memory only for
	// the process's lifetime (a temporary directory).
	DataDir string
	// SignIn, when set, makes reviewers sign in with OpenID Connect
	// before a review page shows or takes a decision.
	SignIn *SignIn
}

// SignIn is the embedded service's reviewer sign-in (internal/reviewauth).
type SignIn struct {
	Issuer   string
	ClientID string
	// ClientSecretEnv names the environment variable holding the client
	// secret; the proxy's main reads it.
	ClientSecretEnv string
	// GroupsClaim is the claim listing a reviewer's groups (for
	// reviewers named group:NAME); default "groups".
	GroupsClaim string
}

// ConfirmDestructive is policies.confirm_destructive: every tool whose own
// annotations say it may destroy (destructiveHint not false and readOnlyHint
// not true, as the MCP specification's defaults read) needs a human's
// approval.
type ConfirmDestructive struct {
	Enabled bool
}

// Confirm is a tool's confirm_if: the call needs a human's approval when
// Always is set or any of Arguments holds.
type Confirm struct {
	Always    bool
	Arguments []Condition
	// Message is what the reviewer is asked; empty means the default.
	Message string
}

// Active reports whether the tool has any confirmation rule.
func (c *Confirm) Active() bool { return c != nil && (c.Always || len(c.Arguments) > 0) }

// Condition is one argument test of confirm_if.arguments. Exactly one test
// is set.
type Condition struct {
	Field string
	// Present holds when the argument is given and not blank.
	Present bool
	// Equals holds when the argument equals one of the values (YAML
	// scalars; numbers compare as numbers).
	Equals []any
	// Matches holds when the argument is a string matching the pattern.
	Matches *regexp.Regexp
	// Above and Below hold for numbers strictly above or below them.
	Above, Below *float64
}

// Ambiguity is a tool's ambiguous_if: the call's Field argument is
// ambiguous when it is a string shorter than QueryMinLength (after
// trimming) or equal, ignoring case, to one of GenericTerms.
type Ambiguity struct {
	QueryMinLength int
	GenericTerms   []string
	// Field is the argument inspected; default "query".
	Field string
	// Message is what the human is asked; empty means the default.
	Message    string
	Candidates *Candidates
}

// Active reports whether any ambiguity test is configured.
func (a *Ambiguity) Active() bool {
	return a != nil && (a.QueryMinLength > 0 || len(a.GenericTerms) > 0)
}

// Candidates is an upstream tool whose result lists what an ambiguous
// argument could mean: the human picks one and its Value is merged into the
// call's Argument.
type Candidates struct {
	Tool string
	// Arguments are passed to Tool as given.
	Arguments map[string]any
	// Pass copies the call's arguments into Tool's: Tool's argument name
	// to the call's.
	Pass map[string]string
	// Items is the dot path, in the result ({content, structuredContent}),
	// of the list of candidates, for example "structuredContent.items"
	// or "content".
	Items string
	// ID, Label and Value name the keys of each candidate: its unique id,
	// what the human sees, and what is merged (default: the id).
	ID, Label, Value string
	// Argument receives the pick; default the ambiguous field.
	Argument string
	// Max bounds the options shown.
	Max int
}

func decodeFallback(v *yaml.Node, p string, dst *string) error {
	if err := str(v, p, dst); err != nil || slices.Contains(fallbacks, *dst) {
		return err
	}
	return errAt(v, p, fmt.Sprintf("unsupported value %q; use one of %s", *dst, strings.Join(fallbacks, ", ")))
}

func decodeElicitationService(n *yaml.Node, path string) (*ElicitationService, error) {
	s := &ElicitationService{WaitSeconds: DefaultWaitSeconds, TimeoutSeconds: DefaultTimeoutSeconds, Line: n.Line}
	err := strict().mapping(n, path, keys{
		"url":             urlKey(&s.URL),
		"api_key_env":     envKey(&s.APIKeyEnv),
		"reviewers":       func(v *yaml.Node, p string) error { return strList(v, p, &s.Reviewers, nonBlank) },
		"wait_seconds":    func(v *yaml.Node, p string) error { return intIn(v, p, &s.WaitSeconds, 1, 300) },
		"timeout_seconds": func(v *yaml.Node, p string) error { return intIn(v, p, &s.TimeoutSeconds, 60, 86400) },
		"embedded": func(v *yaml.Node, p string) error {
			e := &EmbeddedService{}
			s.Embedded = e
			err := strict().mapping(v, p, keys{
				"listen":     strKey(&e.Listen),
				"public_url": urlKey(&e.PublicURL),
				"data_dir":   strKey(&e.DataDir),
				"sign_in": func(v *yaml.Node, p string) error {
					e.SignIn = &SignIn{GroupsClaim: "groups"}
					return decodeSignIn(v, p, e.SignIn)
				},
			})
			if err == nil && e.Listen == "" {
				err = errAt(v, p, "listen is required: the address the review pages are served on, such as 127.0.0.1:8081")
			}
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	switch {
	case s.URL != "" && s.Embedded != nil:
		return nil, errAt(n, path, "set exactly one of url and embedded, not both")
	case s.URL == "" && s.Embedded == nil:
		return nil, errAt(n, path, "set url (a running elicitation service's MCP endpoint) or embedded (a service inside the proxy)")
	case s.APIKeyEnv != "" && s.URL == "":
		return nil, errAt(n, path+".api_key_env", "is only valid with url")
	case len(s.Reviewers) > 0 && s.Embedded != nil && s.Embedded.SignIn == nil:
		return nil, errAt(n, path+".reviewers", "needs embedded.sign_in: without sign-in a review page cannot tell who opened it, and whoever holds the review URL decides")
	}
	return s, nil
}

func decodeSignIn(n *yaml.Node, path string, si *SignIn) error {
	err := strict().mapping(n, path, keys{
		"issuer":            urlKey(&si.Issuer),
		"client_id":         strKey(&si.ClientID),
		"client_secret_env": envKey(&si.ClientSecretEnv),
		"groups_claim":      strKey(&si.GroupsClaim),
	})
	switch {
	case err != nil:
		return err
	case si.Issuer == "":
		return errAt(n, path, "issuer is required: the OpenID Connect issuer reviewers sign in with")
	case si.ClientID == "":
		return errAt(n, path, "client_id is required: this proxy's client id at the issuer (register <public_url>/review/oidc/callback as its redirect URI)")
	}
	return nil
}

// strKey decodes a non-blank string into dst.
func strKey(dst *string) func(*yaml.Node, string) error {
	return func(v *yaml.Node, p string) error { return str(v, p, dst) }
}

// urlKey decodes an http:// or https:// URL into dst.
func urlKey(dst *string) func(*yaml.Node, string) error {
	return func(v *yaml.Node, p string) error {
		if err := str(v, p, dst); err != nil {
			return err
		}
		if u, err := url.Parse(*dst); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errAt(v, p, fmt.Sprintf("%q is not an http:// or https:// URL", *dst))
		}
		return nil
	}
}

// envKey decodes the name of an environment variable into dst.
func envKey(dst *string) func(*yaml.Node, string) error {
	return func(v *yaml.Node, p string) error {
		if err := str(v, p, dst); err != nil {
			return err
		}
		return envName(v, p, *dst)
	}
}

func envName(v *yaml.Node, p, name string) error {
	if !envNameRE.MatchString(name) {
		return errAt(v, p, fmt.Sprintf("%q is not a valid environment variable name", name))
	}
	return nil
}

func intIn(v *yaml.Node, p string, dst *int, lo, hi int) error {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" {
		return errAt(v, p, fmt.Sprintf("must be a whole number, not %s", kindName(v)))
	}
	var n int
	if err := v.Decode(&n); err != nil || n < lo || n > hi {
		return errAt(v, p, fmt.Sprintf("must be between %d and %d", lo, hi))
	}
	*dst = n
	return nil
}

// decodeConfirm reads confirm_if. Its own keys, like the rest of a tool's
// section in the original, warn when unknown (refused with strict); its
// conditions are the port's and always strict.
func decodeConfirm(d *decoder, n *yaml.Node, path string) (*Confirm, error) {
	c := &Confirm{}
	err := d.mapping(n, path, keys{
		"always":  func(v *yaml.Node, p string) error { return boolean(v, p, &c.Always) },
		"message": strKey(&c.Message),
		"arguments": func(v *yaml.Node, p string) error {
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				return errAt(v, p, "must be a non-empty list of conditions such as {field: path, matches: \"^/etc/\"}")
			}
			for i, item := range v.Content {
				cond, err := decodeCondition(item, fmt.Sprintf("%s[%d]", p, i))
				if err != nil {
					return err
				}
				c.Arguments = append(c.Arguments, cond)
			}
			return nil
		},
	})
	return c, err
}

var conditionTests = []string{"above", "below", "equals", "matches", "present"}

// decodeCondition reads one condition of confirm_if.arguments: field and
// one test (above and below together make a range).
func decodeCondition(n *yaml.Node, path string) (Condition, error) {
	var c Condition
	tests := 0
	counted := func(read func(*yaml.Node, string) error) func(*yaml.Node, string) error {
		return func(v *yaml.Node, p string) error { tests++; return read(v, p) }
	}
	err := strict().mapping(n, path, keys{
		"field":   strKey(&c.Field),
		"present": counted(func(v *yaml.Node, p string) error { return conditionPresent(v, p, &c.Present) }),
		"equals":  counted(func(v *yaml.Node, p string) error { return conditionEquals(v, p, &c.Equals) }),
		"matches": counted(func(v *yaml.Node, p string) error { return conditionMatches(v, p, &c.Matches) }),
		"above":   counted(func(v *yaml.Node, p string) error { return conditionNumber(v, p, &c.Above) }),
		"below":   counted(func(v *yaml.Node, p string) error { return conditionNumber(v, p, &c.Below) }),
	})
	if err != nil {
		return c, err
	}
	return c, checkCondition(n, path, c, tests)
}

// checkCondition refuses a condition without a field, without a test or
// with more than one (but a range).
func checkCondition(n *yaml.Node, path string, c Condition, tests int) error {
	switch {
	case c.Field == "":
		return errAt(n, path, "field is required: the argument the condition tests")
	case tests == 0:
		return errAt(n, path, "needs one test: "+strings.Join(conditionTests, ", "))
	case tests > 1 && !(tests == 2 && c.Above != nil && c.Below != nil):
		return errAt(n, path, "has more than one test; list each as its own condition (above and below together make a range)")
	}
	return nil
}

// conditionNumber reads above or below: a YAML number.
func conditionNumber(v *yaml.Node, p string, dst **float64) error {
	if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") {
		return errAt(v, p, fmt.Sprintf("must be a number, not %s", kindName(v)))
	}
	var f float64
	if err := v.Decode(&f); err != nil {
		return errAt(v, p, "must be a number")
	}
	*dst = &f
	return nil
}

// conditionPresent reads present: only true is a condition.
func conditionPresent(v *yaml.Node, p string, dst *bool) error {
	if err := boolean(v, p, dst); err != nil {
		return err
	}
	if !*dst {
		return errAt(v, p, "only present: true is a condition")
	}
	return nil
}

// conditionEquals reads equals: one scalar or a non-empty list of them.
func conditionEquals(v *yaml.Node, p string, dst *[]any) error {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	if len(items) == 0 {
		return errAt(v, p, "must not be an empty list")
	}
	for i, item := range items {
		if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
			return errAt(item, fmt.Sprintf("%s[%d]", p, i), fmt.Sprintf("must be a string, number or boolean, not %s", kindName(item)))
		}
		var x any
		if err := item.Decode(&x); err != nil {
			return errAt(item, p, "cannot be read: "+err.Error())
		}
		*dst = append(*dst, x)
	}
	return nil
}

// conditionMatches reads matches: a regular expression.
func conditionMatches(v *yaml.Node, p string, dst **regexp.Regexp) error {
	var s string
	if err := str(v, p, &s); err != nil {
		return err
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return errAt(v, p, "is not a valid regular expression: "+strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	*dst = re
	return nil
}

// decodeAmbiguity reads ambiguous_if; unknown keys warn as in
// decodeConfirm, candidates is strict.
func decodeAmbiguity(d *decoder, n *yaml.Node, path string) (*Ambiguity, error) {
	a := &Ambiguity{Field: DefaultAmbiguityField}
	err := d.mapping(n, path, keys{
		"query_min_length": func(v *yaml.Node, p string) error {
			if isNull(v) { // the original's "not set"
				return nil
			}
			return intIn(v, p, &a.QueryMinLength, 1, 10000)
		},
		"generic_terms": func(v *yaml.Node, p string) error { return strList(v, p, &a.GenericTerms, nonBlank) },
		"field":         strKey(&a.Field),
		"message":       strKey(&a.Message),
		"candidates": func(v *yaml.Node, p string) error {
			c, err := decodeCandidates(v, p)
			a.Candidates = c
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	if a.Candidates != nil && !a.Active() {
		return nil, errAt(n, path, "candidates needs a test that finds the argument ambiguous: query_min_length or generic_terms")
	}
	if a.Candidates != nil && a.Candidates.Argument == "" {
		a.Candidates.Argument = a.Field
	}
	return a, nil
}

func decodeCandidates(n *yaml.Node, path string) (*Candidates, error) {
	c := &Candidates{Max: DefaultMaxCandidates}
	err := strict().mapping(n, path, keys{
		"tool":      strKey(&c.Tool),
		"arguments": func(v *yaml.Node, p string) error { return eachValue(strict(), v, p, &c.Arguments, anyValue) },
		"pass":      func(v *yaml.Node, p string) error { return eachValue(strict(), v, p, &c.Pass, str) },
		"items":     strKey(&c.Items),
		"id":        strKey(&c.ID),
		"label":     strKey(&c.Label),
		"value":     strKey(&c.Value),
		"argument":  strKey(&c.Argument),
		"max":       func(v *yaml.Node, p string) error { return intIn(v, p, &c.Max, 1, 500) },
	})
	if err != nil {
		return nil, err
	}
	for _, req := range []struct{ key, val string }{{"tool", c.Tool}, {"items", c.Items}, {"id", c.ID}} {
		if req.val == "" {
			return nil, errAt(n, path, req.key+" is required")
		}
	}
	if !strings.HasPrefix(c.Items, "content") && !strings.HasPrefix(c.Items, "structuredContent") {
		return nil, errAt(n, path+".items", fmt.Sprintf("%q must start with content or structuredContent (the parts of the tool's result)", c.Items))
	}
	if c.Label == "" {
		c.Label = c.ID
	}
	if c.Value == "" {
		c.Value = c.ID
	}
	return c, nil
}

// checkGate validates what needs the whole configuration: a review page
// needs an elicitation service. fallback is the fallback_on_unsupported
// value's node, nil when the key is absent.
func checkGate(fallback *yaml.Node, cfg *Config) error {
	if cfg.Elicitation.FallbackOnUnsupported == FallbackReviewPage && cfg.ElicitationService == nil {
		return errAt(fallback, "elicitation.fallback_on_unsupported",
			"review_page needs an elicitation_service block (url, or embedded) to create the review pages")
	}
	return nil
}
