package authserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
)

// hookedStore is a grant.Store whose Get, Put and Delete first call
// hook, once it is set: an error it returns is the call's.
type hookedStore struct {
	grant.Store
	mu   sync.Mutex
	hook func(write string, r grant.Record) error
}

func (s *hookedStore) set(hook func(write string, r grant.Record) error) {
	s.mu.Lock()
	s.hook = hook
	s.mu.Unlock()
}

func (s *hookedStore) call(write string, r grant.Record) error {
	s.mu.Lock()
	hook := s.hook
	s.mu.Unlock()
	if hook == nil {
		return nil
	}
	return hook(write, r)
}

func (s *hookedStore) Get(ctx context.Context, kind, id string) (grant.Record, error) {
	if err := s.call("get", grant.Record{Kind: kind, ID: id}); err != nil {
		return grant.Record{}, err
	}
	return s.Store.Get(ctx, kind, id)
}

func (s *hookedStore) Put(ctx context.Context, r grant.Record) (grant.Record, error) {
	if err := s.call("put", r); err != nil {
		return grant.Record{}, err
	}
	return s.Store.Put(ctx, r)
}

func (s *hookedStore) Delete(ctx context.Context, kind, id string, version int64) error {
	if err := s.call("delete", grant.Record{Kind: kind, ID: id, Version: version}); err != nil {
		return err
	}
	return s.Store.Delete(ctx, kind, id, version)
}

// storeText is what the store's failure says, which must not reach the
// client.
const storeText = "AccessDeniedException: arn:aws:dynamodb:eu-west-1:123456789012:table/grants"

// tokenAnswer is a token endpoint's answer.
type tokenAnswer struct {
	status int
	body   string
	Error  string `json:"error"`
	Token  string `json:"refresh_token"`
	Access string `json:"access_token"`
}

func (h *harness) token(t *testing.T, form url.Values) tokenAnswer {
	t.Helper()
	a, err := h.post(form)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// post is token without a testing.T, for a goroutine other than the
// test's.
func (h *harness) post(form url.Values) (tokenAnswer, error) {
	form.Set("client_id", h.client.ID)
	resp, err := noFollow.PostForm(h.url+authserver.TokenPath, form)
	if err != nil {
		return tokenAnswer{}, err
	}
	a := tokenAnswer{status: resp.StatusCode, body: body(resp)}
	_ = json.Unmarshal([]byte(a.body), &a)
	return a, nil
}

// code runs the browser's part and returns the redemption of its code.
func (h *harness) code(t *testing.T) url.Values {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	back := h.authorize(t, "alice", verifier)
	return url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
		"code_verifier": {verifier}, "redirect_uri": {"http://127.0.0.1:4567/cb"}}
}

// The store failing while the token endpoint issues tokens (the family's
// creation, its rotation, the sign-in's deletion) is a server_error that
// says nothing of why: the store's own words (an account, a table, an
// address) stay in the server's log.
func TestTokenStoreFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		write   string
		kind    string
		refresh bool // fail the refresh, not the redemption
	}{
		{"the family's creation", "put", "family", false},
		{"the sign-in's deletion", "delete", "login", false},
		{"the family's rotation", "put", "family", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &hookedStore{Store: &granttest.Memory{}}
			h := startWith(t, store)
			redeem := h.code(t)
			if tc.refresh {
				first := h.token(t, redeem)
				if first.status != http.StatusOK {
					t.Fatalf("redemption: %d %s", first.status, first.body)
				}
				redeem = url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Token}}
			}
			store.set(func(write string, r grant.Record) error {
				if write == tc.write && r.Kind == tc.kind {
					return errors.New(storeText)
				}
				return nil
			})
			a := h.token(t, redeem)
			if a.status != http.StatusInternalServerError || a.Error != "server_error" || strings.Contains(a.body, "arn:aws") || strings.Contains(a.body, "record") {
				t.Fatalf("%d %s, want 500 server_error saying nothing of the store", a.status, a.body)
			}
		})
	}
}

