package clientreg

import (
	"strings"
	"testing"
)

func TestCheckRedirectURI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		uri  string
		kind redirectKind
		err  string // a word of the error; "" for accepted
	}{
		{"https://app.example.com/callback", redirectHTTPS, ""},
		{"https://app.example.com:8443/cb?x=1", redirectHTTPS, ""},
		{"HTTPS://App.Example.com/cb", redirectHTTPS, ""},
		{"http://127.0.0.1/callback", redirectLoopback, ""},
		{"http://127.0.0.1:33418/callback", redirectLoopback, ""},
		{"http://[::1]:8080/cb", redirectLoopback, ""},
		{"http://localhost:6274/oauth/callback", redirectLoopback, ""},
		{"com.example.app:/oauth2redirect", redirectPrivateUse, ""},
		{"com.example.app://callback", redirectPrivateUse, ""},
		{"", 0, "empty"},
		{"/callback", 0, "absolute"},
		{"callback", 0, "absolute"},
		{"//app.example.com/cb", 0, "absolute"},
		{"https://app.example.com/cb#frag", 0, "fragment"},
		{"https://app.example.com/cb#", 0, "fragment"},
		{"https://user:pw@app.example.com/cb", 0, "user information"},
		{"https://user@app.example.com/cb", 0, "user information"},
		{"http://127.0.0.1@evil.example/cb", 0, "user information"},
		{"https://*.example.com/cb", 0, "wildcard"},
		{"https://app.example.com/*", 0, "wildcard"},
		{"https:///cb", 0, "host"},
		{"https:app.example.com", 0, "host"},
		{"http://app.example.com/cb", 0, "loopback"},
		{"http://127.0.0.2/cb", 0, "loopback"},
		{"http://10.0.0.1/cb", 0, "loopback"},
		{"http://localhost.evil.example/cb", 0, "loopback"},
		{"javascript:alert(1)", 0, "javascript"},
		{"JavaScript:alert(1)", 0, "javascript"},
		{"data:text/html,<script>alert(1)</script>", 0, "data"},
		{"file:///etc/passwd", 0, "file"},
		{"myapp://callback", 0, "reverse-domain"},
		{"cursor:/cb", 0, "reverse-domain"},
		{"https://app.example.com/c b", 0, "white space"},
		{"https://app.example.com/cb\n", 0, "white space"},
		{"https://app.example.com/" + strings.Repeat("a", maxRedirectURI), 0, "longer"},
	}
	for _, tt := range tests {
		kind, err := classifyRedirect(tt.uri)
		if tt.err == "" {
			if err != nil || kind != tt.kind {
				t.Errorf("classifyRedirect(%q) = %v, %v; want %v, nil", tt.uri, kind, err, tt.kind)
			}
			if err := CheckRedirectURI(tt.uri); err != nil {
				t.Errorf("CheckRedirectURI(%q) = %v", tt.uri, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("classifyRedirect(%q) = %v, %v; want an error about %q", tt.uri, kind, err, tt.err)
		}
		if CheckRedirectURI(tt.uri) == nil {
			t.Errorf("CheckRedirectURI(%q) accepted it", tt.uri)
		}
	}
}

func TestClientRedirects(t *testing.T) {
	t.Parallel()
	c := Client{RedirectURIs: []string{
		"http://127.0.0.1/callback",
		"https://app.example.com/cb",
		"com.example.app:/oauth2redirect",
	}}
	tests := []struct {
		uri  string
		host string // "" when not allowed
	}{
		{"http://127.0.0.1/callback", "127.0.0.1"},
		{"http://127.0.0.1:51004/callback", "127.0.0.1"},
		{"http://127.0.0.1:51004/other", ""},
		{"http://127.0.0.1:51004/callback?x=1", ""},
		{"http://localhost:51004/callback", ""},
		{"https://app.example.com/cb", "app.example.com"},
		{"https://app.example.com:444/cb", ""},
		{"https://app.example.com/cb/", ""},
		{"https://app.example.com/cb?next=evil", ""},
		{"com.example.app:/oauth2redirect", "com.example.app:"},
		{"com.example.app:/other", ""},
		{"https://evil.example/cb", ""},
	}
	for _, tt := range tests {
		if got := c.AllowsRedirect(tt.uri); got != (tt.host != "") {
			t.Errorf("AllowsRedirect(%q) = %v", tt.uri, got)
		}
		if got := c.RedirectHost(tt.uri); got != tt.host {
			t.Errorf("RedirectHost(%q) = %q, want %q", tt.uri, got, tt.host)
		}
	}
}

func TestCheckSecret(t *testing.T) {
	t.Parallel()
	c := Client{AuthMethod: AuthSecretBasic, SecretHash: HashSecret("s3cret-value")}
	if !c.CheckSecret("s3cret-value") {
		t.Error("the right secret was refused")
	}
	for _, s := range []string{"", "s3cret-valuE", "s3cret-value ", c.SecretHash} {
		if c.CheckSecret(s) {
			t.Errorf("CheckSecret(%q) accepted a wrong secret", s)
		}
	}
	public := Client{AuthMethod: AuthNone, SecretHash: HashSecret("x")}
	if public.CheckSecret("x") {
		t.Error("a public client accepted a secret")
	}
	if (Client{AuthMethod: AuthSecretPost}).CheckSecret("") {
		t.Error("a client with no hash accepted the empty secret")
	}
}
