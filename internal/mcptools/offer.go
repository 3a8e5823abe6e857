package mcptools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// offer is what elicit_await offers a host before it waits (push.go,
// hostform.go say when): an elicitation under key, how the audit trail
// names it, and the purpose and expiry of its sealed request state.
type offer struct {
	key, how, purpose string
	params            *mcp.ElicitParams
	expires           time.Time
}

// awaitOffers is elicit_await's one offer flow: the host's own form where
// the request asked for it, else the review link, at most once a request;
// on a session the form is asked at once, without one the offer is an
// input-required result whose retry offerAnswered takes. It returns that
// result (res non-nil), or the wait to use: the rest of the first call's
// wait on a retry or after the host's form, else wait.
func (s *Server) awaitOffers(ctx context.Context, req *mcp.CallToolRequest, id string, wait time.Duration) (res *mcp.CallToolResult, _ time.Duration, _ error) {
	if req.Params.RequestState != "" {
		return s.offerAnswered(ctx, req, id)
	}
	o, err := s.hostFormOffer(ctx, req, id)
	if o == nil && err == nil {
		o, err = s.linkOffer(ctx, req, id)
	}
	if o == nil || err != nil {
		return nil, wait, err
	}
	principal := PrincipalOf(req.Extra)
	first, err := s.svc.RecordPush(ctx, principal, id, o.how)
	if err != nil || !first {
		return nil, wait, err
	}
	bound := s.svc.WaitBound(ctx, wait)
	if eraOf(req.ProtocolVersion()) != eraSessionless {
		// On a session only the host form is offered here.
		left, err := s.askOnSession(ctx, req, id, o.params, bound)
		return nil, left, err
	}
	return s.inputRequired(o, RequestState{ID: id, Principal: principal, WaitUntil: s.svc.Now().Add(bound)}), 0, nil
}

// inputRequired is the input-required result that offers o, with st, to
// expire with o, sealed as its request state.
func (s *Server) inputRequired(o *offer, st RequestState) *mcp.CallToolResult {
	st.Expires = o.expires
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{o.key: o.params}, RequestState: SealState(s.sealer, o.purpose, st)}
}

// offerAnswered takes the retry of an offer made without a session and
// returns the wait left: the host's answer to its form is submitted as the
// review page would submit it; an answer to the link (accept, decline,
// cancel, nothing) is recorded once, since the human's answer comes from
// the review page, and one that is none (checkLinkAnswer) is refused,
// recording nothing. A retry of the form that lacks the form's answer is
// asked the form again (formAgain).
func (s *Server) offerAnswered(ctx context.Context, req *mcp.CallToolRequest, id string) (*mcp.CallToolResult, time.Duration, error) {
	principal, now := PrincipalOf(req.Extra), s.svc.Now()
	answer, form := req.Params.InputResponses[hostInputKey]
	purpose := purposeState
	if form {
		purpose = purposeHostState
	}
	st, err := OpenState(s.sealer, purpose, req.Params.RequestState, id, principal, now)
	if err != nil && !form {
		if hst, herr := OpenState(s.sealer, purposeHostState, req.Params.RequestState, id, principal, now); herr == nil {
			return s.formAgain(ctx, req, id, hst)
		}
	}
	if err != nil {
		return nil, 0, err
	}
	left := max(st.WaitUntil.Sub(now), time.Nanosecond)
	if form {
		res, ok := answer.(*mcp.ElicitResult)
		if !ok {
			return nil, 0, badArg("inputResponses", "inputResponses.%s must be the answer to the host form", hostInputKey)
		}
		return nil, left, s.submitHostAnswer(ctx, principal, id, res, st.Nonce)
	}
	if err := checkLinkAnswer(req.Params.InputResponses); err != nil {
		return nil, 0, err
	}
	sum := sha256.Sum256([]byte(st.Nonce))
	first, err := s.svc.RecordPushAnswer(ctx, principal, id, "state "+hex.EncodeToString(sum[:8]))
	if err != nil {
		return nil, 0, err
	}
	if !first {
		return nil, 0, errBadState("was already used")
	}
	return nil, left, nil
}

