package receipt

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Why Verify refuses a receipt, matched with errors.Is.
var (
	ErrMalformed  = errors.New("not a receipt: malformed, or not signed with ES256")
	ErrType       = errors.New("not a receipt: the header typ is not " + Type)
	ErrUnknownKey = errors.New("signed by a key that is not in the deployment's key set")
	ErrSignature  = errors.New("bad signature: the receipt was altered or signed by another key")
	ErrIssuer     = errors.New("issued by another deployment")
	ErrExpired    = errors.New("expired")
	ErrIssuedLate = errors.New("issued in the future")
	ErrTxn        = errors.New("for another elicitation")
	ErrOutcome    = errors.New("another outcome")
	ErrTool       = errors.New("for another tool")
	ErrArguments  = errors.New("for another call's arguments")
	ErrUpstream   = errors.New("for another upstream server")
)

// Leeway is the clock skew Verify allows on iat and exp.
const Leeway = time.Minute

// Expect is what a receipt must say to be accepted. Issuer is required;
// every other empty field is not checked.
type Expect struct {
	// Issuer is the deployment's public URL (the receipt's iss).
	Issuer string
	// Txn is the elicitationId.
	Txn string
	// Outcome is OutcomeApproved or OutcomeDeclined.
	Outcome string
	// Tool is the upstream tool, and Arguments the call's arguments (JSON),
	// whose Digest the receipt must carry.
	Tool      string
	Arguments json.RawMessage
	// Upstream is the upstream server's URL as the gate reaches it, which
	// the receipt's locations must name.
	Upstream string
	// Now is the time to check iat and exp at; zero: time.Now.
	Now time.Time
}

// Verify checks token against the deployment's key set keys and expect,
// and returns its claims: the algorithm is ES256 and nothing else, the
// header's typ is Type, its kid names a key of keys, the signature is
// that key's, iss is expect.Issuer, the time is between iat and exp
// (within Leeway), and the elicitation, outcome, tool, arguments digest
// and upstream are those expected. Each refusal wraps one of the Err values above.
func Verify(token string, keys jose.JSONWebKeySet, expect Expect) (Claims, error) {
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(jws.Signatures) != 1 {
		return Claims{}, ErrMalformed
	}
	h := jws.Signatures[0].Header
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != Type {
		return Claims{}, fmt.Errorf("%w (typ %q)", ErrType, typ)
	}
	found := keys.Key(h.KeyID)
	if h.KeyID == "" || len(found) != 1 {
		return Claims{}, fmt.Errorf("%w (kid %q)", ErrUnknownKey, h.KeyID)
	}
	pub, ok := found[0].Key.(*ecdsa.PublicKey)
	if !ok || (found[0].Algorithm != "" && found[0].Algorithm != string(jose.ES256)) {
		return Claims{}, fmt.Errorf("%w (kid %q is not an ES256 public key)", ErrUnknownKey, h.KeyID)
	}
	payload, err := jws.Verify(pub)
	if err != nil {
		return Claims{}, ErrSignature
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Claims{}, fmt.Errorf("%w: the claims: %v", ErrMalformed, err)
	}
	if err := expect.check(c); err != nil {
		return Claims{}, err
	}
	return c, nil
}

func (e Expect) check(c Claims) error {
	now := e.Now
	if now.IsZero() {
		now = time.Now()
	}
	switch {
	case e.Issuer == "" || c.Issuer != e.Issuer:
		return fmt.Errorf("%w: %q, not %q", ErrIssuer, c.Issuer, e.Issuer)
	case c.Expiry == 0 || !now.Before(time.Unix(c.Expiry, 0).Add(Leeway)):
		return fmt.Errorf("%w at %s", ErrExpired, time.Unix(c.Expiry, 0).UTC().Format(time.RFC3339))
	case now.Add(Leeway).Before(time.Unix(c.IssuedAt, 0)):
		return fmt.Errorf("%w: %s", ErrIssuedLate, time.Unix(c.IssuedAt, 0).UTC().Format(time.RFC3339))
	case e.Txn != "" && c.Txn != e.Txn:
		return fmt.Errorf("%w: %q", ErrTxn, c.Txn)
	case e.Outcome != "" && c.Outcome != e.Outcome:
		return fmt.Errorf("%w: %q", ErrOutcome, c.Outcome)
	}
	return e.checkCall(c)
}

// checkCall checks the upstream call the receipt approves.
func (e Expect) checkCall(c Claims) error {
	if e.Tool == "" && len(e.Arguments) == 0 && e.Upstream == "" {
		return nil
	}
	d, ok := c.Detail()
	if !ok {
		return fmt.Errorf("%w: the receipt names no call", ErrTool)
	}
	if e.Tool != "" && d.Tool != e.Tool {
		return fmt.Errorf("%w: %q", ErrTool, d.Tool)
	}
	if e.Upstream != "" && !slices.Contains(d.Locations, e.Upstream) {
		return fmt.Errorf("%w: %q", ErrUpstream, d.Locations)
	}
	if len(e.Arguments) == 0 {
		return nil
	}
	want, err := Digest(e.Arguments)
	if err != nil {
		return fmt.Errorf("the expected arguments: %w", err)
	}
	if d.ArgumentsSHA256 != want {
		return ErrArguments
	}
	return nil
}

// Detail is c's authorization detail of type DetailType.
func (c Claims) Detail() (Detail, bool) {
	for _, d := range c.AuthorizationDetails {
		if d.Type == DetailType {
			return d, true
		}
	}
	return Detail{}, false
}

// MaxKeySetBytes bounds a key set FetchKeys reads.
const MaxKeySetBytes = 64 << 10

// FetchKeys reads the key set a deployment publishes at url (its public
// URL + signing.JWKSPath) with client (nil: http.DefaultClient).
func FetchKeys(ctx context.Context, client *http.Client, url string) (jose.JSONWebKeySet, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("key set: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("key set: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return jose.JSONWebKeySet{}, fmt.Errorf("key set %s: HTTP %d", url, resp.StatusCode)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxKeySetBytes)).Decode(&set); err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("key set %s: %w", url, err)
	}
	return set, nil
}
