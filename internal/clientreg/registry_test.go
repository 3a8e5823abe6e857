package clientreg

import (
	"errors"
	"strings"
	"testing"
)

func TestNewRefusesBadOperatorClients(t *testing.T) {
	t.Parallel()
	good := Client{ID: "ops-cli", RedirectURIs: []string{"http://127.0.0.1/cb"}}
	tests := []struct {
		name    string
		clients []Client
		want    string
	}{
		{"no id", []Client{{RedirectURIs: good.RedirectURIs}}, "client_id"},
		{"id with a space", []Client{{ID: "a b", RedirectURIs: good.RedirectURIs}}, "client_id"},
		{"no redirect", []Client{{ID: "x"}}, "redirect_uris"},
		{"http redirect", []Client{{ID: "x", RedirectURIs: []string{"http://ops.example/cb"}}}, "loopback"},
		{"secret without hash", []Client{{ID: "x", RedirectURIs: good.RedirectURIs, AuthMethod: AuthSecretBasic}}, "client_secret_hash"},
		{"secret as hash", []Client{{ID: "x", RedirectURIs: good.RedirectURIs, AuthMethod: AuthSecretPost, SecretHash: "hunter2"}}, "client_secret_hash"},
		{"bad method", []Client{{ID: "x", RedirectURIs: good.RedirectURIs, AuthMethod: "private_key_jwt"}}, "private_key_jwt"},
		{"twice", []Client{good, good}, "twice"},
	}
	for _, tt := range tests {
		_, err := New(Config{Store: newMemStore(nil), Operator: tt.clients})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error about %q", tt.name, err, tt.want)
		}
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New without a store succeeded")
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	operator := []Client{
		{ID: "ops-cli", Name: "Ops CLI", RedirectURIs: []string{"http://127.0.0.1/cb"}},
		{ID: "ops-web", RedirectURIs: []string{"https://ops.example/cb"}, AuthMethod: AuthSecretBasic,
			SecretHash: HashSecret("operator-secret"), GrantTypes: []string{GrantAuthorizationCode}},
		// An operator's client wins over a metadata document at its URL.
		{ID: "https://ops.example/client.json", RedirectURIs: []string{"https://ops.example/cb"}},
	}
	r, store, _ := newTestRegistry(t, Config{Operator: operator})
	ctx := t.Context()

	cli, err := r.Lookup(ctx, "ops-cli")
	if err != nil || cli.Source != Operator || cli.Name != "Ops CLI" || !cli.HasGrant(GrantRefreshToken) {
		t.Errorf("ops-cli: %+v, %v", cli, err)
	}
	web, err := r.Lookup(ctx, "ops-web")
	if err != nil || !web.CheckSecret("operator-secret") || web.HasGrant(GrantRefreshToken) {
		t.Errorf("ops-web: %+v, %v", web, err)
	}
	if c, err := r.Lookup(ctx, "https://ops.example/client.json"); err != nil || c.Source != Operator {
		t.Errorf("an operator's URL id: %+v, %v", c, err)
	}

	for _, id := range []string{"", "nobody", "0123456789abcdef0123456789abcdef", strings.Repeat("x", 600), "http://example.com/doc"} {
		if _, err := r.Lookup(ctx, id); !errors.Is(err, ErrUnknownClient) {
			t.Errorf("Lookup(%.40q) = %v, want ErrUnknownClient", id, err)
		}
	}

	store.err = errors.New("store down")
	if _, err := r.Lookup(ctx, "0123456789abcdef0123456789abcdef"); err == nil || errors.Is(err, ErrUnknownClient) {
		t.Errorf("a store failure: %v, want it, not ErrUnknownClient", err)
	}
}

func TestRegisteredClientExpires(t *testing.T) {
	t.Parallel()
	r, _, clock := newTestRegistry(t, Config{ClientTTL: 24 * 3600e9})
	rec := post(r.RegisterHandler(), "192.0.2.1", "application/json", `{"redirect_uris":["https://a.example/cb"]}`)
	id := decodeID(t, rec.Body.Bytes())
	if _, err := r.Lookup(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	clock.Add(24 * 3600e9)
	if _, err := r.Lookup(t.Context(), id); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("after its TTL: %v, want ErrUnknownClient", err)
	}
}
