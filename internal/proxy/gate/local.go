package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// localService is the embedded elicitation service called in process:
// the elicitation.Service methods that its MCP tools call, without the
// MCP session between the gate and the service. Its requests are owned by
// the anonymous principal, as the tools' are for a caller without an API
// key.
type localService struct {
	app *compose.App
	// client names the proxy in each request, as its MCP clientInfo does.
	client elicitation.Client
	// receipts signs each outcome's receipt, as elicit_result does, for
	// the deployment at issuer.
	issuer   string
	receipts attest.Issuer
}

var _ Service = (*localService)(nil)

// noted carries the gate's audit note (withNote) to the service.
func noted(ctx context.Context) context.Context {
	if note := noteFrom(ctx); note != "" {
		return elicitation.WithAuditNote(ctx, note)
	}
	return ctx
}

// Approval creates an approval, as elicit_approval does.
func (s *localService) Approval(ctx context.Context, in ApprovalRequest) (Ticket, error) {
	var view json.RawMessage
	if in.Context != nil {
		b, err := json.Marshal(in.Context)
		if err != nil {
			return Ticket{}, fmt.Errorf("elicitation service: elicit_approval: the context: %w", err)
		}
		view = b
	}
	c, err := s.app.Service.Create(noted(ctx), "", elicitation.KindApproval, elicitation.Input{
		Message: in.Message, Context: view, RequestedSchema: in.Schema, TimeoutSeconds: in.TimeoutSeconds,
		Reviewers: in.Reviewers, Client: s.client, Notify: elicitation.Notify{ReviewLink: s.reviewURL},
	})

	return s.ticket(ctx, "elicit_approval", c, err)
}

// Selection creates a selection of one option, as elicit_selection does.
func (s *localService) Selection(ctx context.Context, in SelectionRequest) (Ticket, error) {
	opts := make([]json.RawMessage, len(in.Options))
	for i, o := range in.Options {
		b, err := json.Marshal(o)
		if err != nil {
			return Ticket{}, fmt.Errorf("elicitation service: elicit_selection: option %d: %w", i, err)
		}
		opts[i] = b
	}
	c, err := s.app.Service.Create(noted(ctx), "", elicitation.KindSelection, elicitation.Input{
		Message: in.Message, Options: opts, TimeoutSeconds: in.TimeoutSeconds,
		Reviewers: in.Reviewers, Client: s.client, Notify: elicitation.Notify{ReviewLink: s.reviewURL},
	})

	return s.ticket(ctx, "elicit_selection", c, err)
}

func (s *localService) reviewURL(id, key string) string { return s.app.ReviewURL(nil, id, key) }

// ticket is a created request's ticket; the service's OnCreated hears of
// it, as the MCP tools tell it.
func (s *localService) ticket(ctx context.Context, tool string, c elicitation.Created, err error) (Ticket, error) {
	if err != nil {
		return Ticket{}, fmt.Errorf("elicitation service: %s: %w", tool, err)
	}
	u := s.reviewURL(c.State.ID, c.ReviewKey)
	if s.app.OnCreated != nil {
		s.app.OnCreated(ctx, c.State.ID, u)
	}
	return Ticket{ID: c.State.ID, ReviewURL: u, ExpiresAt: c.State.ExpiresAt.UTC().Format(time.RFC3339Nano)}, nil
}

// Await waits as elicit_await does.
func (s *localService) Await(ctx context.Context, id string, wait time.Duration) (string, error) {
	st, err := s.app.Service.Await(noted(ctx), "", id, max(wait, time.Nanosecond))
	if err != nil {
		return "", localGone("elicit_await", err)
	}
	return string(st.Status), nil
}

// Result reads the outcome as elicit_result does.
func (s *localService) Result(ctx context.Context, id string) (Outcome, error) {
	r, err := s.app.Service.Result(noted(ctx), "", id)
	if err != nil {
		return Outcome{}, localGone("elicit_result", err)
	}
	out := Outcome{Status: string(r.State.Status), Decision: string(r.Decision), Context: r.Context, FormSubmission: r.Form, SelectedIDs: r.SelectedIDs}
	if r.Comment != "" {
		out.Comment = &r.Comment
	}
	if len(s.receipts.Keys) > 0 {
		if out.Receipt, err = s.receipts.Issue(s.issuer, attest.Outcome{Result: r, Trail: r.Trail}); err != nil {
			return Outcome{}, fmt.Errorf("elicitation service: elicit_result: receipt of %s: %w", id, err)
		}
	}
	return out, nil
}

// localGone is gone for the service's own errors.
func localGone(tool string, err error) error {
	switch {
	case errors.Is(err, elicitation.ErrNotFound), errors.Is(err, elicitation.ErrExpired), errors.Is(err, elicitation.ErrCanceled):
		return fmt.Errorf("%w (%v)", ErrGone, err)
	case errors.Is(err, elicitation.ErrNotDecided):
		return ErrNotDecided
	}
	return fmt.Errorf("elicitation service: %s: %w", tool, err)
}
