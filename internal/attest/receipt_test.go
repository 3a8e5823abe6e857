package attest_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/receipt"
)

const iss = "https://review.example"

var t0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

func keys(t testing.TB, ids ...string) []signing.Key {
	t.Helper()
	var ring []sealer.Key
	for _, id := range ids {
		ring = append(ring, sealer.Key{ID: id, Secret: []byte(strings.Repeat(id, 32))})
	}
	k, err := signing.Derive(ring)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// quorum is an approval of two signed-in reviewers (one on the page, one
// in Slack) with a context and a form.
func quorum() attest.Outcome {
	st := elicitation.State{
		ID: "el-1", Kind: elicitation.KindApproval, Owner: "agent-key", Status: elicitation.StatusConsumed,
		CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), RetainUntil: t0.Add(7 * 24 * time.Hour),
		Decision: elicitation.DecisionSubmitted, DecidedAt: t0.Add(2 * time.Minute), DecidedBy: "bob@example.com", DecidedVia: elicitation.ViaSlack,
		Approvals: 2, Approvers: []elicitation.Approval{{By: "alice@example.com", At: t0.Add(time.Minute)}, {By: "bob@example.com", At: t0.Add(2 * time.Minute)}},
	}
	return attest.Outcome{
		Result: elicitation.Result{State: st, Decision: st.Decision, Message: "Deploy v2?", Context: json.RawMessage(`{"b": 2, "a": [1.0, "x"]}`), Form: json.RawMessage(`{"reason":"ok"}`)},
		Trail: elicitation.AuditTrail{Entries: []elicitation.AuditEntry{
			{At: t0, Action: elicitation.ActionCreated, Principal: "agent-key"},
			{At: t0.Add(time.Minute), Action: elicitation.ActionApproved, Principal: "alice@example.com", Via: elicitation.ViaPage, Issuer: "https://idp.example"},
			{At: t0.Add(2 * time.Minute), Action: elicitation.ActionDecided, Principal: "bob@example.com", Via: elicitation.ViaSlack, Issuer: "https://slack.com"},
		}},
		Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod","version":2}`),
	}
}

// anonymous is a selection declined on the page of a deployment without
// sign-in.
func anonymous() attest.Outcome {
	st := elicitation.State{
		ID: "el-2", Kind: elicitation.KindSelection, Owner: elicitation.Anonymous, Status: elicitation.StatusConsumed,
		CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), RetainUntil: t0.Add(7 * 24 * time.Hour),
		Decision: elicitation.DecisionDeclined, DecidedAt: t0.Add(time.Minute), DecidedBy: elicitation.Reviewer, DecidedVia: elicitation.ViaPage,
	}
	return attest.Outcome{
		Result: elicitation.Result{State: st, Decision: st.Decision, Message: "Which?"},
		Trail: elicitation.AuditTrail{Entries: []elicitation.AuditEntry{
			{At: t0.Add(time.Minute), Action: elicitation.ActionDecided, Principal: elicitation.Reviewer, Via: elicitation.ViaPage},
		}},
	}
}

