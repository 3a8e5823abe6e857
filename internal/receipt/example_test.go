package receipt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/receipt"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/signing"
)

// An upstream server checks that a call it received was approved: it
// fetches the deployment's key set once (and again on an unknown kid),
// and verifies the receipt against the deployment, the tool and exactly
// the arguments it was called with.
func ExampleVerify() {
	keys, _ := signing.Derive([]sealer.Key{{ID: "k1", Secret: []byte("a secret of at least thirty-two bytes")}})
	deployment := httptest.NewServer(signing.Handler(keys))
	defer deployment.Close()
	// The deployment issued this receipt with elicit_result.
	decided := time.Now()
	outcome := quorum()
	outcome.Result.State.RetainUntil = decided.Add(time.Hour)
	token, _ := receipt.Issuer{Keys: keys}.Issue(deployment.URL, outcome)

	set, err := receipt.FetchKeys(context.Background(), nil, deployment.URL+signing.JWKSPath)
	if err != nil {
		panic(err)
	}
	claims, err := receipt.Verify(token, set, receipt.Expect{
		Issuer: deployment.URL, Outcome: receipt.OutcomeApproved,
		Tool: "deploy", Arguments: json.RawMessage(`{"version": 2, "env": "prod"}`),
	})
	fmt.Println(claims.Outcome, len(claims.Approvers), "of", claims.Quorum, err)

	_, err = receipt.Verify(token, set, receipt.Expect{
		Issuer: deployment.URL, Tool: "deploy", Arguments: json.RawMessage(`{"version": 3, "env": "prod"}`),
	})
	fmt.Println(err)
	// Output:
	// approved 2 of 2 <nil>
	// for another call's arguments
}
