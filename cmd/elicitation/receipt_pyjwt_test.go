package main

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

	"github.com/go-jose/go-jose/v4"

	"github.com/mcp-elicitation/elicitation/internal/mcptools/pushtest"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// verdicts runs a receipt check script (testdata) on tokens against the
// key set m publishes: one JSON line per token.
func verdicts(t *testing.T, m *Main, tokens []string, cmd ...string) []map[string]any {
	t.Helper()
	var stderr bytes.Buffer
	run := exec.Command(cmd[0], append(append(cmd[1:], m.ReviewBase+signing.JWKSPath, m.ReviewBase), tokens...)...)
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", strings.Join(cmd, " "), err, out, stderr.Bytes())
	}
	var vs []map[string]any
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s printed %q", cmd[0], sc.Text())
		}
		vs = append(vs, v)
	}
	if len(vs) != len(tokens) {
		t.Fatalf("%s: %d verdicts for %d tokens:\n%s", cmd[0], len(vs), len(tokens), out)
	}
	return vs
}

// Receipts the local server issues (an approval and a decline, decided on
// the page) verify with PyJWT, typ checked explicitly, as with jose and the
// Go verifier; the approval with each claim altered in turn, and the same
// claims re-signed by the deployment's key with typ JWT (what an access
// token of the same keys carries), are refused by all three.
func TestReceiptsVerifiedByPyJWT(t *testing.T) {
	t.Parallel()
	python := testenv.PyJWT(t)
	m := start(t, "--data-dir", t.TempDir(), "--token-keys", ringKey("k1"))
	s := agent(t, m.MCPURL)
	issued := map[string]string{}
	for _, decision := range []string{"submitted", "declined"} {
		c := call(t, s, "elicit_approval", map[string]any{"message": "Ship build 7?", "context": map[string]any{"build": 7}})
		pushtest.Decide(t, c["reviewUrl"].(string), decision)
		issued[decision], _ = call(t, s, "elicit_result", map[string]any{"elicitationId": c["elicitationId"]})["receipt"].(string)
	}

	parts := strings.Split(issued["submitted"], ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	tokens := []string{issued["submitted"], issued["declined"]}
	var names []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range claims {
			if !yield(k) {
				return
			}
		}
	}) {
		altered := map[string]any{}
		for k, v := range claims {
			altered[k] = v
		}
		switch v := claims[name].(type) {
		case string:
			altered[name] = v + "x"
		case float64:
			altered[name] = v + 1
		default:
			altered[name] = []any{}
		}
		b, _ := json.Marshal(altered)
		names = append(names, "altered "+name)
		tokens = append(tokens, parts[0]+"."+base64.RawURLEncoding.EncodeToString(b)+"."+parts[2])
	}
	keys, err := m.app.SigningKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: keys[0].Private}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", keys[0].ID))
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(raw)
	if err != nil {
		t.Fatal(err)
	}
	typJWT, _ := jws.CompactSerialize()
	names, tokens = append(names, "typ JWT"), append(tokens, typJWT)

	set, err := receipt.FetchKeys(context.Background(), nil, m.ReviewBase+signing.JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	py := verdicts(t, m, tokens, python, filepath.Join(testenv.Root(t), "cmd", "elicitation", "testdata", "receipt.py"))
	for i, want := range []string{receipt.OutcomeApproved, receipt.OutcomeDeclined} {
		c, err := receipt.Verify(tokens[i], set, receipt.Expect{Issuer: m.ReviewBase, Outcome: want})
		if err != nil || py[i]["ok"] != true || py[i]["outcome"] != want || py[i]["txn"] != c.Txn || py[i]["kid"] != "es256-k1" {
			t.Errorf("the %s receipt: %v in PyJWT, %v in Go", want, py[i], err)
		}
	}
	var js []map[string]any
	if !testing.Short() {
		node := testenv.Node(t)
		testenv.NodeModule(t, "jose/package.json")
		js = verdicts(t, m, tokens, node, filepath.Join(testenv.Root(t), "cmd", "elicitation", "testdata", "receipt.mjs"))
	}
	for i, name := range names {
		_, err := receipt.Verify(tokens[i+2], set, receipt.Expect{Issuer: m.ReviewBase})
		refused := err != nil && py[i+2]["ok"] == false
		var jsv map[string]any // jose's verdict; none under -short
		if js != nil {
			jsv = js[i+2]
			refused = refused && jsv["ok"] == false
		}
		if !refused {
			t.Errorf("%s: PyJWT %v, jose %v, Go %v; want all refused", name, py[i+2], jsv, err)
		}
	}
	if e := fmt.Sprint(py[len(py)-1]["error"]); !strings.Contains(e, "typ") {
		t.Errorf("typ JWT refused by PyJWT for another reason: %s", e)
	}
}
