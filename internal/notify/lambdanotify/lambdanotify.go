// Package lambdanotify is the notify Lambda function's handler: the
// deliverer driven by the table's stream (each new outbox item, at once)
// and by a schedule (the sweep: expiry notices, retries, anything the
// stream's attempts left).
package lambdanotify

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// targetReader fills in the targets of deliveries named by their keys
// (dynamostore.Store.DeliveryTargets).
type targetReader interface {
	DeliveryTargets(ctx context.Context, ds []elicitation.Delivery) error
}

// Handler handles both of the function's triggers.
type Handler struct {
	D   *notify.Deliverer
	Log *slog.Logger
	// Sweep, if set, runs on each scheduled invocation before the due
	// deliveries (the metrics' expiry sweep); its failure is logged, and
	// the deliveries go on.
	Sweep func(ctx context.Context) error
}

// Result is the answer to an invocation: how many deliveries it attempted
// (for the log; Lambda retries nothing by it).
type Result struct {
	Attempted int `json:"attempted"`
}

// Handle is the Lambda handler: a DynamoDB stream batch (an object with
// Records) is attempted (Stream); anything else (the schedule's event)
// runs the sweep.
func (h *Handler) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	var probe struct {
		Records []json.RawMessage `json:"Records"`
	}
	if err := json.Unmarshal(raw, &probe); err == nil && probe.Records != nil {
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("decode the stream batch: %w", err)
		}
		return h.Stream(ctx, ev), nil
	}
	if h.Sweep != nil {
		if err := h.Sweep(ctx); err != nil {
			h.Log.ErrorContext(ctx, "expiry sweep failed", "err", err)
		}
	}
	n, err := h.D.DeliverDue(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	return Result{Attempted: n}, nil
}

// Stream attempts the delivery of each new outbox item in the batch once,
// each target in its own lane (notify.AttemptAll), each send bounded by
// notify.StreamAttemptTimeout, not the sweep's notify.AttemptTimeout: a
// hanging target holds a batch for one stream attempt's bound at most (its
// lane starts no more attempts while its first ones are out, and they rest
// it), and a target resting after failures in a row not at all. It reports
// no record failed, ever: a failed attempt backs off in the outbox like
// any other (notify.Deliverer's one policy), a store call that failed
// leaves its delivery there, and the sweep retries both; Lambda retrying
// the record would be a second policy. Records that are not new outbox
// items, or not due yet, are left to the sweep.
func (h *Handler) Stream(ctx context.Context, ev events.DynamoDBEvent) Result {
	now := h.D.Now
	var ds []elicitation.Delivery
	for _, r := range ev.Records {
		if r.EventName != string(events.DynamoDBOperationTypeInsert) {
			continue
		}
		pk, sk := r.Change.Keys["pk"], r.Change.Keys["sk"]
		if pk.DataType() != events.DataTypeString || !dynamostore.IsOutboxKey(pk.String()) || sk.DataType() != events.DataTypeString {
			continue
		}
		d, err := dynamostore.DeliveryAt(sk.String())
		if err != nil {
			h.Log.WarnContext(ctx, "stream record with a malformed outbox key", "sk", sk.String())
			continue
		}
		if now != nil && d.DueAt.After(now()) {
			continue // an expiry notice, scheduled: the sweep sends it when due
		}
		ds = append(ds, d)
	}
	// Every target in its own lane (a record names its delivery by keys
	// only: the store says whose it is).
	if r, ok := h.D.Store.(targetReader); ok {
		if err := r.DeliveryTargets(ctx, ds); err != nil {
			h.Log.WarnContext(ctx, "read the batch's delivery targets; the batch shares one lane", "err", err)
		}
	}
	outs, errs := h.D.AttemptAll(ctx, ds, true) // a stream batch's attempts
	n := 0
	for i := range ds {
		switch {
		case errs[i] != nil:
			h.Log.ErrorContext(ctx, "notification attempt; the sweep retries it", "deliveryId", ds[i].ID, "err", errs[i])
		case outs[i] != notify.Skipped && outs[i] != notify.Deferred:
			n++
		}
	}
	return Result{Attempted: n}
}
