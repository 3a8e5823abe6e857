package gate_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// upstreamURL is the upstream the gate of approvedCall names.
const upstreamURL = "https://upstream.example/mcp"

// approved is a call the real gate forwarded after a reviewer approved
// it on the review page: its tool, exact arguments and receipt, and the
// deployment that signed it.
type approved struct {
	tool    string
	args    json.RawMessage
	receipt string
	issuer  string
	keys    []signing.Key
}

// approvedCall runs the gate over the embedded service (in process) on a
// confirmed call, approves it as a reviewer and returns what the gate
// forwards.
func approvedCall(t *testing.T) approved {
	t.Helper()
	local := Start(t)
	yaml := "upstream:\n  url: " + upstreamURL + "\nelicitation_service:\n  url: http://unused.invalid/mcp\n  wait_seconds: 1\n" +
		"tools:\n  deploy:\n    confirm_if:\n      always: true\n"
	cfg, err := config.ParseWith([]byte(yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := gate.New(gate.Options{Config: cfg, Service: local.Embedded.Service(elicitation.Client{Name: "proxy", Version: "test"})})
	tool := gate.Tool{Name: "deploy"}
	args := `{"version": 7, "env": "prod", "note": "café ☕", "canary": false, "tags": ["a", "b"], "owner": null}`
	p := payload(t, check(t, g, tool, args, nil))
	local.Decide(t, p.ReviewURL, elicitation.DecisionSubmitted, nil)
	d := check(t, g, tool, args, nil)
	if d.Result != nil || d.Receipt == "" {
		t.Fatalf("the approved call: %+v", d)
	}
	keys, err := local.Embedded.App.SigningKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return approved{tool: "deploy", args: d.Args, receipt: d.Receipt, issuer: local.Base, keys: keys}
}

// refusals are receipts a verifier must refuse, by name: the approved
// receipt with each claim altered in turn (its signature kept), and
// receipts validly signed but with typ JWT (an access token's), by a key
// outside the set, or expired.
func (a approved) refusals(t *testing.T) (names, tokens []string) {
	t.Helper()
	parts := strings.Split(a.receipt, ".")
	var header, claims map[string]any
	for i, v := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || json.Unmarshal(b, v) != nil {
			t.Fatalf("receipt segment %d: %v", i, err)
		}
	}
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	with := func(name string, v any) map[string]any {
		c := map[string]any{}
		for k, w := range claims {
			c[k] = w
		}
		c[name] = v
		return c
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range claims {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range keys {
		var v any
		switch w := claims[name].(type) {
		case string:
			v = w + "x"
		case float64:
			v = w + 1
		case []any:
			v = append(slices.Clone(w), map[string]any{"type": receipt.DetailType})
		default:
			v = []any{}
		}
		names = append(names, "altered "+name)
		tokens = append(tokens, parts[0]+"."+enc(with(name, v))+"."+parts[2])
	}
	other, err := signing.Derive([]sealer.Key{{ID: "other", Secret: []byte(strings.Repeat("o", 32))}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name   string
		key    signing.Key
		header map[string]any
		claims map[string]any
	}{
		{"typ JWT", a.keys[0], map[string]any{"typ": "JWT", "kid": a.keys[0].ID}, claims},
		{"a key outside the set", other[0], map[string]any{"typ": receipt.Type, "kid": other[0].ID}, claims},
		{"expired", a.keys[0], map[string]any{"typ": receipt.Type, "kid": a.keys[0].ID}, with("exp", float64(time.Now().Add(-time.Hour).Unix()))},
	} {
		names = append(names, s.name)
		tokens = append(tokens, signWith(t, s.key, s.header, s.claims))
	}
	return names, tokens
}

func signWith(t *testing.T, key signing.Key, header, claims map[string]any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	for k, v := range header {
		opts.WithHeader(jose.HeaderKey(k), v)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key.Private}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(claims)
	jws, err := s.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkIn runs an upstream's check script (testdata, the one docs/gate.md
// shows) on tokens for the call tool(args) at upstream, and returns its
// verdicts, one JSON line each.
func checkIn(t *testing.T, cmd []string, a approved, upstream string, args json.RawMessage, tokens []string) []map[string]any {
	t.Helper()
	argv := append(cmd[1:], a.issuer+signing.JWKSPath, a.issuer, upstream, a.tool, string(args))
	var stderr bytes.Buffer
	run := exec.Command(cmd[0], append(argv, tokens...)...)
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", strings.Join(cmd, " "), err, out, stderr.Bytes())
	}
	var verdicts []map[string]any
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s printed %q: %v", cmd[0], sc.Text(), err)
		}
		verdicts = append(verdicts, v)
	}
	if len(verdicts) != len(tokens) {
		t.Fatalf("%s: %d verdicts for %d receipts:\n%s", strings.Join(cmd, " "), len(verdicts), len(tokens), out)
	}
	return verdicts
}

// checkedLikeGo runs the check script cmd on the gate's receipt and on
// every refusal, and the Go verifier beside it: the receipt is accepted
// by both, for exactly its call; each refusal, another call's arguments
// and another upstream are refused by both.
func checkedLikeGo(t *testing.T, cmd []string) {
	a := approvedCall(t)
	names, bad := a.refusals(t)
	set, err := receipt.FetchKeys(context.Background(), nil, a.issuer+signing.JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	expect := receipt.Expect{Issuer: a.issuer, Outcome: receipt.OutcomeApproved, Tool: a.tool, Arguments: a.args, Upstream: upstreamURL}
	verdicts := checkIn(t, cmd, a, upstreamURL, a.args, append([]string{a.receipt}, bad...))
	c, err := receipt.Verify(a.receipt, set, expect)
	if err != nil || verdicts[0]["ok"] != true || verdicts[0]["txn"] != c.Txn {
		t.Fatalf("the gate's receipt: %v in Go, %v in %s", err, verdicts[0], cmd[0])
	}
	for i, name := range names {
		_, err := receipt.Verify(bad[i], set, expect)
		if v := verdicts[i+1]; v["ok"] != false || err == nil {
			t.Errorf("%s: %v in %s, %v in Go; want both refused", name, v, cmd[0], err)
		}
		if name == "typ JWT" && !strings.Contains(fmt.Sprint(verdicts[i+1]["error"]), "typ") {
			t.Errorf("typ JWT refused for another reason: %v", verdicts[i+1])
		}
	}
	for _, c := range []struct {
		name, upstream, args, want string
	}{
		{"another call's arguments", upstreamURL, `{"version": 8, "env": "prod", "note": "café ☕", "canary": false, "tags": ["a", "b"], "owner": null}`, "another call's arguments"},
		{"another upstream", "https://other.example/mcp", string(a.args), "another upstream"},
	} {
		v := checkIn(t, cmd, a, c.upstream, json.RawMessage(c.args), []string{a.receipt})[0]
		if v["ok"] != false || !strings.Contains(fmt.Sprint(v["error"]), c.want) {
			t.Errorf("%s: %v in %s", c.name, v, cmd[0])
		}
	}
}

// PyJWT (Python), as docs/gate.md shows it, typ checked explicitly.
func TestReceiptCheckedByPyJWT(t *testing.T) {
	t.Parallel()
	checkedLikeGo(t, []string{testenv.PyJWT(t), filepath.Join(testenv.Root(t), "internal", "proxy", "gate", "testdata", "check_receipt.py")})
}

// jose (TypeScript, run by Node 22, which strips the types), as
// docs/gate.md shows it.
func TestReceiptCheckedByJose(t *testing.T) {
	t.Parallel()
	node := testenv.Node22(t)
	testenv.NodeModule(t, "jose/package.json")
	checkedLikeGo(t, []string{node, filepath.Join(testenv.Root(t), "internal", "proxy", "gate", "testdata", "check-receipt.mts")})
}
