package receipt_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// verifyErrors are the reasons Verify names.
var verifyErrors = []error{receipt.ErrMalformed, receipt.ErrType, receipt.ErrUnknownKey, receipt.ErrSignature, receipt.ErrIssuer,
	receipt.ErrExpired, receipt.ErrIssuedLate, receipt.ErrTxn, receipt.ErrOutcome, receipt.ErrTool, receipt.ErrArguments, receipt.ErrUpstream}

func namedRefusal(err error) bool {
	for _, e := range verifyErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzVerify checks the offline verifier an upstream runs on a receipt it
// was handed. A receipt the deployment signed, with any claims, verifies
// exactly when its issuer, times, elicitation, outcome, tool, arguments
// and upstream are the ones expected, and then gives back its claims
// unchanged; every refusal wraps one of the named errors. The receipt
// with one character changed, and any text given as a receipt, are refused
// with a named error.
func FuzzVerify(f *testing.F) {
	f.Add("el-1", receipt.OutcomeApproved, "deploy", `{"env":"prod","version":2}`, "https://up.example/mcp", int64(0), int64(3600), "el-1", `{"version":2.0,"env":"prod"}`, 10, byte('x'))
	f.Add("el-2", receipt.OutcomeDeclined, "", "", "", int64(-7200), int64(-3600), "el-2", "", 0, byte('.'))
	f.Add("el-3", "approved", "rm", `[1e400]`, "", int64(120), int64(60), "", `{}`, 200, byte('A'))
	f.Add("", "", "t", `{"a":"\ud800"}`, "u", int64(-59), int64(59), "x", `null`, -1, byte(0))
	keys, err := signing.Derive([]sealer.Key{{ID: "k1", Secret: []byte("a secret of at least thirty-two bytes")}})
	if err != nil {
		f.Fatal(err)
	}
	set := signing.JWKS(keys)
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	const iss = "https://elicitation.example.com"
	f.Fuzz(func(t *testing.T, txn, outcome, tool, args, upstream string, iat, exp int64, wantTxn, wantArgs string, flip int, with byte) {
		iat, exp = now.Unix()+iat%(1<<36), now.Unix()+exp%(1<<36) // within ±2000 years
		// Claims are JSON text: what is not UTF-8 is U+FFFD on both sides.
		txn, outcome, tool, upstream, wantTxn = asJSON(txn), asJSON(outcome), asJSON(tool), asJSON(upstream), asJSON(wantTxn)
		c := receipt.Claims{Issuer: iss, IssuedAt: iat, Expiry: exp, ID: "r-1", Txn: txn, Requester: "agent", Outcome: outcome, Quorum: 1,
			Approvers: []receipt.Approver{{Principal: "alice@example.com", At: iat, Via: "page", Decision: outcome}}}
		digest, _ := receipt.Digest(json.RawMessage(args)) // "" when args do not read
		if tool != "" || upstream != "" {
			d := receipt.Detail{Type: receipt.DetailType, Kind: "approval", Tool: tool, ArgumentsSHA256: digest}
			if upstream != "" {
				d.Locations = []string{upstream}
			}
			c.AuthorizationDetails = []receipt.Detail{d}
		}
		token, err := attest.Sign(keys[0], c)
		if err != nil {
			t.Fatal(err)
		}
		expect := receipt.Expect{Issuer: iss, Txn: wantTxn, Outcome: outcome, Tool: tool, Arguments: json.RawMessage(wantArgs), Upstream: upstream, Now: now}
		wantDigest, werr := receipt.Digest(json.RawMessage(wantArgs))
		ok := (wantTxn == "" || wantTxn == txn) && now.Unix() < exp+60 && exp != 0 && iat <= now.Unix()+60 &&
			(tool == "" && upstream == "" && wantArgs == "" || (tool != "" || upstream != "") && (wantArgs == "" || werr == nil && wantDigest == digest))
		got, err := receipt.Verify(token, set, expect)
		switch {
		case ok && err != nil:
			t.Fatalf("a receipt that meets what is expected refused: %v", err)
		case !ok && err == nil:
			t.Fatalf("a receipt accepted against %+v: %+v", expect, c)
		case err != nil && !namedRefusal(err) && !(wantArgs != "" && werr != nil):
			t.Fatalf("refusal names no reason: %v", err)
		case err == nil && !reflect.DeepEqual(got, c):
			t.Fatalf("claims changed: %+v, want %+v", got, c)
		}
		if flip >= 0 && flip < len(token) && token[flip] != with {
			altered := token[:flip] + string(with) + token[flip+1:]
			if _, err := receipt.Verify(altered, set, receipt.Expect{Issuer: iss, Now: now}); err == nil {
				if !sameSignedBytes(altered, token) {
					t.Fatalf("the receipt with byte %d changed to %q verifies", flip, with)
				}
			} else if !namedRefusal(err) {
				t.Fatalf("altered receipt: refusal names no reason: %v", err)
			}
		}
		if _, err := receipt.Verify(txn+"."+args+"."+tool, set, expect); err == nil || !namedRefusal(err) {
			t.Fatalf("text given as a receipt: %v, want a named refusal", err)
		}
	})
}

// asJSON is s as a JSON string carries it.
func asJSON(s string) string {
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &s)
	return s
}

// sameSignedBytes reports whether two compact tokens decode to the same
// header, payload and signature (base64url's unused low bits of the last
// character can differ without changing a byte).
func sameSignedBytes(a, b string) bool {
	ja, err1 := jose.ParseSignedCompact(a, []jose.SignatureAlgorithm{jose.ES256})
	jb, err2 := jose.ParseSignedCompact(b, []jose.SignatureAlgorithm{jose.ES256})
	return err1 == nil && err2 == nil && string(ja.UnsafePayloadWithoutVerification()) == string(jb.UnsafePayloadWithoutVerification()) &&
		string(ja.Signatures[0].Signature) == string(jb.Signatures[0].Signature)
}
