package clientreg

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

var t0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

func newTestRegistry(t *testing.T, cfg Config) (*Registry, *memStore, *testclock.Clock) {
	t.Helper()
	clock := testclock.New(t0)
	store := newMemStore(clock.Now)
	cfg.Store, cfg.Now = store, clock.Now
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, store, clock
}

// post sends body to the registration handler from source.
func post(h http.Handler, source, contentType, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/register", strings.NewReader(body))
	req.RemoteAddr = source + ":40000"
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

type errorBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

func TestRegisterRefusesBadMetadata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		code, desc string // error code, a word of the description
	}{
		{"no redirect_uris", `{"client_name":"x"}`, codeInvalidRedirectURI, "redirect_uris: required"},
		{"empty redirect_uris", `{"redirect_uris":[]}`, codeInvalidRedirectURI, "redirect_uris: required"},
		{"http on a public host", `{"redirect_uris":["http://app.example.com/cb"]}`, codeInvalidRedirectURI, "redirect_uris[0]: http is allowed only on loopback"},
		{"second uri javascript", `{"redirect_uris":["https://a.example/cb","javascript:alert(1)"]}`, codeInvalidRedirectURI, "redirect_uris[1]"},
		{"relative", `{"redirect_uris":["/cb"]}`, codeInvalidRedirectURI, "absolute"},
		{"wildcard", `{"redirect_uris":["https://*.example.com/cb"]}`, codeInvalidRedirectURI, "wildcard"},
		{"redirect_uris a string", `{"redirect_uris":"https://a.example/cb"}`, codeInvalidMetadata, "redirect_uris"},
		{"private_key_jwt", `{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"private_key_jwt"}`, codeInvalidMetadata, "private_key_jwt is not supported"},
		{"unknown method", `{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"tls_client_auth"}`, codeInvalidMetadata, "token_endpoint_auth_method"},
		{"implicit grant", `{"redirect_uris":["https://a.example/cb"],"grant_types":["implicit"]}`, codeInvalidMetadata, "grant_types"},
		{"client_credentials", `{"redirect_uris":["https://a.example/cb"],"grant_types":["authorization_code","client_credentials"]}`, codeInvalidMetadata, "grant_types"},
		{"refresh only", `{"redirect_uris":["https://a.example/cb"],"grant_types":["refresh_token"]}`, codeInvalidMetadata, "authorization_code is required"},
		{"token response", `{"redirect_uris":["https://a.example/cb"],"response_types":["token"]}`, codeInvalidMetadata, "response_types"},
		{"long name", `{"redirect_uris":["https://a.example/cb"],"client_name":"` + strings.Repeat("n", 101) + `"}`, codeInvalidMetadata, "client_name"},
		{"name with newline", `{"redirect_uris":["https://a.example/cb"],"client_name":"a\nb"}`, codeInvalidMetadata, "client_name"},
		{"javascript client_uri", `{"redirect_uris":["https://a.example/cb"],"client_uri":"javascript:alert(1)"}`, codeInvalidMetadata, "client_uri"},
		{"not JSON", `redirect_uris=x`, codeInvalidMetadata, "JSON"},
		{"two values", `{"redirect_uris":["https://a.example/cb"]} {}`, codeInvalidMetadata, "JSON"},
		{"array", `[]`, codeInvalidMetadata, "not one JSON object"},
	}
	r, store, _ := newTestRegistry(t, Config{PerSource: Rate{Count: 100, Per: time.Hour}})
	h := r.RegisterHandler()
	for _, tt := range tests {
		rec := post(h, "192.0.2.1", "application/json", tt.body)
		var got errorBody
		_ = json.Unmarshal(rec.Body.Bytes(), &got)
		if rec.Code != http.StatusBadRequest || got.Error != tt.code || !strings.Contains(got.Description, tt.desc) {
			t.Errorf("%s: %d %+v; want 400 %s about %q", tt.name, rec.Code, got, tt.code, tt.desc)
		}
	}
	if n := len(store.records()); n != 0 {
		t.Errorf("%d records stored from refused registrations", n)
	}
}

