package elicitation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// openExampleStore opens an embedded store in a fresh directory; close
// removes both.
func openExampleStore() (store *boltstore.Store, close func()) {
	dir, err := os.MkdirTemp("", "elicitation-example")
	if err != nil {
		panic(err)
	}
	store, err = boltstore.Open(filepath.Join(dir, "elicitation.db"))
	if err != nil {
		panic(err)
	}
	return store, func() { _ = store.Close(); _ = os.RemoveAll(dir) }
}

// The Service is the domain: an agent (a principal) creates a request, a
// reviewer decides it with the review key, and the agent waits for the
// decision and reads the result. The MCP tools, the review pages and the
// proxy are adapters around these calls.
func ExampleService() {
	ctx := context.Background()
	store, closeStore := openExampleStore()
	defer closeStore()
	svc := elicitation.NewService(elicitation.Config{Store: store})

	// The agent asks (elicit_approval).
	created, err := svc.Create(ctx, "deploy-bot", elicitation.KindApproval, elicitation.Input{
		Message: "Deploy api v1.3 to production?",
		Context: json.RawMessage(`{"service":"api","version":"1.3"}`),
	})

	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created:", created.State.Status)

	// The agent waits (elicit_await), while the reviewer decides on the
	// review page: the review key is the reviewer's capability.
	decided := make(chan elicitation.State, 1)
	svc.AwaitFunc(ctx, "deploy-bot", created.State.ID, 5*time.Second, func(st elicitation.State, err error) {
		decided <- st
	})
	if _, err := svc.Submit(ctx, created.State.ID, created.ReviewKey, elicitation.Submission{ID: "page-1", Decision: elicitation.DecisionSubmitted, Comment: "after 18:00"}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("awaited:", (<-decided).Status)

	// The agent reads the outcome (elicit_result), which consumes it.
	res, err := svc.Result(ctx, "deploy-bot", created.State.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("result:", res.Decision, res.Comment, res.State.Status)

	// Anyone else is told there is no such request.
	_, err = svc.Status(ctx, "someone-else", created.State.ID)
	fmt.Println("another principal:", elicitation.CodeOf(err))
	// Output:
	// created: pending
	// awaited: submitted
	// result: submitted after 18:00 consumed
	// another principal: not_found
}

// A Store is the contract every backend keeps (package storetest holds
// both stores to it): a request is created whole, read by its small state,
// resolved exactly once by a conditional write, and watched: Watch wakes
// the caller when the state may have changed, and the caller reads it.
func ExampleStore() {
	ctx := context.Background()
	var store elicitation.Store
	bolt, closeStore := openExampleStore()
	defer closeStore()
	store = bolt

	p, err := elicitation.Input{Message: "Rotate the key?", Context: json.RawMessage(`{}`)}.Payload(elicitation.KindApproval)
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Now().UTC()
	r := elicitation.Request{Payload: p, State: elicitation.State{
		ID: elicitation.NewID(), Kind: elicitation.KindApproval, Owner: "ops-bot", Status: elicitation.StatusPending,
		CreatedAt: now, ExpiresAt: now.Add(time.Hour), RetainUntil: now.Add(time.Hour + elicitation.DefaultRetention),
	}}
	if err := store.Create(ctx, r, elicitation.AuditEntry{At: now, Action: elicitation.ActionCreated, Principal: "ops-bot"}); err != nil {
		fmt.Println(err)
		return
	}

	woken := make(chan struct{}, 1)
	stop := store.Watch(r.State.ID, nil, func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	defer stop()

	decline := elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "page-1", At: now.Add(time.Minute), By: elicitation.Reviewer}
	if _, err := store.Resolve(ctx, r.State.ID, decline); err != nil {
		fmt.Println(err)
		return
	}
	<-woken
	st, err := store.State(ctx, r.State.ID)
	fmt.Println("after the wake:", st.Status, err)

	// Exactly once: a cancel after the decision conflicts; the same
	// submission sent again is the success it was.
	_, err = store.Resolve(ctx, r.State.ID, elicitation.Resolution{Status: elicitation.StatusCanceled, At: now.Add(2 * time.Minute), By: "ops-bot"})
	fmt.Println("a cancel after it:", elicitation.CodeOf(err))
	_, err = store.Resolve(ctx, r.State.ID, decline)
	fmt.Println("the same decline again:", err)
	// Output:
	// after the wake: declined <nil>
	// a cancel after it: conflict
	// the same decline again: <nil>
}
