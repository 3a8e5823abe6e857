package mcptools

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Best-effort push (SPEC §3): the review URL offered to a host that can
// show it, as a URL-mode elicitation, by the only means each era has.
//
//   - On a session (the session eras; a client that declared
//     elicitation.url): once the creating tool has produced its result, an
//     elicitation/create request in its own goroutine, bounded by the
//     request's expiry and the session's life; then, when the request is
//     decided, canceled or expires, notifications/elicitation/complete.
//   - Without a session (2026-07-28; a client that declared URL
//     elicitation): the first elicit_await on a pending request returns an
//     input-required result carrying the URL-mode request and a sealed
//     request state (elicitation, principal, expiry, the wait's end); the
//     retry carrying that state continues the wait and returns the normal
//     result, whatever the host answered.
//
// Every other host sees exactly the results it would without push. A
// deployment's Options.Push false, or a request's push: false, turns both
// off. Each principal's host is offered a request at most once, and each
// request state is accepted once (recorded in the audit trail, exactly once
// across processes: Service.RecordPush, RecordPushAnswer).

// Sealer seals and opens small values for a purpose (internal/sealer).
type Sealer interface {
	Seal(purpose string, plaintext []byte) string
	Open(purpose, sealed string) ([]byte, error)
}

// Purposes of sealed values: one can never be taken for the other.
const (
	purposeLink  = "elicitation push link v1"
	purposeState = "elicitation push state v1"
)

// linkPurpose and hostKeyPurpose bind a sealed review link, or a sealed
// review key for decisions in the host, to its request.
func linkPurpose(id string) string    { return purposeLink + "\x00" + id }
func hostKeyPurpose(id string) string { return purposeHostKey + "\x00" + id }

// StateTTL is how long a sessionless push's request state is accepted:
// long enough for a host to show the link and retry, short enough that a
// leaked state is soon worthless.
const StateTTL = 5 * time.Minute

type pushMode int

const (
	pushNone        pushMode = iota
	pushSession              // elicitation/create on the session
	pushInputResult          // input-required result of elicit_await
)

// pushModeOf decides how, if at all, the review URL can reach the host that
// sent req: the one place this is decided.
func (s *Server) pushModeOf(req *mcp.CallToolRequest) pushMode {
	if !s.push {
		return pushNone
	}
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil {
		return pushNone
	}
	e := eraOf(req.ProtocolVersion())
	if e == eraSessionless {
		if s.sealer == nil {
			return pushNone
		}
		return pushInputResult
	}
	if e == eraCore && req.Session != nil && req.Session.ID() != "" {
		return pushSession
	}
	// A session era served statelessly: the server cannot send requests.
	return pushNone
}

// pushLink seals the review link of a request being created by req for a
// later sessionless push; nil when none may happen.
func (s *Server) pushLink(req *mcp.CallToolRequest, allowed bool) (link func(id, key string) string) {
	if !allowed || !s.push || s.sealer == nil {
		return nil
	}
	r := s.httpRequest(req)
	return func(id, key string) string {
		return s.sealer.Seal(linkPurpose(id), []byte(s.reviewURL(r, id, key)))
	}
}

// afterCreated starts the push on the session of req, if it can take one,
// for a request just created; it never delays or fails the creation.
func (s *Server) afterCreated(req *mcp.CallToolRequest, allowed bool, st elicitation.State, message, url string) {
	if !allowed || s.pushModeOf(req) != pushSession {
		return
	}
	// The push waits until the HTTP request that carries the creation
	// result has been answered, so that the result is sent first.
	sent := context.Background().Done()
	if r := s.httpRequest(req); r != nil {
		sent = r.Context().Done()
	}
	release, ok := s.watches.Hold(s.limitPrincipal(req.Extra))
	if !ok {
		s.log.Debug("not pushed: this client's watches are at their most", "elicitationId", st.ID)
		return
	}
	go func() {
		defer release()
		s.pushOnSession(req.Session, st, message, url, sent)
	}()
}

// pushOnSession offers url to the session's client as a URL-mode
// elicitation and tells it when the request is over. Both end when the
// request does (its expiry, plus a minute for the complete notice), or
// when the session closes, whichever is first.
func (s *Server) pushOnSession(ss *mcp.ServerSession, st elicitation.State, message, url string, sent <-chan struct{}) {
	ctx, cancel := context.WithDeadline(context.Background(), st.ExpiresAt.Add(time.Minute))
	defer cancel()
	stop := context.AfterFunc(s.sessionEnd(ss), cancel)
	defer stop()
	if sent != nil {
		select {
		case <-sent:
		case <-ctx.Done():
			return
		}
	}
	id, principal := st.ID, st.Owner
	first, err := s.svc.RecordPush(ctx, principal, id, "url elicitation on the session")
	if err != nil || !first {
		if err != nil {
			s.log.Warn("push not recorded; not pushed", "elicitationId", id, "err", err)
		}
		return
	}
	go func() {
		res, err := ss.Elicit(ctx, urlElicitation(id, message, url))
		switch {
		case err != nil:
			// Best effort: the client's GET stream may not be open, or it
			// went away. The reviewUrl in the result still reaches it.
			s.log.Debug("push not delivered", "elicitationId", id, "err", err)
		default:
			s.log.Debug("push answered", "elicitationId", id, "action", res.Action)
		}
	}()
	// The outcome is watched, not polled: the store's own wake-up ends the
	// watch when the request is decided or canceled through this process
	// (on the embedded store, through any), and a store that can only poll
	// reads rarely (elicitation.Service.Watch).
	got, err := s.svc.Watch(ctx, principal, id)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Debug("push: reading the outcome failed", "elicitationId", id, "err", err)
		}
		return
	}
	if got.Status == elicitation.StatusPending {
		return
	}
	if err := ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id}); err != nil {
		s.log.Debug("complete notice not delivered", "elicitationId", id, "err", err)
	}
}

// The request state of a multi round-trip without a session
// (RequestState, OpenState, errBadState) is rounds.go's.
