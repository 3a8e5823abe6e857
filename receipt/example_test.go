package receipt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// An upstream server checks that a call it received was approved: it
// fetches the deployment's key set once (and again on an unknown kid),
// and verifies the receipt against the deployment, the tool and exactly
// the arguments it was called with.
func ExampleVerify() {
	// A deployment, and a receipt it issued with elicit_result (here
	// signed by hand, with the claims a reviewer's approval gets).
	keys, _ := signing.Derive([]sealer.Key{{ID: "k1", Secret: []byte("a secret of at least thirty-two bytes")}})
	deployment := httptest.NewServer(signing.Handler(keys))
	defer deployment.Close()
	args, _ := receipt.Digest(json.RawMessage(`{"env": "prod", "version": 2}`))
	now := time.Now().Unix()
	token, _ := attest.Sign(keys[0], receipt.Claims{
		Issuer: deployment.URL, IssuedAt: now, Expiry: now + 3600, ID: "r-1", Txn: "el-1",
		Requester: "agent-key", Outcome: receipt.OutcomeApproved, Quorum: 1,
		Approvers:            []receipt.Approver{{Principal: "alice@example.com", Issuer: "https://idp.example", At: now, Via: "page", Decision: receipt.OutcomeApproved}},
		AuthorizationDetails: []receipt.Detail{{Type: receipt.DetailType, Kind: "approval", Message: "Deploy v2?", Tool: "deploy", ArgumentsSHA256: args}},
	})

	// The upstream's check.
	set, err := receipt.FetchKeys(context.Background(), nil, deployment.URL+signing.JWKSPath)
	if err != nil {
		panic(err)
	}
	claims, err := receipt.Verify(token, set, receipt.Expect{
		Issuer: deployment.URL, Outcome: receipt.OutcomeApproved,
		Tool: "deploy", Arguments: json.RawMessage(`{"version": 2, "env": "prod"}`),
	})
	fmt.Println(claims.Outcome, "by", claims.Approvers[0].Principal, err)

	_, err = receipt.Verify(token, set, receipt.Expect{
		Issuer: deployment.URL, Tool: "deploy", Arguments: json.RawMessage(`{"version": 3, "env": "prod"}`),
	})
	fmt.Println(err)
	// Output:
	// approved by alice@example.com <nil>
	// for another call's arguments
}