func TestRegisterRefusesBadRequests(t *testing.T) {
	t.Parallel()
	r, store, _ := newTestRegistry(t, Config{})
	h := r.RegisterHandler()
	valid := `{"redirect_uris":["http://127.0.0.1/cb"]}`

	get := httptest.NewRecorder()
	h.ServeHTTP(get, httptest.NewRequest(http.MethodGet, "/register", nil))
	if get.Code != http.StatusMethodNotAllowed || get.Header().Get("Allow") != http.MethodPost {
		t.Errorf("GET: %d, Allow %q", get.Code, get.Header().Get("Allow"))
	}
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded"} {
		if rec := post(h, "192.0.2.1", ct, valid); rec.Code != http.StatusUnsupportedMediaType {
			t.Errorf("Content-Type %q: %d, want 415", ct, rec.Code)
		}
	}
	huge := `{"redirect_uris":["http://127.0.0.1/cb"],"x":"` + strings.Repeat("a", maxRegistration) + `"}`
	if rec := post(h, "192.0.2.1", "application/json", huge); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a %d-byte body: %d, want 413", len(huge), rec.Code)
	}
	if n := len(store.records()); n != 0 {
		t.Errorf("%d records stored from refused registrations", n)
	}
	if rec := post(h, "192.0.2.1", "application/json; charset=utf-8", valid); rec.Code != http.StatusCreated {
		t.Errorf("a valid registration after the refused ones: %d %s", rec.Code, rec.Body)
	}
}

func TestRegisterPublicClient(t *testing.T) {
	t.Parallel()
	r, store, _ := newTestRegistry(t, Config{ClientTTL: 48 * time.Hour})
	body := `{"redirect_uris":["http://127.0.0.1:33418/callback","http://localhost/callback"],
		"grant_types":["refresh_token","authorization_code"],"response_types":["code"],
		"client_name":"Claude Code","client_uri":"https://claude.ai","scope":"mcp","logo_uri":"https://x.example/l.png"}`
	rec := post(r.RegisterHandler(), "192.0.2.1", "application/json", body)
	if rec.Code != http.StatusCreated {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	id, _ := got["client_id"].(string)
	want := map[string]any{
		"client_id": id, "client_id_issued_at": float64(t0.Unix()),
		"redirect_uris":              []any{"http://127.0.0.1:33418/callback", "http://localhost/callback"},
		"token_endpoint_auth_method": "none",
		"grant_types":                []any{"authorization_code", "refresh_token"},
		"response_types":             []any{"code"},
		"client_name":                "Claude Code", "client_uri": "https://claude.ai",
	}
	if !jsonEqual(got, want) {
		t.Errorf("answer %v\nwant %v", got, want)
	}
	if !registeredID(id) {
		t.Errorf("client_id %q is not a registered id", id)
	}
	recs := store.records()
	if len(recs) != 1 || recs[0].Kind != "client" || recs[0].ID != id || !recs[0].Expires.Equal(t0.Add(48*time.Hour)) {
		t.Fatalf("stored %+v", recs)
	}
	c, err := r.Lookup(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != Registered || c.Name != "Claude Code" || !c.HasGrant(GrantRefreshToken) ||
		!c.IssuedAt.Equal(t0) || c.AuthMethod != AuthNone || c.CheckSecret("") {
		t.Errorf("looked up %+v", c)
	}
	if !c.AllowsRedirect("http://127.0.0.1:50123/callback") {
		t.Error("a loopback redirect URI on another port was refused")
	}
}

func TestRegisterConfidentialClient(t *testing.T) {
	t.Parallel()
	for _, method := range []string{AuthSecretBasic, AuthSecretPost} {
		r, store, _ := newTestRegistry(t, Config{})
		body := `{"redirect_uris":["https://app.example.com/cb"],"token_endpoint_auth_method":"` + method + `"}`
		rec := post(r.RegisterHandler(), "192.0.2.1", "application/json", body)
		if rec.Code != http.StatusCreated {
			t.Fatalf("%s: %d %s", method, rec.Code, rec.Body)
		}
		var got registration
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.ClientSecret) < 40 || got.ClientSecretExpiresAt == nil || *got.ClientSecretExpiresAt != t0.Add(DefaultClientTTL).Unix() {
			t.Errorf("%s: secret %d bytes, expires %v", method, len(got.ClientSecret), got.ClientSecretExpiresAt)
		}
		for _, rec := range store.records() {
			if bytes.Contains(rec.Data, []byte(got.ClientSecret)) {
				t.Errorf("%s: the secret itself is stored", method)
			}
		}
		c, err := r.Lookup(t.Context(), got.ClientID)
		if err != nil {
			t.Fatal(err)
		}
		if c.AuthMethod != method || !c.CheckSecret(got.ClientSecret) || c.CheckSecret(got.ClientSecret+"x") {
			t.Errorf("%s: looked up %+v", method, c)
		}
	}
}

func TestRegisterStoreFailure(t *testing.T) {
	t.Parallel()
	r, store, _ := newTestRegistry(t, Config{})
	store.err = errors.New("table unavailable: arn:aws:dynamodb:secret-internal")
	rec := post(r.RegisterHandler(), "192.0.2.1", "application/json", `{"redirect_uris":["https://a.example/cb"]}`)
	if rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), "arn:") {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}

