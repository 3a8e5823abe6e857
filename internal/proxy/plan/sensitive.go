// Sensitive fields: whether a tool argument looks like a credential or
// a secret, so that the proxy never asks a user to type one into a form.
//
// Matching works on tokens, not substrings: a name or text is split at
// punctuation, spaces, snake_case, kebab-case and camelCase boundaries and
// lower-cased, and a marker matches when its tokens appear consecutively.
// "api_key", "apiKey", "X-API-Key" and "client-secret" therefore match the
// markers "api key" and "secret", while "max_tokens", "tokenizer", "discard",
// "cardinality" and "scorecard" match nothing. A token written as one word
// matches a marker run together ("privatekey") or ending it, for a marker of
// five letters or more ("clientsecret", "accesstoken"), as the original's
// substring match does. The built-in markers are the
// Python original's (payment and card included) and more.

package plan

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultNameMarkers are matched against argument names.
var DefaultNameMarkers = []string{
	"password", "passwd", "passphrase", "passcode",
	"secret", "token",
	"api key", "apikey", "access key", "secret key", "private key", "signing key", "encryption key",
	"credential", "credentials",
	"authorization", "bearer", "cookie",
	"otp", "totp", "mfa code", "pin code",
	"ssn", "social security number",
	"payment", "card", "credit card", "card number", "cvv", "cvc",
}

// DefaultSchemaMarkers are matched against a property's title, description
// and format.
var DefaultSchemaMarkers = []string{
	"password", "passwd", "passphrase", "passcode",
	"secret", "token",
	"api key", "apikey", "access key", "secret key", "private key",
	"credential", "credentials", "bearer",
	"social security number", "payment", "card", "credit card", "card number", "cvv",
}

// Matcher reports whether a field is sensitive. The zero value matches
// nothing.
type Matcher struct {
	names  [][]string
	schema [][]string
}

// newSensitiveMatcher builds a matcher from marker phrases. Blank markers are ignored.
func newSensitiveMatcher(nameMarkers, schemaMarkers []string) *Matcher {
	return &Matcher{names: tokenizeAll(nameMarkers), schema: tokenizeAll(schemaMarkers)}
}

func tokenizeAll(markers []string) [][]string {
	out := make([][]string, 0, len(markers))
	for _, m := range markers {
		if t := Tokens(m); len(t) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// Property is what the matcher reads from a field's JSON Schema.
type Property struct {
	Title       string
	Description string
	Format      string
	// WriteOnly is JSON Schema's writeOnly, which marks values such as
	// passwords that are sent but never shown back.
	WriteOnly bool
}

// PropertyOf reads a Property from a decoded property schema.
func PropertyOf(schema map[string]any) Property {
	str := func(k string) string { s, _ := schema[k].(string); return s }
	wo, _ := schema["writeOnly"].(bool)
	return Property{Title: str("title"), Description: str("description"), Format: str("format"), WriteOnly: wo}
}

// Match reports whether the field name, or its schema's title, description or
// format, carries a marker, and returns the marker that matched.
func (m *Matcher) Match(name string, p Property) (marker string, ok bool) {
	if m == nil {
		return "", false
	}
	if mk, ok := matchAny(Tokens(name), m.names); ok {
		return mk, true
	}
	for _, text := range []string{p.Title, p.Description, p.Format} {
		if text == "" {
			continue
		}
		if mk, ok := matchAny(Tokens(text), m.schema); ok {
			return mk, true
		}
	}
	if p.WriteOnly {
		return "writeOnly", true
	}
	return "", false
}

func matchAny(tokens []string, markers [][]string) (string, bool) {
	for _, mk := range markers {
		if containsRun(tokens, mk) {
			return strings.Join(mk, " "), true
		}
	}
	return "", false
}

func containsRun(tokens, run []string) bool {
	last := len(run) - 1
	for _, tok := range tokens {
		if oneWord(tok, run) {
			return true
		}
	}
	for i := 0; i+len(run) <= len(tokens); i++ {
		match := true
		for j := range run {
			if tokens[i+j] != run[j] && (j != last || !plural(tokens[i+j], run)) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// oneWord reports whether the one token tok is the marker run written as
// one word: its words run together ("privatekey", "creditcard", plural
// too), or a one-word marker of five letters or more ending it
// ("clientsecret", "accesstoken", "userpassword"). Shorter markers ("card",
// "otp") end too many other words ("discard", "wildcard") to count so.
func oneWord(tok string, run []string) bool {
	w := strings.Join(run, "")
	if len(run) > 1 && (tok == w || plural(tok, []string{w})) {
		return true
	}
	if len(run) > 1 || utf8.RuneCountInString(w) < 5 || len(tok) <= len(w) {
		return false
	}
	return strings.HasSuffix(tok, w) || plural(tok[len(tok)-len(w)-1:], run)
}

// plural reports whether tok is the plural of run's last word ("passwords",
// "api_keys", "client_secrets"). The lone word "token" is the exception:
// "tokens" mostly counts text ("max_tokens", "num_tokens").
func plural(tok string, run []string) bool {
	w := run[len(run)-1]
	if len(run) == 1 && w == "token" {
		return false
	}
	return tok == w+"s"
}

// Tokens splits s into lower-case word tokens: at every character that is not
// a letter or digit, between a lower-case letter or digit and an upper-case
// letter ("apiKey"), at the end of an upper-case run followed by a lower-case
// letter ("APIKey" gives "api", "key"), and between letters and digits.
func Tokens(s string) []string {
	var tokens []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			tokens = append(tokens, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			switch {
			case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
				flush()
			case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
				flush()
			case unicode.IsDigit(r) != unicode.IsDigit(prev):
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return tokens
}