// The store failing while the token endpoint reads what a request
// presents (a code's record, a refresh token's family) is a 500
// server_error that says nothing of why, not invalid_grant: a host told
// invalid_grant drops its refresh token (or its sign-in), and a brief
// outage would sign every refreshing host out. Once the store is back,
// the same code or refresh token works.
func TestTokenStoreReadFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		kind    string
		refresh bool
	}{
		{"the code's record", "code", false},
		{"the refresh token's family", "family", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &hookedStore{Store: &granttest.Memory{}}
			h := startWith(t, store)
			redeem := h.code(t)
			if tc.refresh {
				first := h.token(t, redeem)
				if first.status != http.StatusOK {
					t.Fatalf("redemption: %d %s", first.status, first.body)
				}
				redeem = url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Token}}
			}
			store.set(func(call string, r grant.Record) error {
				if call == "get" && r.Kind == tc.kind {
					return errors.New(storeText)
				}
				return nil
			})
			a := h.token(t, cloneValues(redeem))
			store.set(nil)
			if a.status != http.StatusInternalServerError || a.Error != "server_error" || strings.Contains(a.body, "arn:aws") || strings.Contains(a.body, "record") {
				t.Fatalf("%d %s, want 500 server_error saying nothing of the store", a.status, a.body)
			}
			if again := h.token(t, redeem); again.status != http.StatusOK || again.Access == "" {
				t.Fatalf("the same request once the store is back: %d %s", again.status, again.body)
			}
		})
	}
}

// The store failing while /oauth/revoke reads the family of the token
// presented is a 500 server_error that says nothing of why, never a 200
// that revokes nothing: a host signing the person out must learn that
// it did not happen. Once the store is back, the revocation works.
func TestRevokeStoreFailure(t *testing.T) {
	t.Parallel()
	for _, hint := range []string{"", "refresh_token", "access_token"} {
		t.Run("hint "+hint, func(t *testing.T) {
			t.Parallel()
			store := &hookedStore{Store: &granttest.Memory{}}
			h := startWith(t, store)
			first := h.token(t, h.code(t))
			if first.status != http.StatusOK {
				t.Fatalf("redemption: %d %s", first.status, first.body)
			}
			token := first.Token
			if hint == "access_token" {
				token = first.Access
			}
			revoke := url.Values{"token": {token}, "client_id": {"cli"}}
			if hint != "" {
				revoke.Set("token_type_hint", hint)
			}
			store.set(func(call string, r grant.Record) error {
				if call == "get" && r.Kind == "family" {
					return errors.New(storeText)
				}
				return nil
			})
			resp := h.do(t, http.MethodPost, h.url+authserver.RevokePath, "", revoke)
			b := body(resp)
			store.set(nil)
			if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(b, "server_error") || strings.Contains(b, "arn:aws") {
				t.Fatalf("revoke while the store fails: %d %s, want 500 server_error saying nothing of the store", resp.StatusCode, b)
			}
			if resp := h.do(t, http.MethodPost, h.url+authserver.RevokePath, "", revoke); resp.StatusCode != http.StatusOK {
				t.Fatalf("revoke once the store is back: %d %s", resp.StatusCode, body(resp))
			}
			if _, err := h.verify(t, first.Access); !errors.Is(err, authserver.ErrInvalidToken) {
				t.Fatalf("the access token after the revocation: %v, want ErrInvalidToken", err)
			}
		})
	}
}

// Two uses of one refresh token at once (a host refreshing from two
// calls, or two instances): the first to rotate the family wins, the
// other is answered invalid_grant, as a refresh token no longer valid is
// (RFC 6749 section 5.2), not a server_error; the family stays live, as
// neither presented a token already rotated when it was read.
func TestRefreshRace(t *testing.T) {
	t.Parallel()
	store := &hookedStore{Store: &granttest.Memory{}}
	h := startWith(t, store)
	first := h.token(t, h.code(t))
	if first.status != http.StatusOK || first.Token == "" {
		t.Fatalf("redemption: %d %s", first.status, first.body)
	}
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Token}}
	var winner tokenAnswer
	var winnerErr error
	var started atomic.Bool
	// The first rotation, after its family was read, lets a second use of
	// the same token run whole before it writes.
	store.set(func(write string, r grant.Record) error {
		if write == "put" && r.Kind == "family" && r.Version != 0 {
			if started.CompareAndSwap(false, true) {
				winner, winnerErr = h.post(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Token}})
			}
		}
		return nil
	})
	loser := h.token(t, refresh)
	store.set(nil)
	if winnerErr != nil {
		t.Fatal(winnerErr)
	}
	if winner.status != http.StatusOK || winner.Token == "" {
		t.Fatalf("the use that rotated first: %d %s", winner.status, winner.body)
	}
	if loser.status != http.StatusBadRequest || loser.Error != "invalid_grant" {
		t.Fatalf("the use that lost the race: %d %s, want 400 invalid_grant", loser.status, loser.body)
	}
	if _, err := h.verify(t, winner.Access); err != nil {
		t.Fatalf("the winner's access token: %v", err)
	}
	if next := h.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {winner.Token}}); next.status != http.StatusOK {
		t.Fatalf("the winner's refresh token: %d %s", next.status, next.body)
	}
}