// formAgain answers a retry that carries the host form's request state st
// but not the form's answer: the form is asked again (SEP-2322: a server
// re-requests what is missing), under a fresh state for the same wait,
// while the request may still be decided in the host; else the wait left
// goes on. Nothing is recorded: the form was offered once already.
func (s *Server) formAgain(ctx context.Context, req *mcp.CallToolRequest, id string, st RequestState) (*mcp.CallToolResult, time.Duration, error) {
	left := max(st.WaitUntil.Sub(s.svc.Now()), time.Nanosecond)
	o, err := s.hostFormOffer(ctx, req, id)
	if o == nil || err != nil {
		return nil, left, err
	}
	return s.inputRequired(o, RequestState{ID: id, Principal: st.Principal, WaitUntil: st.WaitUntil}), 0, nil
}

// hostFormOffer is the host's own form for request id where the
// deployment, the request and the host allow it, rendered by the MCP App
// where the host negotiated that (appElicits, which needs no askInHost);
// nil otherwise.
func (s *Server) hostFormOffer(ctx context.Context, req *mcp.CallToolRequest, id string) (*offer, error) {
	inApp := s.appElicits(req)
	if s.sealer == nil || !s.canAskInHost(req) || !s.hostForm && !inApp {
		return nil, nil
	}
	st, p, err := s.svc.HostForm(ctx, PrincipalOf(req.Extra), id)
	if err != nil || st.Status != elicitation.StatusPending || p.HostLink == "" || !inApp && !p.AskInHost {
		return nil, err
	}
	if s.svc.HostFormRefusal(ctx, p.Reviewers, 0) != "" {
		// Asked before sign-in was turned on: the page decides it now, and
		// the host's answer would be refused.
		return nil, nil
	}
	params, err := hostFormParams(st, p)
	if err != nil {
		return nil, err
	}
	how := "form elicitation in the host"
	if inApp {
		appRendered(params, id)
		how = "app-rendered elicitation in the host"
	}
	return &offer{key: hostInputKey, how: how, purpose: purposeHostState, params: params, expires: st.ExpiresAt}, nil
}

// linkOffer is the review link of request id, for a host without a session
// that declared URL elicitation, where a link is kept; nil otherwise.
func (s *Server) linkOffer(ctx context.Context, req *mcp.CallToolRequest, id string) (*offer, error) {
	if s.pushModeOf(req) != pushInputResult {
		return nil, nil
	}
	st, sealedLink, message, err := s.svc.PushLink(ctx, PrincipalOf(req.Extra), id)
	if err != nil || st.Status != elicitation.StatusPending || sealedLink == "" {
		return nil, err
	}
	link, err := s.sealer.Open(linkPurpose(id), sealedLink)
	if err != nil {
		// Sealed under a key no longer in the keyring: no push.
		s.log.Debug("push link not readable; not pushed", "elicitationId", id)
		return nil, nil
	}
	return &offer{key: reviewInput, how: "url elicitation in an input-required result", purpose: purposeState,
		params: urlElicitation(id, message, string(link)), expires: s.svc.Now().Add(StateTTL)}, nil
}

// reviewInput names the review link wherever it is offered as an input
// request: an input-required result of elicit_await, a 2026-07-28 task's
// input request.
const reviewInput = "review"

// urlElicitation is the review link of request id offered as a URL-mode
// elicitation.
func urlElicitation(id, message, link string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "url", Message: message, URL: link, ElicitationID: id}
}

// checkLinkAnswer refuses a retry's answer to the review link that is none:
// not an elicitation's answer whose action is accept, decline or cancel. No
// answer at all is one (the host said nothing of the link).
func checkLinkAnswer(inputs mcp.InputResponseMap) error {
	a, ok := inputs[reviewInput]
	if !ok {
		return nil
	}
	if res, isAnswer := a.(*mcp.ElicitResult); isAnswer && linkAction(res.Action) {
		return nil
	}
	return badArg("inputResponses", "inputResponses.%s must be the host's answer to the link: an object with action accept, decline or cancel; nothing was recorded, and the requestState may be sent again with a valid answer", reviewInput)
}

// linkAction reports whether action is one a host may answer the review
// link with (a URL-mode elicitation's result): accept, decline or cancel.
func linkAction(action string) bool {
	return action == "accept" || action == "decline" || action == "cancel"
}
