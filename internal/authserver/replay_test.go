package authserver_test

import (
	"errors"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
)

// An authorization code redeemed a second time is refused, and what its
// first redemption issued is revoked (OAuth 2.1 section 4.1.3, RFC 6749
// section 4.1.2): whoever replays a stolen code, the thief or the client
// it was stolen from, the tokens of that code stop working, the access
// token at /mcp and the refresh token (invalid_grant). A replay while
// the first redemption is still issuing its tokens refuses both.
func TestCodeReplayRevokes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		during bool // replay while the first redemption writes its family
	}{
		{"after the first redemption", false},
		{"during the first redemption", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &hookedStore{Store: &granttest.Memory{}}
			h := startWith(t, store)
			redeem := h.code(t)
			var replay tokenAnswer
			var replayErr error
			if tc.during {
				var once atomic.Bool
				store.set(func(write string, r grant.Record) error {
					if write == "put" && r.Kind == "family" && r.Version == 0 && once.CompareAndSwap(false, true) {
						replay, replayErr = h.post(cloneValues(redeem))
					}
					return nil
				})
			}
			first := h.token(t, cloneValues(redeem))
			if !tc.during {
				if first.status != http.StatusOK || first.Token == "" {
					t.Fatalf("first redemption: %d %s", first.status, first.body)
				}
				if _, err := h.verify(t, first.Access); err != nil {
					t.Fatalf("the first access token before the replay: %v", err)
				}
				replay, replayErr = h.post(cloneValues(redeem))
			}
			if replayErr != nil {
				t.Fatal(replayErr)
			}
			if replay.status != http.StatusBadRequest || replay.Error != "invalid_grant" || replay.Access != "" {
				t.Fatalf("replayed code: %d %s, want 400 invalid_grant", replay.status, replay.body)
			}
			if tc.during {
				if first.status != http.StatusBadRequest || first.Error != "invalid_grant" || first.Access != "" {
					t.Fatalf("the redemption a replay overtook: %d %s, want 400 invalid_grant", first.status, first.body)
				}
				return
			}
			if _, err := h.verify(t, first.Access); !errors.Is(err, authserver.ErrInvalidToken) {
				t.Errorf("the first access token after the replay: %v, want ErrInvalidToken", err)
			}
			if a := h.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Token}}); a.status != http.StatusBadRequest || a.Error != "invalid_grant" {
				t.Errorf("the first refresh token after the replay: %d %s, want 400 invalid_grant", a.status, a.body)
			}
		})
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
