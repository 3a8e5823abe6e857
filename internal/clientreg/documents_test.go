package clientreg

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// document is a valid client ID metadata document for the URL.
func document(url string) map[string]any {
	return map[string]any{
		"client_id":                  url,
		"client_name":                "Example MCP Client",
		"client_uri":                 "https://client.example",
		"redirect_uris":              []string{"http://127.0.0.1/callback", "https://client.example/cb"},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_method": "none",
		"logo_uri":                   "https://client.example/logo.png",
	}
}

// docServer is an https server of metadata documents, one per path, each
// document's client_id being its URL unless the handler says otherwise.
// It counts the requests it was sent.
type docServer struct {
	*httptest.Server
	hits    atomic.Int64
	release chan struct{} // closed when the test ends: the slow handlers return
}

func newDocServer(t *testing.T, tls bool) *docServer {
	t.Helper()
	s := &docServer{release: make(chan struct{})}
	mux := http.NewServeMux()
	serveJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	self := func(r *http.Request) string { return s.URL + r.URL.Path }
	mux.HandleFunc("/good", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=60")
		serveJSON(w, document(self(r)))
	})
	mux.HandleFunc("/no-store", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		serveJSON(w, document(self(r)))
	})
	mux.HandleFunc("/exactly-5k", func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(document(self(r)))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(b, strings.Repeat(" ", MaxDocument-len(b))...))
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		d := document(self(r))
		d["padding"] = strings.Repeat("x", 6<<10)
		serveJSON(w, d) // a Content-Length over the bound
	})
	mux.HandleFunc("/huge-chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"client_id":"` + self(r) + `","padding":"`))
		for range 12 {
			_, _ = w.Write([]byte(strings.Repeat("x", 1<<10)))
			w.(http.Flusher).Flush() // no Content-Length
		}
		_, _ = w.Write([]byte(`"}`))
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>client</html>"))
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"client_id": `))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/good", http.StatusFound)
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/mismatch", func(w http.ResponseWriter, r *http.Request) {
		serveJSON(w, document(s.URL+"/good"))
	})
	mux.HandleFunc("/secret", func(w http.ResponseWriter, r *http.Request) {
		d := document(self(r))
		d["client_secret"] = "shh"
		serveJSON(w, d)
	})
	mux.HandleFunc("/basic", func(w http.ResponseWriter, r *http.Request) {
		d := document(self(r))
		d["token_endpoint_auth_method"] = "client_secret_basic"
		serveJSON(w, d)
	})
	mux.HandleFunc("/jwt", func(w http.ResponseWriter, r *http.Request) {
		d := document(self(r))
		d["token_endpoint_auth_method"] = "private_key_jwt"
		d["jwks_uri"] = "https://client.example/jwks"
		serveJSON(w, d)
	})
	mux.HandleFunc("/bad-redirect", func(w http.ResponseWriter, r *http.Request) {
		d := document(self(r))
		d["redirect_uris"] = []string{"https://client.example/cb", "http://evil.example/cb"}
		serveJSON(w, d)
	})
	mux.HandleFunc("/no-redirect", func(w http.ResponseWriter, r *http.Request) {
		d := document(self(r))
		delete(d, "redirect_uris")
		serveJSON(w, d)
	})
	mux.HandleFunc("/unavailable", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		s.wait(r)
	})
	mux.HandleFunc("/slow-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"client_id":`))
		w.(http.Flusher).Flush()
		s.wait(r)
	})
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		mux.ServeHTTP(w, r)
	})
	if tls {
		s.Server = httptest.NewTLSServer(counted)
	} else {
		s.Server = httptest.NewServer(counted)
	}
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.release) }) // runs first
	return s
}

// wait blocks until the client gives up or the test ends.
func (s *docServer) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.release:
	}
}

func (s *docServer) roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return pool
}