func TestIssue(t *testing.T) {
	t.Parallel()
	k := keys(t, "k1")
	is := attest.Issuer{Keys: k, Now: func() time.Time { return t0.Add(3 * time.Minute) }}
	tok, err := is.Issue(iss, quorum())
	if err != nil {
		t.Fatal(err)
	}
	c, err := receipt.Verify(tok, signing.JWKS(k), receipt.Expect{Issuer: iss, Txn: "el-1", Outcome: receipt.OutcomeApproved, Tool: "deploy", Arguments: json.RawMessage(`{"version":2.0, "env":"prod"}`), Now: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	ctxDigest, _ := receipt.Digest(json.RawMessage(`{"a":[1,"x"],"b":2}`))
	want := receipt.Claims{
		Issuer: iss, IssuedAt: t0.Add(3 * time.Minute).Unix(), Expiry: t0.Add(7 * 24 * time.Hour).Unix(), ID: c.ID,
		Txn: "el-1", Requester: "agent-key", Outcome: receipt.OutcomeApproved, Quorum: 2,
		Approvers: []receipt.Approver{
			{Principal: "alice@example.com", Issuer: "https://idp.example", At: t0.Add(time.Minute).Unix(), Via: "page", Decision: "approved"},
			{Principal: "bob@example.com", Issuer: "https://slack.com", At: t0.Add(2 * time.Minute).Unix(), Via: "slack", Decision: "approved"},
		},
	}
	gotJSON, _ := json.Marshal(c)
	var got receipt.Claims
	_ = json.Unmarshal(gotJSON, &got)
	got.AuthorizationDetails = nil
	wantJSON, _ := json.Marshal(want)
	if g, _ := json.Marshal(got); string(g) != string(wantJSON) {
		t.Errorf("claims\n got %s\nwant %s", g, wantJSON)
	}
	d, ok := c.Detail()
	if !ok || d.Message != "Deploy v2?" || d.Kind != "approval" || d.ContextSHA256 != ctxDigest || d.FormSHA256 == "" || d.Tool != "deploy" || len(c.ID) < 20 {
		t.Errorf("detail %+v", c.AuthorizationDetails)
	}

	// Without sign-in the receipt says so and names nobody.
	tok, err = is.Issue(iss, anonymous())
	if err != nil {
		t.Fatal(err)
	}
	c, err = receipt.Verify(tok, signing.JWKS(k), receipt.Expect{Issuer: iss, Outcome: receipt.OutcomeDeclined, Now: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Approvers) != 1 || !c.Approvers[0].Anonymous || c.Approvers[0].Principal != "" || c.Approvers[0].Issuer != "" || c.Approvers[0].Decision != "declined" || c.Quorum != 1 || c.SelectedIDs != nil {
		t.Errorf("anonymous decline: %+v", c)
	}
	if d, _ := c.Detail(); d.ContextSHA256 != "" || d.FormSHA256 != "" || d.ArgumentsSHA256 != "" {
		t.Errorf("digests of absent values: %+v", d)
	}

	// Nothing decided, nothing to attest.
	o := anonymous()
	o.Result.State.Decision, o.Result.State.Status = "", elicitation.StatusCanceled
	if _, err := is.Issue(iss, o); !errors.Is(err, attest.ErrNotFinal) {
		t.Errorf("a canceled request's receipt: %v", err)
	}
}

// RFC 8785: the same JSON value, however written, has one digest; another
// value another.
func TestDigest(t *testing.T) {
	t.Parallel()
	a, err := receipt.Digest(json.RawMessage(`{"b": [1e0, "\u00e9"], "a": null}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := receipt.Digest(json.RawMessage(`{"a":null,"b":[1,"é"]}`))
	c, _ := receipt.Digest(json.RawMessage(`{"a":null,"b":[2,"é"]}`))
	if a != b || a == c || len(a) != 64 {
		t.Errorf("digests %s %s %s", a, b, c)
	}
	if _, err := receipt.Digest(json.RawMessage(`{"a":`)); err == nil {
		t.Error("malformed JSON digested")
	}
}

// segments splits a compact JWS.
func segments(tok string) (header, payload map[string]any, sig string) {
	p := strings.Split(tok, ".")
	h, _ := base64.RawURLEncoding.DecodeString(p[0])
	b, _ := base64.RawURLEncoding.DecodeString(p[1])
	_ = json.Unmarshal(h, &header)
	_ = json.Unmarshal(b, &payload)
	return header, payload, p[2]
}

func enc(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// signRaw signs payload with key under header fields hdr (alg ES256).
func signRaw(t *testing.T, key signing.Key, payload map[string]any, hdr map[string]any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	for k, v := range hdr {
		opts.WithHeader(jose.HeaderKey(k), v)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key.Private}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(payload)
	jws, err := s.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := jws.CompactSerialize()
	return out
}

// Every claim altered in the payload breaks the signature; a receipt
// re-signed by a key outside the set, with another typ or alg, for
// another deployment, elicitation, tool or arguments, or expired, is
// refused with its reason.
func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	k := keys(t, "k1")
	set := signing.JWKS(k)
	other := keys(t, "k9")
	is := attest.Issuer{Keys: k, Now: func() time.Time { return t0 }}
	tok, err := is.Issue(iss, quorum())
	if err != nil {
		t.Fatal(err)
	}
	expect := receipt.Expect{Issuer: iss, Txn: "el-1", Tool: "deploy", Arguments: quorum().Arguments, Now: t0.Add(time.Hour)}
	if _, err := receipt.Verify(tok, set, expect); err != nil {
		t.Fatal(err)
	}
	header, payload, sig := segments(tok)
	for name, v := range payload {
		t.Run("altered "+name, func(t *testing.T) {
			p := map[string]any{}
			for k, w := range payload {
				p[k] = w
			}
			switch v := v.(type) {
			case string:
				p[name] = v + "x"
			case float64:
				p[name] = v + 1
			default:
				p[name] = []any{}
			}
			altered := enc(header) + "." + enc(p) + "." + sig
			if _, err := receipt.Verify(altered, set, expect); !errors.Is(err, receipt.ErrSignature) {
				t.Errorf("altered %s: %v", name, err)
			}
		})
	}
	typ := map[string]any{"typ": receipt.Type, "kid": k[0].ID}
	withExpiry := func(exp float64) map[string]any {
		p := map[string]any{}
		for k, v := range payload {
			p[k] = v
		}
		p["exp"] = exp
		return p
	}
	for _, tc := range []struct {
		name   string
		tok    string
		expect func(*receipt.Expect)
		want   error
	}{
		{name: "another key under a known kid", tok: signRaw(t, other[0], payload, typ), want: receipt.ErrSignature},
		{name: "an unknown key", tok: signRaw(t, other[0], payload, map[string]any{"typ": receipt.Type, "kid": other[0].ID}), want: receipt.ErrUnknownKey},
		{name: "no kid", tok: signRaw(t, k[0], payload, map[string]any{"typ": receipt.Type}), want: receipt.ErrUnknownKey},
		{name: "typ JWT", tok: signRaw(t, k[0], payload, map[string]any{"typ": "JWT", "kid": k[0].ID}), want: receipt.ErrType},
		{name: "no typ", tok: signRaw(t, k[0], payload, map[string]any{"kid": k[0].ID}), want: receipt.ErrType},
		{name: "alg none", tok: enc(map[string]any{"alg": "none", "typ": receipt.Type, "kid": k[0].ID}) + "." + enc(payload) + ".", want: receipt.ErrMalformed},
		{name: "alg HS256", tok: enc(map[string]any{"alg": "HS256", "typ": receipt.Type, "kid": k[0].ID}) + "." + enc(payload) + "." + sig, want: receipt.ErrMalformed},
		{name: "not a JWS", tok: "receipt", want: receipt.ErrMalformed},
		{name: "expired", tok: tok, expect: func(e *receipt.Expect) { e.Now = t0.Add(8 * 24 * time.Hour) }, want: receipt.ErrExpired},
		{name: "no exp", tok: signRaw(t, k[0], withExpiry(0), typ), want: receipt.ErrExpired},
		{name: "issued later", tok: tok, expect: func(e *receipt.Expect) { e.Now = t0.Add(-time.Hour) }, want: receipt.ErrIssuedLate},
		{name: "another issuer", tok: tok, expect: func(e *receipt.Expect) { e.Issuer = "https://other.example" }, want: receipt.ErrIssuer},
		{name: "no issuer expected", tok: tok, expect: func(e *receipt.Expect) { e.Issuer = "" }, want: receipt.ErrIssuer},
		{name: "another elicitation", tok: tok, expect: func(e *receipt.Expect) { e.Txn = "el-2" }, want: receipt.ErrTxn},
		{name: "another outcome", tok: tok, expect: func(e *receipt.Expect) { e.Outcome = receipt.OutcomeDeclined }, want: receipt.ErrOutcome},
		{name: "another tool", tok: tok, expect: func(e *receipt.Expect) { e.Tool = "delete" }, want: receipt.ErrTool},
		{name: "another call's arguments", tok: tok, expect: func(e *receipt.Expect) { e.Arguments = json.RawMessage(`{"env":"prod","version":3}`) }, want: receipt.ErrArguments},
		{name: "another upstream", tok: tok, expect: func(e *receipt.Expect) { e.Upstream = "https://other.example/mcp" }, want: receipt.ErrUpstream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := expect
			if tc.expect != nil {
				tc.expect(&e)
			}
			if _, err := receipt.Verify(tc.tok, set, e); !errors.Is(err, tc.want) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// A request whose context names the upstream call (as the proxy's gate
// writes it) gets a receipt naming that tool, arguments digest and
// upstream; a context that names no well-formed call names none.
func TestCallFromContext(t *testing.T) {
	t.Parallel()
	k := keys(t, "k1")
	set := signing.JWKS(k)
	is := attest.Issuer{Keys: k, Now: func() time.Time { return t0 }}
	args := json.RawMessage(`{"env":"prod","version":2,"token":"s3cret"}`)
	digest, err := receipt.Digest(args)
	if err != nil {
		t.Fatal(err)
	}
	withContext := func(ctx string) string {
		t.Helper()
		o := quorum()
		o.Tool, o.Arguments = "", nil
		o.Result.Context = json.RawMessage(ctx)
		tok, err := is.Issue(iss, o)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	up := "https://upstream.example/mcp"
	tok := withContext(`{"tool":"deploy","arguments":{"env":"prod","version":2,"token":"***"},"argumentsSha256":"` + digest + `","upstream":"` + up + `"}`)
	expect := receipt.Expect{Issuer: iss, Outcome: receipt.OutcomeApproved, Tool: "deploy", Arguments: args, Upstream: up, Now: t0.Add(time.Minute)}
	c, err := receipt.Verify(tok, set, expect)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := c.Detail(); d.Tool != "deploy" || d.ArgumentsSHA256 != digest || len(d.Locations) != 1 || d.Locations[0] != up {
		t.Errorf("detail %+v", d)
	}
	for _, tc := range []struct {
		name   string
		tok    string
		expect func(*receipt.Expect)
		want   error
	}{
		{name: "another upstream", tok: tok, expect: func(e *receipt.Expect) { e.Upstream = "https://upstream.example/other" }, want: receipt.ErrUpstream},
		{name: "the arguments with the masked value", tok: tok, expect: func(e *receipt.Expect) { e.Arguments = json.RawMessage(`{"env":"prod","version":2,"token":"***"}`) }, want: receipt.ErrArguments},
		{name: "no upstream named", tok: withContext(`{"tool":"deploy","argumentsSha256":"` + digest + `"}`), want: receipt.ErrUpstream},
		{name: "an upper-case digest", tok: withContext(`{"tool":"deploy","argumentsSha256":"` + strings.ToUpper(digest) + `"}`), want: receipt.ErrTool},
		{name: "a short digest", tok: withContext(`{"tool":"deploy","argumentsSha256":"` + digest[:10] + `"}`), want: receipt.ErrTool},
		{name: "no tool", tok: withContext(`{"argumentsSha256":"` + digest + `"}`), want: receipt.ErrTool},
		{name: "a context that is not an object", tok: withContext(`["deploy"]`), want: receipt.ErrTool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := expect
			if tc.expect != nil {
				tc.expect(&e)
			}
			if _, err := receipt.Verify(tc.tok, set, e); !errors.Is(err, tc.want) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// After a rotation the new key signs and the previous key's receipts
// still verify with the published set; a set without the old key refuses
// them.
func TestRotation(t *testing.T) {
	t.Parallel()
	old := keys(t, "k1")
	tok, err := attest.Issuer{Keys: old, Now: func() time.Time { return t0 }}.Issue(iss, quorum())
	if err != nil {
		t.Fatal(err)
	}
	rotated := keys(t, "k2", "k1")
	expect := receipt.Expect{Issuer: iss, Now: t0.Add(time.Hour)}
	if _, err := receipt.Verify(tok, signing.JWKS(rotated), expect); err != nil {
		t.Errorf("the previous key's receipt after a rotation: %v", err)
	}
	fresh, _ := attest.Issuer{Keys: rotated, Now: func() time.Time { return t0 }}.Issue(iss, quorum())
	if h, _, _ := segments(fresh); h["kid"] != rotated[0].ID {
		t.Errorf("a rotated keyring signs with %v, not its current key %s", h["kid"], rotated[0].ID)
	}
	if _, err := receipt.Verify(tok, signing.JWKS(keys(t, "k2")), expect); !errors.Is(err, receipt.ErrUnknownKey) {
		t.Errorf("a receipt of a retired key: %v", err)
	}
}

// What a receipt adds to elicit_result (signing, with the digests), and
// what checking one costs a verifier.
func BenchmarkIssue(b *testing.B) {
	k, _ := signing.Derive([]sealer.Key{{ID: "k1", Secret: []byte(strings.Repeat("k", 32))}})
	is := attest.Issuer{Keys: k}
	o := quorum()
	for b.Loop() {
		if _, err := is.Issue(iss, o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	k, _ := signing.Derive([]sealer.Key{{ID: "k1", Secret: []byte(strings.Repeat("k", 32))}})
	o := quorum()
	o.Result.State.RetainUntil = time.Now().Add(time.Hour)
	tok, _ := attest.Issuer{Keys: k}.Issue(iss, o)
	set := signing.JWKS(k)
	expect := receipt.Expect{Issuer: iss, Tool: "deploy", Arguments: o.Arguments}
	for b.Loop() {
		if _, err := receipt.Verify(tok, set, expect); err != nil {
			b.Fatal(err)
		}
	}
}
