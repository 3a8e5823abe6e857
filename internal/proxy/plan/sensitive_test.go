package plan

import (
	"slices"
	"testing"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"api_key":          {"api", "key"},
		"apiKey":           {"api", "key"},
		"APIKey":           {"api", "key"},
		"X-API-Key":        {"x", "api", "key"},
		"client-secret":    {"client", "secret"},
		"max_tokens":       {"max", "tokens"},
		"oauth2Token":      {"oauth", "2", "token"},
		"The API token.":   {"the", "api", "token"},
		"":                 nil,
		"__":               nil,
		"HTTPServerURL":    {"http", "server", "url"},
		"Ünïcode_Straße":   {"ünïcode", "straße"},
		"password":         {"password"},
		"userPasswordHash": {"user", "password", "hash"},
	}
	for in, want := range tests {
		if got := Tokens(in); !slices.Equal(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDefaultMatcher(t *testing.T) {
	t.Parallel()
	m := newSensitiveMatcher(DefaultNameMarkers, DefaultSchemaMarkers)
	tests := []struct {
		name string
		prop Property
		want bool
	}{
		// True positives by name.
		{"api_key", Property{}, true},
		{"apiKey", Property{}, true},
		{"APIKey", Property{}, true},
		{"x-api-key", Property{}, true},
		{"apikey", Property{}, true},
		{"client-secret", Property{}, true},
		{"clientSecret", Property{}, true},
		{"password", Property{}, true},
		{"db_password", Property{}, true},
		{"passphrase", Property{}, true},
		{"access_token", Property{}, true},
		{"refreshToken", Property{}, true},
		{"token", Property{}, true},
		{"AWS_SECRET_ACCESS_KEY", Property{}, true},
		{"private_key", Property{}, true},
		{"credentials", Property{}, true},
		{"Authorization", Property{}, true},
		{"session_cookie", Property{}, true},
		{"card_number", Property{}, true},
		{"cvv", Property{}, true},
		{"passwords", Property{}, true},
		{"client_secrets", Property{}, true},
		{"api_keys", Property{}, true},
		{"privateKeys", Property{}, true},
		{"session_cookies", Property{}, true},
		{"value", Property{Description: "The API keys to use"}, true},
		// The Python original's cases (test_sensitive_required_policy.py).
		{"passphrase", Property{}, true},
		{"session_token", Property{}, true},
		{"credential_id", Property{}, true},
		{"payment_method", Property{}, true},
		{"credit_card", Property{}, true},
		{"creditCardNumber", Property{}, true},
		{"cards", Property{}, true},
		{"auth", Property{Format: "password"}, true},
		{"auth", Property{Description: "OAuth access token to use."}, true},
		{"auth", Property{Title: "API key"}, true},
		{"auth", Property{Description: "Bearer token used for the upstream request."}, true},
		{"auth", Property{Title: "Private key"}, true},
		{"source", Property{Description: "Card to charge"}, true},
		{"method", Property{Title: "Payment method"}, true},
		{"project", Property{Title: "Project", Description: "Project identifier."}, false},
		// True positives by schema.
		{"value", Property{Format: "password"}, true},
		{"value", Property{Description: "Your GitHub personal access token."}, true},
		{"value", Property{Title: "API Key"}, true},
		{"auth", Property{Description: "The client secret issued by the provider"}, true},
		{"pin", Property{WriteOnly: true}, true},
		// Written as one word, which the original's substring matching
		// blocks too: a multi-word marker run together, or a marker of five
		// letters or more ending the word.
		{"accesstoken", Property{}, true},
		{"authtoken", Property{}, true},
		{"clientsecret", Property{}, true},
		{"clientsecrets", Property{}, true},
		{"privatekey", Property{}, true},
		{"secretkey", Property{}, true},
		{"accesskey", Property{}, true},
		{"userpassword", Property{}, true},
		{"DBPASSWORD", Property{}, true},
		{"creditcard", Property{}, true},
		{"cardnumber", Property{}, true},
		{"sessioncookie", Property{}, true},
		{"value", Property{Description: "The ngrok authtoken"}, true},
		// False positives of substring matching.
		{"maxtokens", Property{}, false},
		{"wildcard", Property{}, false},
		{"postcard", Property{}, false},
		{"keyring", Property{}, false},
		{"max_tokens", Property{}, false},
		{"maxTokens", Property{}, false},
		{"tokenizer", Property{}, false},
		{"discard", Property{}, false},
		{"cardinality", Property{}, false},
		{"scorecard", Property{}, false},
		{"cardinality_hint", Property{Description: "Expected cardinality"}, false},
		{"scorecard_id", Property{Title: "Scorecard"}, false},
		{"keyboard", Property{}, false},
		{"monkey", Property{}, false},
		{"secretary", Property{}, false},
		{"passage", Property{}, false},
		{"compass", Property{}, false},
		{"bypass", Property{}, false},
		{"author", Property{}, false},
		{"key", Property{}, false},
		{"sort_key", Property{}, false},
		{"message", Property{}, false},
		{"query", Property{Description: "Search query. Counts toward the tokens budget."}, false},
		{"limit", Property{Title: "Max tokens", Description: "Maximum number of tokens to generate"}, false},
		{"model", Property{Description: "Tokenizer name"}, false},
		{"url", Property{Format: "uri"}, false},
	}
	for _, tt := range tests {
		marker, got := m.Match(tt.name, tt.prop)
		if got != tt.want {
			t.Errorf("Match(%q, %+v) = %v (marker %q), want %v", tt.name, tt.prop, got, marker, tt.want)
		}
	}
}

func TestConfiguredMarkers(t *testing.T) {
	t.Parallel()
	m := newSensitiveMatcher([]string{"message", "  ", "accountNumber"}, []string{"do not share"})
	tests := []struct {
		name string
		prop Property
		want string
	}{
		{"message", Property{}, "message"},
		{"Message", Property{}, "message"},
		{"account_number", Property{}, "account number"},
		{"note", Property{Description: "Do NOT share this value"}, "do not share"},
	}
	for _, tt := range tests {
		marker, ok := m.Match(tt.name, tt.prop)
		if !ok || marker != tt.want {
			t.Errorf("Match(%q) = %q, %v; want %q, true", tt.name, marker, ok, tt.want)
		}
	}
	if _, ok := m.Match("password", Property{}); ok {
		t.Errorf("a matcher without default markers matched password")
	}
	var zero *Matcher
	if _, ok := zero.Match("password", Property{}); ok {
		t.Errorf("nil matcher matched")
	}
}
