package apikey_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/apikey/apikeytest"
)

func TestFileStoreContract(t *testing.T) {
	t.Parallel()
	apikeytest.Run(t, func(t *testing.T) (a, b apikey.Store) {
		path := filepath.Join(t.TempDir(), "keys.json")
		return apikey.NewFileStore(path), apikey.NewFileStore(path)
	})
}

func TestFileStoreKeepsOnlyHashes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.json")
	secret, _, err := apikey.Create(context.Background(), apikey.NewFileStore(path), apikey.CreateOptions{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(secret[len(apikey.Prefix):])) {
		t.Errorf("the key file holds the key itself:\n%s", b)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, want 0600", fi.Mode().Perm())
	}
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		k := apikey.Generate()
		if !strings.HasPrefix(k, apikey.Prefix) || len(k) != 63 || !apikey.WellFormed(k) {
			t.Fatalf("Generate() = %q: want elk_ + 59 base32 characters, well formed", k)
		}
		if seen[k] {
			t.Fatalf("Generate() repeated %q", k)
		}
		seen[k] = true
	}
}

// serve runs req through Middleware in front of a handler that echoes the
// principal it sees.
func serve(t *testing.T, o apikey.AuthOptions, req *http.Request) *http.Response {
	t.Helper()
	h := apikey.Middleware(o)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti := auth.TokenInfoFromContext(r.Context())
		if ti == nil {
			t.Error("the handler ran without TokenInfo")
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "hello "+ti.UserID)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := apikey.NewFileStore(filepath.Join(t.TempDir(), "keys.json"))
	good, _, err := apikey.Create(ctx, store, apikey.CreateOptions{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	revoked, rk, err := apikey.Create(ctx, store, apikey.CreateOptions{Principal: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Revoke(ctx, rk.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	expired, _, err := apikey.Create(ctx, store, apikey.CreateOptions{Principal: "carol", TTL: time.Hour, Now: func() time.Time { return time.Now().Add(-2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, header string
		status       int
		challenge    string
	}{
		{"valid", "Bearer " + good, 200, ""},
		{"lowercase scheme", "bearer " + good, 200, ""},
		{"missing", "", 401, `Bearer realm="mcp-elicitation"`},
		{"basic", "Basic YWxpY2U6c2VjcmV0", 401, `Bearer realm="mcp-elicitation"`},
		{"unknown", "Bearer " + apikey.Generate(), 401, `Bearer realm="mcp-elicitation", error="invalid_token"`},
		{"malformed", "Bearer elk_hunter2", 401, `Bearer realm="mcp-elicitation", error="invalid_token"`},
		{"revoked", "Bearer " + revoked, 401, `Bearer realm="mcp-elicitation", error="invalid_token"`},
		{"expired", "Bearer " + expired, 401, `Bearer realm="mcp-elicitation", error="invalid_token"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{}`))
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp := serve(t, apikey.AuthOptions{Store: store}, req)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d (body %q)", resp.StatusCode, tc.status, body)
			}
			if tc.status == 200 {
				if string(body) != "hello alice" {
					t.Errorf("body = %q, want the principal alice", body)
				}
				return
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Errorf("WWW-Authenticate = %q, want %q", got, tc.challenge)
			}
			if len(body) != 0 {
				t.Errorf("a refusal has a body %q, want none", body)
			}
			for k := range resp.Header {
				switch k {
				case "Www-Authenticate", "Cache-Control", "Content-Length":
				default:
					t.Errorf("a refusal has header %s: %q", k, resp.Header.Get(k))
				}
			}
		})
	}
}

type failingStore struct{ apikey.Store }

func (failingStore) Lookup(context.Context, string) (apikey.Key, error) {
	return apikey.Key{}, errors.New("dynamodb: connection refused to 10.0.0.7")
}

func TestMiddlewareStoreFailure(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+apikey.Generate())
	resp := serve(t, apikey.AuthOptions{Store: failingStore{}}, req)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || len(body) != 0 {
		t.Fatalf("store failure: status %d body %q; want 503 and no body", resp.StatusCode, body)
	}
}

func TestMiddlewarePassesHandlerErrorsThrough(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := apikey.NewFileStore(filepath.Join(t.TempDir(), "keys.json"))
	key, _, err := apikey.Create(ctx, store, apikey.CreateOptions{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	h := apikey.Middleware(apikey.AuthOptions{Store: store})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad input", http.StatusInternalServerError)
	}))
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 500 || rec.Body.String() != "bad input\n" {
		t.Fatalf("the handler's own 500 became %d %q", rec.Code, rec.Body.String())
	}
}

type countingStore struct {
	apikey.Store
	lookups int
}

func (c *countingStore) Lookup(ctx context.Context, h string) (apikey.Key, error) {
	c.lookups++
	return c.Store.Lookup(ctx, h)
}

func TestMiddlewareCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fs := apikey.NewFileStore(filepath.Join(t.TempDir(), "keys.json"))
	key, _, err := apikey.Create(ctx, fs, apikey.CreateOptions{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: fs}
	now := time.Now()
	o := apikey.AuthOptions{Store: cs, CacheTTL: 10 * time.Second, Now: func() time.Time { return now }}
	h := apikey.Middleware(o)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	call := func() int {
		req := httptest.NewRequest("POST", "/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for range 3 {
		if c := call(); c != 200 {
			t.Fatalf("status %d", c)
		}
	}
	if cs.lookups != 1 {
		t.Errorf("3 calls within CacheTTL made %d lookups, want 1", cs.lookups)
	}
	now = now.Add(11 * time.Second)
	call()
	if cs.lookups != 2 {
		t.Errorf("a call after CacheTTL made %d lookups in all, want 2", cs.lookups)
	}
}