func TestDocumentLookup(t *testing.T) {
	t.Parallel()
	srv := newDocServer(t, true)
	r, _, _ := newTestRegistry(t, Config{Documents: DocumentOptions{
		AllowInsecureLoopback: true, RootCAs: srv.roots(), Timeout: 400 * time.Millisecond,
	}})
	tests := []struct {
		path string
		want string // a word of the reason; "" for accepted
	}{
		{"/good", ""},
		{"/exactly-5k", ""},
		{"/huge", "larger than 5 KiB"},
		{"/huge-chunked", "larger than 5 KiB"},
		{"/html", "not JSON"},
		{"/garbage", "not JSON"},
		{"/redirect", "redirects are not followed"},
		{"/missing", "answered 404"},
		{"/mismatch", "its client_id is not this URL"},
		{"/secret", "client_secret"},
		{"/basic", "needs a secret"},
		{"/jwt", "private_key_jwt is not supported"},
		{"/bad-redirect", "redirect_uris[1]: http is allowed only on loopback"},
		{"/no-redirect", "redirect_uris: required"},
		{"/slow", "no complete answer within 400ms"},
		{"/slow-body", "no complete answer within 400ms"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			t.Parallel()
			id := srv.URL + tt.path
			c, err := r.Lookup(t.Context(), id)
			if tt.want == "" {
				if err != nil || c.ID != id || c.Source != Metadata || c.Name != "Example MCP Client" ||
					c.AuthMethod != AuthNone || !c.HasGrant(GrantRefreshToken) {
					t.Errorf("%+v, %v", c, err)
				}
				return
			}
			var docErr *DocumentError
			if !errors.As(err, &docErr) || docErr.URL != id || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v; want a DocumentError about %q", err, tt.want)
			}
			if !strings.HasPrefix(fmt.Sprint(err), "client metadata document at "+id+": ") {
				t.Errorf("%q does not name the document", err)
			}
		})
	}
}

// Outside tests, no document is fetched from an address that is not
// public, however its host name resolves.
func TestDocumentPrivateAddressRefused(t *testing.T) {
	t.Parallel()
	srv := newDocServer(t, true)
	r, _, _ := newTestRegistry(t, Config{Documents: DocumentOptions{RootCAs: srv.roots()}})
	port := srv.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	for _, host := range []string{"127.0.0.1", "localhost", "[::1]", "10.1.2.3", "169.254.169.254", "[fd00::1]", "0.0.0.0"} {
		id := fmt.Sprintf("https://%s:%d/good", host, port)
		_, err := r.Lookup(t.Context(), id)
		if !errors.Is(err, errPrivateAddress) || !strings.Contains(err.Error(), "non-public address") {
			t.Errorf("%s: %v, want a private address refusal", id, err)
		}
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("the server was reached %d times", n)
	}
	// Over http the id is not a document at all without the test option.
	if _, err := r.Lookup(t.Context(), "http://127.0.0.1/good"); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("an http id: %v, want ErrUnknownClient", err)
	}
}

func TestDocumentOverHTTPOnLoopbackForTests(t *testing.T) {
	t.Parallel()
	srv := newDocServer(t, false)
	r, _, _ := newTestRegistry(t, Config{Documents: DocumentOptions{AllowInsecureLoopback: true}})
	if c, err := r.Lookup(t.Context(), srv.URL+"/good"); err != nil || c.Source != Metadata {
		t.Errorf("%+v, %v", c, err)
	}
	_, err := r.Lookup(t.Context(), "http://client.example/good")
	if !strings.Contains(fmt.Sprint(err), "not https") {
		t.Errorf("http off loopback: %v", err)
	}
}

func TestDocumentsDisabled(t *testing.T) {
	t.Parallel()
	srv := newDocServer(t, true)
	r, _, _ := newTestRegistry(t, Config{Documents: DocumentOptions{
		Disabled: true, AllowInsecureLoopback: true, RootCAs: srv.roots(),
	}})
	if _, err := r.Lookup(t.Context(), srv.URL+"/good"); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("%v, want ErrUnknownClient", err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("the server was reached %d times", n)
	}
}

