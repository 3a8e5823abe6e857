package authserver_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/clientreg"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// The token and revocation endpoints look their client up before
// anything else, and a client id that is an https URL is a metadata
// document fetched on a cache miss: a flood of requests naming new
// documents, from one source, stops fetching at that source's bound
// (answered server_error, so that a real client keeps what it has), while
// another source's document is still fetched.
func TestDocumentFetchesBoundedPerSource(t *testing.T) {
	t.Parallel()
	var fetched atomic.Int64
	docs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "https://" + r.Host + r.URL.Path, "redirect_uris": []string{"http://127.0.0.1/cb"}})
	}))
	t.Cleanup(docs.Close)
	base := startDocAS(t, docs)
	refresh := func(source string, n int) (int, string) {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"fam.secret"}, "client_id": {fmt.Sprintf("%s/client/%s/%d", docs.URL, source, n)}}
		req, _ := http.NewRequest(http.MethodPost, base+authserver.TokenPath, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Test-Source", source)
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body(resp)
	}
	const flood = 200
	for n := range flood {
		refresh("flood", n)
	}
	if got := fetched.Load(); got >= flood || got == 0 {
		t.Fatalf("%d requests from one source naming new documents fetched %d of them, want a bound short of all", flood, got)
	}
	status, b := refresh("flood", flood)
	if status != http.StatusInternalServerError || !strings.Contains(b, `"server_error"`) {
		t.Fatalf("a request over the bound: %d %s, want 500 server_error", status, b)
	}
	before := fetched.Load()
	if status, b := refresh("other", 0); status != http.StatusBadRequest || !strings.Contains(b, `"invalid_grant"`) || fetched.Load() != before+1 {
		t.Fatalf("another source's document: %d %s (fetched %d more), want it fetched and the grant judged", status, b, fetched.Load()-before)
	}
}

// startDocAS starts an authorization server whose clients are clientreg's
// (as oauthpart composes them), fetching metadata documents from docs; it
// returns its base URL.
func startDocAS(t *testing.T, docs *httptest.Server) string {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(docs.Certificate())
	store := &granttest.Memory{}
	reg, err := clientreg.New(clientreg.Config{Store: store, Documents: clientreg.DocumentOptions{AllowInsecureLoopback: true, RootCAs: roots}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	srv, err := authserver.New(authserver.Config{
		Store: store,
		Clients: func(ctx context.Context, id string) (authserver.Client, error) {
			c, err := reg.Lookup(ctx, id)
			if clientreg.Unknown(err) {
				return authserver.Client{}, fmt.Errorf("%w: %w", authserver.ErrUnknownClient, err)
			}
			if err != nil {
				return authserver.Client{}, err
			}
			return authserver.Client{ID: c.ID, RedirectURIs: c.RedirectURIs, AuthMethod: c.AuthMethod, Refresh: true}, nil
		},
		Keys:     mustKeys(t, sealer.Key{ID: "k1", Secret: []byte(strings.Repeat("s", 32))}),
		Base:     func(*http.Request) string { return base },
		Insecure: true,
		Source:   func(r *http.Request) string { return r.Header.Get("X-Test-Source") },
	})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv.Handler(nil)
	ts.Start()
	t.Cleanup(ts.Close)
	return base
}

// The host of a client's metadata document down (5xx), when the cached
// copy has run out, is a 500 server_error at the token endpoint, which
// leaves the host its tokens; a document gone (404) is invalid_client,
// after which a host starts again.
func TestDocumentHostDown(t *testing.T) {
	t.Parallel()
	docs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(docs.Close)
	base := startDocAS(t, docs)
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/down", http.StatusInternalServerError, "server_error"},
		{"/gone", http.StatusUnauthorized, "invalid_client"},
	} {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"fam.secret"}, "client_id": {docs.URL + tc.path}}
		resp, err := noFollow.PostForm(base+authserver.TokenPath, form)
		if err != nil {
			t.Fatal(err)
		}
		b := body(resp)
		var e struct{ Error string }
		_ = json.Unmarshal([]byte(b), &e)
		if resp.StatusCode != tc.status || e.Error != tc.want || strings.Contains(b, "maintenance") {
			t.Errorf("refresh naming the document at %s: %d %s, want %d %s", tc.path, resp.StatusCode, b, tc.status, tc.want)
		}
	}
}