// A registration flood from one source spends that source's limit and
// leaves another source able to register.
func TestRegisterFloodFromOneSource(t *testing.T) {
	t.Parallel()
	r, _, clock := newTestRegistry(t, Config{
		PerSource: Rate{Count: 5, Per: time.Hour},
		Global:    Rate{Count: 50, Per: time.Hour},
	})
	h := r.RegisterHandler()
	body := `{"redirect_uris":["http://127.0.0.1/cb"]}`
	for i := range 5 {
		if rec := post(h, "198.51.100.7", "application/json", body); rec.Code != http.StatusCreated {
			t.Fatalf("registration %d: %d", i, rec.Code)
		}
	}
	for range 100 {
		rec := post(h, "198.51.100.7", "application/json", body)
		if rec.Code != http.StatusTooManyRequests {
			t.Fatalf("the flood got %d", rec.Code)
		}
		// One registration comes back every 12 minutes.
		if ra := rec.Header().Get("Retry-After"); ra != "720" {
			t.Fatalf("Retry-After %q, want 720", ra)
		}
	}
	if rec := post(h, "203.0.113.9", "application/json", body); rec.Code != http.StatusCreated {
		t.Fatalf("another source during the flood: %d %s", rec.Code, rec.Body)
	}
	clock.Add(12 * time.Minute)
	if rec := post(h, "198.51.100.7", "application/json", body); rec.Code != http.StatusCreated {
		t.Errorf("the flooding source after its wait: %d", rec.Code)
	}
}

// The global limit holds however many sources there are.
func TestRegisterGlobalLimit(t *testing.T) {
	t.Parallel()
	r, _, _ := newTestRegistry(t, Config{
		PerSource:  Rate{Count: 2, Per: time.Hour},
		Global:     Rate{Count: 10, Per: time.Hour},
		MaxSources: 3,
	})
	h := r.RegisterHandler()
	body := `{"redirect_uris":["http://127.0.0.1/cb"]}`
	created := 0
	for i := range 40 {
		rec := post(h, "192.0.2."+strconv.Itoa(i), "application/json", body)
		if rec.Code == http.StatusCreated {
			created++
		} else if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
			t.Fatalf("registration %d: %d", i, rec.Code)
		}
	}
	if created != 10 {
		t.Errorf("%d registrations from 40 sources, want the global 10", created)
	}
}

func TestRemoteIP(t *testing.T) {
	t.Parallel()
	tests := []struct{ remote, want string }{
		{"192.0.2.1:1234", "192.0.2.1"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.1]:1", "192.0.2.1"},
		{"@", "@"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.RemoteAddr = tt.remote
		if got := RemoteIP(req); got != tt.want {
			t.Errorf("RemoteIP(%q) = %q, want %q", tt.remote, got, tt.want)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func decodeID(t *testing.T, body []byte) string {
	t.Helper()
	var got registration
	if err := json.Unmarshal(body, &got); err != nil || got.ClientID == "" {
		t.Fatalf("no client_id in %s (%v)", body, err)
	}
	return got.ClientID
}

// Over a real server, with the source the caller names (here a header a
// trusted front end would set): the flooding source is refused, the other
// still registers.
func TestRegisterFloodOverHTTP(t *testing.T) {
	t.Parallel()
	r, _, _ := newTestRegistry(t, Config{
		PerSource: Rate{Count: 3, Per: time.Minute},
		Source:    func(req *http.Request) string { return req.Header.Get("X-Test-Source") },
	})
	srv := httptest.NewServer(r.RegisterHandler())
	t.Cleanup(srv.Close)
	register := func(source string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL,
			strings.NewReader(`{"redirect_uris":["http://127.0.0.1/cb"]}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Test-Source", source)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "20" {
			t.Errorf("Retry-After %q, want 20", resp.Header.Get("Retry-After"))
		}
		return resp.StatusCode
	}
	codes := map[int]int{}
	for range 30 {
		codes[register("flooder")]++
	}
	if codes[http.StatusCreated] != 3 || codes[http.StatusTooManyRequests] != 27 {
		t.Errorf("the flood's answers: %v, want 3 created and 27 refused", codes)
	}
	if code := register("bystander"); code != http.StatusCreated {
		t.Errorf("another source during the flood: %d", code)
	}
}