func TestDocumentCache(t *testing.T) {
	t.Parallel()
	srv := newDocServer(t, true)
	clock := testclock.New(t0)
	r, err := New(Config{Store: newMemStore(clock.Now), Now: clock.Now, Documents: DocumentOptions{
		AllowInsecureLoopback: true, RootCAs: srv.roots(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(path string) {
		t.Helper()
		if _, err := r.Lookup(t.Context(), srv.URL+path); err != nil {
			t.Fatal(err)
		}
	}
	hits := func(want int64) {
		t.Helper()
		if n := srv.hits.Load(); n != want {
			t.Fatalf("%d fetches, want %d", n, want)
		}
	}

	// Concurrent lookups of one URL fetch it once.
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { lookup("/good") })
	}
	wg.Wait()
	hits(1)
	clock.Add(59 * time.Second) // max-age=60
	lookup("/good")
	hits(1)
	clock.Add(time.Second)
	lookup("/good")
	hits(2)

	// no-store is kept for the minimum, not fetched on every sign-in.
	lookup("/no-store")
	clock.Add(MinDocumentTTL - time.Second)
	lookup("/no-store")
	hits(3)
	clock.Add(time.Second)
	lookup("/no-store")
	hits(4)

	// A refused document is not cached.
	for range 2 {
		if _, err := r.Lookup(t.Context(), srv.URL+"/html"); err == nil {
			t.Fatal("a non-JSON document was accepted")
		}
	}
	hits(6)
}

func TestDocumentCacheBounded(t *testing.T) {
	t.Parallel()
	clock := testclock.New(t0)
	d := newDocuments(DocumentOptions{MaxEntries: 2}, clock.Now)
	for i, ttl := range []time.Duration{time.Hour, time.Minute, 2 * time.Hour} {
		d.keep(Client{ID: fmt.Sprint(i)}, ttl)
	}
	if len(d.cache) != 2 {
		t.Fatalf("%d kept, want 2", len(d.cache))
	}
	if _, ok := d.cache["1"]; ok {
		t.Error("the document closest to expiry was kept")
	}
	clock.Add(90 * time.Minute)
	d.keep(Client{ID: "3"}, time.Hour)
	if _, ok := d.cached("0"); ok || len(d.cache) != 2 {
		t.Errorf("an expired document was kept: %v", d.cache)
	}
}

func TestDocumentURL(t *testing.T) {
	t.Parallel()
	d := newDocuments(DocumentOptions{}, time.Now)
	tests := []struct{ id, want string }{
		{"https://client.example/oauth/metadata.json", ""},
		{"https://client.example/m?v=1", ""},
		{"https://client.example", "no path"},
		{"https://client.example/", "no path"},
		{"https://client.example/a#b", "fragment"},
		{"https://user@client.example/m", "user information"},
		{"https:///m", "host"},
		{"https://client.example/a/../m", ". or .."},
		{"https://client.example/./m", ". or .."},
		{"https://client.example/" + strings.Repeat("m", 600), "512"},
		{"https://client.example/%zz", "URL"},
	}
	for _, tt := range tests {
		got := d.checkURL(tt.id)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("checkURL(%.60q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestCacheTTL(t *testing.T) {
	t.Parallel()
	def := 5 * time.Minute
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", def},
		{"public", def},
		{"max-age=600", 10 * time.Minute},
		{"public, Max-Age=120, must-revalidate", 2 * time.Minute},
		{`max-age="120"`, 2 * time.Minute},
		{"max-age=1", MinDocumentTTL},
		{"max-age=0", MinDocumentTTL},
		{"max-age=99999999999", MaxDocumentTTL},
		{"max-age=-5", def},
		{"max-age=soon", def},
		{"no-store", MinDocumentTTL},
		{"no-cache, max-age=600", MinDocumentTTL},
	}
	for _, tt := range tests {
		if got := cacheTTL(tt.header, def); got != tt.want {
			t.Errorf("cacheTTL(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestPublicAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		want bool
	}{
		{"93.184.215.14", true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true},
		{"127.0.0.1", false},
		{"127.8.8.8", false},
		{"::1", false},
		{"10.0.0.1", false},
		{"172.16.5.4", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"fe80::1", false},
		{"fd00:ec2::254", false},
		{"0.0.0.0", false},
		{"::", false},
		{"100.64.0.1", false},
		{"224.0.0.1", false},
		{"ff02::1", false},
		{"255.255.255.255", false},
		{"64:ff9b::a00:1", false},
		{"2002:a00:1::", false},
		{"::ffff:10.0.0.1", false},
	}
	for _, tt := range tests {
		addr := netip.MustParseAddr(tt.addr)
		if got := publicAddr(addr.Unmap()); got != tt.want {
			t.Errorf("publicAddr(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

// Document fetches (cache misses) are bounded per source and in all:
// over a bound, Lookup fetches nothing and says ErrTooManyFetches (not a
// DocumentError: the client is not judged), while a cached document is
// still found.
func TestDocumentFetchBounds(t *testing.T) {
	t.Parallel()
	srv := newDocServer(t, true)
	r, _, _ := newTestRegistry(t, Config{Documents: DocumentOptions{
		AllowInsecureLoopback: true, RootCAs: srv.roots(),
		PerSource: Rate{Count: 2, Per: time.Hour}, Global: Rate{Count: 3, Per: time.Hour},
	}})
	lookup := func(source, path string) error {
		_, err := r.Lookup(ratelimit.WithSource(t.Context(), source), srv.URL+path)
		return err
	}
	for _, tc := range []struct {
		source, path string
		want         string // fetched, limited or cached
	}{
		{"a", "/good", "fetched"},
		{"a", "/missing", "fetched"},
		{"a", "/mismatch", "limited"}, // a's bound
		{"a", "/good", "cached"},
		{"b", "/missing", "fetched"},  // the third fetch in all
		{"c", "/mismatch", "limited"}, // the global bound
	} {
		before := srv.hits.Load()
		err := lookup(tc.source, tc.path)
		got := "cached"
		var docErr *DocumentError
		switch {
		case srv.hits.Load() != before:
			got = "fetched"
		case errors.Is(err, ErrTooManyFetches) && !errors.As(err, &docErr):
			got = "limited"
		case err != nil:
			got = err.Error()
		}
		if got != tc.want {
			t.Fatalf("%s looking up %s: %s (%v), want %s", tc.source, tc.path, got, err, tc.want)
		}
	}
	if err := lookup("a", "/good"); err != nil {
		t.Fatalf("a cached document over the bounds: %v", err)
	}
}

// A document that cannot be used (gone, invalid) says the client is
// unknown, and a host then drops what it holds and registers again; a
// document whose host is down, overloaded or unreachable, or a fetch
// over its bound, says nothing of the client (Unknown false: the token
// endpoint answers server_error and the host keeps its tokens), so that
// a blip at the client's document host, when its cached copy has run
// out, does not sign its people out.
func TestUnknownClient(t *testing.T) {
	t.Parallel()
	srv := newDocServer(t, true)
	dead := httptest.NewTLSServer(http.NotFoundHandler())
	dead.Close()
	r, _, _ := newTestRegistry(t, Config{Documents: DocumentOptions{
		AllowInsecureLoopback: true, RootCAs: srv.roots(), Timeout: 400 * time.Millisecond,
	}})
	for _, tc := range []struct {
		id      string
		unknown bool
	}{
		{"0123456789abcdef0123456789abcdef", true}, // never registered
		{srv.URL + "/missing", true},
		{srv.URL + "/mismatch", true},
		{srv.URL + "/html", true},
		{srv.URL + "/redirect", true},
		{srv.URL + "/unavailable", false},
		{srv.URL + "/busy", false},
		{srv.URL + "/slow", false},
		{srv.URL + "/slow-body", false},
		{dead.URL + "/gone-host", false},
	} {
		t.Run(tc.id, func(t *testing.T) {
			t.Parallel()
			_, err := r.Lookup(t.Context(), tc.id)
			if err == nil || Unknown(err) != tc.unknown {
				t.Errorf("%v: Unknown = %v, want %v", err, err != nil && Unknown(err), tc.unknown)
			}
		})
	}
	if err := fmt.Errorf("client metadata document: %w", ErrTooManyFetches); Unknown(err) {
		t.Errorf("%v is Unknown", err)
	}
}
