package elicitation

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// TemplateChecker compiles and test-renders a payload's templates against
// its own data, so that the agent, not the reviewer, learns of a template
// error. It returns an *Error with CodeInvalidArgument naming the template.
type TemplateChecker interface {
	CheckTemplates(p Payload) error
}

// Config configures a Service. Zero fields take the defaults named.
type Config struct {
	Store ServiceStore
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Retention is how long a request is kept after its expiresAt; default 7 days.
	Retention time.Duration
	// MaxWait bounds one elicit_await; default 20 s.
	MaxWait time.Duration
	// WaitMargin is kept free before the caller's context deadline (the
	// invocation's remaining time); default 2 s.
	WaitMargin time.Duration
	// Templates checks templates at creation; nil accepts any template.
	Templates TemplateChecker
	// Notifications are the deployment's notification targets; nil means
	// none (a request that names one is refused).
	Notifications Notifications
	// SignIn says that reviewers sign in (internal/reviewauth puts their
	// Identity in the context of every review request): the review page
	// and submissions then need an identity, Policy applies, and requests
	// may name reviewers and a quorum. Without it the review link alone is
	// the reviewer's capability, and requests that name reviewers or a
	// quorum are refused (nobody could be checked against them).
	SignIn bool
	// Policy is the deployment's rule of who may decide (with SignIn).
	Policy ReviewerPolicy
	// MaxPending bounds how many requests one principal may have pending
	// at once (past it a create is refused with CodeBusy); default
	// DefaultMaxPending, negative: no bound. It keeps one principal's
	// requests from crowding everyone else's out of a reviewer's inbox,
	// which reads the MaxInbox most urgent.
	MaxPending int
	// Standing bounds standing approvals (with SignIn).
	Standing StandingPolicy
	// Observer is told of creations, resolutions and expiries (observe.go);
	// nil: nobody.
	Observer Observer
}

// DefaultMaxPending is the default Config.MaxPending: far below MaxInbox,
// so that one principal holds at most a twentieth of what an inbox reads.
const DefaultMaxPending = MaxInbox / 20

// DefaultMaxWait is the default bound of one elicit_await.
const DefaultMaxWait = 20 * time.Second

// Service applies the rules of elicitation over a Store. Every State it
// returns has its Status derived at the Service's clock (so it may be
// StatusExpired). It is safe for concurrent use.
type Service struct {
	store      ServiceStore
	now        func() time.Time
	retention  time.Duration
	maxWait    time.Duration
	margin     time.Duration
	templates  TemplateChecker
	notify     Notifications
	signIn     bool
	policy     ReviewerPolicy
	maxPending int // 0: no bound
	standing   StandingPolicy
	watching   atomic.Int64 // polling watches running (watch.go)
	waiting    atomic.Int64 // waits running (await.go), watches among them
	observe    Observer
}

// NewService returns a Service for cfg.
func NewService(cfg Config) *Service {
	s := &Service{store: cfg.Store, now: cfg.Now, retention: cfg.Retention, maxWait: cfg.MaxWait, margin: cfg.WaitMargin, templates: cfg.Templates, notify: cfg.Notifications, signIn: cfg.SignIn, policy: cfg.Policy, standing: cfg.Standing, observe: cfg.Observer}
	if s.now == nil {
		s.now = time.Now
	}
	if s.retention <= 0 {
		s.retention = DefaultRetention
	}
	if s.maxWait <= 0 {
		s.maxWait = DefaultMaxWait
	}
	if s.margin <= 0 {
		s.margin = 2 * time.Second
	}
	switch {
	case cfg.MaxPending == 0:
		s.maxPending = DefaultMaxPending
	case cfg.MaxPending > 0:
		s.maxPending = cfg.MaxPending
	}
	return s
}

// MaxWait is the configured bound of one wait.
func (s *Service) MaxWait() time.Duration { return s.maxWait }

// Now reads the Service's clock.
func (s *Service) Now() time.Time { return s.now() }

// Created is the result of creating a request.
type Created struct {
	State State
	// ReviewKey is the reviewer's capability; it is returned once, here,
	// and stored only as a hash.
	ReviewKey string
}

// Create validates in as a request of kind and stores it, pending, owned
// by principal: the one create path of both kinds.
func (s *Service) Create(ctx context.Context, principal string, kind Kind, in Input) (Created, error) {
	p, err := in.Payload(kind)
	if err != nil {
		return Created{}, err
	}
	return s.create(ctx, principal, kind, p, in.TimeoutSeconds, in.Approvals, in.Notify, links{in.PushLink, in.HostLink, in.AskInHost})
}

// links seal a new request's review link for the MCP adapter's later use:
// the push, the host's own form (nil: none).
type links struct {
	push, host func(id, key string) string
	ask        bool
}

func (s *Service) create(ctx context.Context, principal string, kind Kind, p Payload, timeoutSeconds, approvals int, n Notify, l links) (Created, error) {
	if !s.signIn && (len(p.Reviewers) > 0 || approvals > 1) {
		field := "reviewers"
		if len(p.Reviewers) == 0 {
			field = "approvals"
		}
		return Created{}, invalid(ErrSignInRequired, field, "%s needs reviewer sign-in, which this server does not have (anyone with the review link decides); omit %s, or ask the operator to configure sign-in", field, field)
	}
	if approvals <= 1 {
		approvals = 0
	}
	if err := s.policy.reachable(cmp.Or(principal, Anonymous), p.Reviewers, approvals); err != nil {
		return Created{}, err
	}
	if s.templates != nil {
		if err := s.templates.CheckTemplates(p); err != nil {
			return Created{}, err
		}
	}
	principal = cmp.Or(principal, Anonymous)
	targets, err := s.targets(principal, n.Targets)
	if err != nil {
		return Created{}, err
	}
	p.Notify = targets
	key, hash := NewReviewKey()
	p.ReviewKeyHash = hash
	now := s.now().UTC()
	st := State{
		ID: NewID(), Kind: kind, Owner: principal, Status: StatusPending,
		CreatedAt: now, ExpiresAt: now.Add(ClampTimeout(timeoutSeconds)), Approvals: approvals,
	}
	st.RetainUntil = st.ExpiresAt.Add(s.retention)
	p.PushLink, p.HostLink = l.seal(st.ID, key)
	p.AskInHost = l.ask && p.HostLink != ""
	entry := AuditEntry{At: now, Action: ActionCreated, Principal: principal, Detail: withNote(ctx, string(kind))}
	if p.Scheduled, p.Escalate, err = s.schedule(st, targets, n.Escalate); err != nil {
		return Created{}, err
	}
	if c, ok, err := s.byRule(ctx, st, p, entry, key); ok || err != nil {
		return c, err
	}
	var outbox []Delivery
	if s.notify != nil {
		outbox = s.createdOutbox(st, targets, p.Scheduled, func() string { return n.link(st.ID, key) })
	}
	r := Request{State: st, Payload: p, Outbox: outbox, MaxPending: s.maxPending}
	if err := s.storeNew(ctx, r, entry); err != nil {
		return Created{}, err
	}
	s.queued(r.Outbox)
	s.observer().Created(st)
	return Created{State: st, ReviewKey: key}, nil
}

// storeNew stores the new request r with its creation entry; an owner at
// the pending bound gets a busy *Error.
func (s *Service) storeNew(ctx context.Context, r Request, entry AuditEntry) error {
	err := s.store.Create(ctx, r, entry)
	switch {
	case errors.Is(err, ErrTooManyPending):
		return Busy("%s already has %d requests pending, its most at once; "+
			"wait for a decision, cancel one or let one expire before creating another", r.State.Owner, s.maxPending)
	case err != nil:
		return fmt.Errorf("create %s: %w", r.State.ID, err)
	}
	return nil
}

// owned reads a request's state for its owner; anyone else gets ErrNotFound.
func (s *Service) owned(ctx context.Context, principal, id string) (State, error) {
	if id == "" {
		return State{}, invalid(ErrElicitationIDRequired, "elicitationId", "elicitationId is required")
	}
	st, err := s.store.State(ctx, id)
	if err != nil {
		return State{}, fmt.Errorf("read %s: %w", id, err)
	}
	if st.Owner != cmp.Or(principal, Anonymous) {
		return State{}, fmt.Errorf("read %s: %w", id, ErrNotFound)
	}
	return st, nil
}

func (s *Service) derive(st State) State {
	st.Status = st.StatusAt(s.now())
	return st
}

// Status reads a request's state without blocking or consuming it.
func (s *Service) Status(ctx context.Context, principal, id string) (State, error) {
	st, err := s.owned(ctx, principal, id)
	if err != nil {
		return State{}, err
	}
	return s.derive(st), nil
}

// Await waits until the request is no longer pending, or until the wait
// bound: the smallest of the configured MaxWait, wait (if positive), the
// time ctx has left minus the margin, and the time to expiresAt. When the
// bound elapses it returns the state as it is then (pending or expired),
// without error. It is AwaitFunc, waited for.
func (s *Service) Await(ctx context.Context, principal, id string, wait time.Duration) (State, error) {
	return waitFor(func(done func(State, error)) { s.AwaitFunc(ctx, principal, id, wait, done) })
}

// waitFor calls start and waits for the outcome it gives done.
func waitFor(start func(done func(State, error))) (State, error) {
	type outcome struct {
		st  State
		err error
	}
	ch := make(chan outcome, 1)
	start(func(st State, err error) { ch <- outcome{st, err} })
	o := <-ch
	return o.st, o.err
}

// WaitBound is how long one wait may last under ctx: the smallest of the
// configured MaxWait, wait (if positive) and ctx's remaining time minus the
// margin (never negative).
func (s *Service) WaitBound(ctx context.Context, wait time.Duration) time.Duration {
	bound := s.maxWait
	if wait > 0 {
		bound = min(bound, wait)
	}
	if dl, ok := ctx.Deadline(); ok {
		bound = min(bound, time.Until(dl)-s.margin)
	}
	return max(bound, 0)
}

// Result is the outcome of a decided request.
type Result struct {
	State       State
	Decision    Decision
	Message     string // the request's message, as the reviewer read it
	Context     json.RawMessage
	Form        json.RawMessage // approval form values, else nil
	SelectedIDs []string        // selection, when submitted
	Comment     string          // the reviewer's note, "" when none
	// DecidedBy is the signed-in reviewer who decided (the approval that
	// completed a quorum, or the decline), empty when the reviewer was
	// anonymous (no sign-in). ApprovedBy lists a quorum's approvers.
	DecidedBy  string
	ApprovedBy []string
	// AuditHead is the head of the request's audit chain at its outcome:
	// the Seq and Hash of the entry that recorded the decision (what a
	// receipt carries, so that the trail up to it can be checked with
	// VerifyAudit). Zero if that entry predates the chain.
	AuditHead AuditHead
	// Trail is the audit trail AuditHead was read from (a receipt names
	// the approvers from it), so that its caller need not read it again.
	Trail AuditTrail
}

// Result reads the outcome of a decided request and marks it consumed. It
// is idempotent; every fetch is audited, but under WithRepeatRead only one
// that finds the request not yet consumed. A pending request gives
// ErrNotDecided, an expired one ErrExpired, a canceled one ErrCanceled.
func (s *Service) Result(ctx context.Context, principal, id string) (Result, error) {
	st, err := s.owned(ctx, principal, id)
	if err != nil {
		return Result{}, err
	}
	if err := s.undecided(st); err != nil {
		return Result{}, fmt.Errorf("result %s: %w", id, err)
	}
	entry := AuditEntry{At: s.now().UTC(), Action: ActionResultFetched, Principal: cmp.Or(principal, Anonymous), Detail: withNote(ctx, "")}
	if !(isRepeatRead(ctx) && st.Status == StatusConsumed) {
		st, err = s.store.Consume(ctx, id, entry)
	}
	if err != nil {
		if errors.Is(err, ErrConflict) {
			if e := s.undecided(st); e != nil {
				err = e
			}
		}
		return Result{}, fmt.Errorf("result %s: %w", id, err)
	}
	rec, err := s.store.Load(ctx, id)
	if err != nil {
		return Result{}, fmt.Errorf("result %s: %w", id, err)
	}
	tr, err := s.store.Audit(ctx, id)
	if err != nil {
		return Result{}, fmt.Errorf("result %s: %w", id, err)
	}
	r := Result{
		State: s.derive(st), Decision: st.Decision, Message: rec.Payload.Message, Context: rec.Payload.Context, Comment: CommentOf(rec.Answer),
		DecidedBy: st.Decider(), AuditHead: OutcomeHead(tr.Entries), Trail: tr,
	}
	if st.Quorum() > 1 {
		r.ApprovedBy = make([]string, 0, len(st.Approvers))
		for _, a := range st.Approvers {
			r.ApprovedBy = append(r.ApprovedBy, a.By)
		}
	}
	if rec.Answer != nil && st.Decision == DecisionSubmitted {
		r.Form = rec.Answer.Form
		r.SelectedIDs = rec.Answer.SelectedIDs
		if st.Kind == KindSelection && r.SelectedIDs == nil {
			r.SelectedIDs = []string{}
		}
	}
	return r, nil
}

// undecided is the error for a state without a decision to read, or nil.
func (s *Service) undecided(st State) error {
	switch st.StatusAt(s.now()) {
	case StatusPending:
		return ErrNotDecided
	case StatusExpired:
		return ErrExpired
	case StatusCanceled:
		return ErrCanceled
	}
	return nil
}

// Cancel cancels a pending request and wakes its waiters. Canceling a
// canceled request succeeds again; a decided one gives ErrConflict, an
// expired one ErrExpired.
func (s *Service) Cancel(ctx context.Context, principal, id string) (State, error) {
	cur, err := s.owned(ctx, principal, id)
	if err != nil {
		return State{}, err
	}
	t := Resolution{Status: StatusCanceled, At: s.now().UTC(), By: cmp.Or(principal, Anonymous)}
	if s.notify != nil && cur.Status == StatusPending {
		rec, err := s.store.Load(ctx, id)
		if err != nil {
			return State{}, fmt.Errorf("cancel %s: %w", id, err)
		}
		s.resolutionOutbox(&t, rec)
	}
	st, err := s.store.Resolve(ctx, id, t)
	if err != nil {
		if errors.Is(err, ErrConflict) && st.Status == StatusCanceled {
			return s.derive(st), nil
		}
		return State{}, fmt.Errorf("cancel %s: %w", id, err)
	}
	s.queued(t.Outbox)
	s.resolved(st, t)
	return s.derive(st), nil
}

// Audit reads a request's audit trail for its owner.
func (s *Service) Audit(ctx context.Context, principal, id string) (AuditTrail, error) {
	if _, err := s.owned(ctx, principal, id); err != nil {
		return AuditTrail{}, err
	}
	return s.OperatorAudit(ctx, id)
}

// OperatorAudit reads any request's audit trail (for an operator command).
func (s *Service) OperatorAudit(ctx context.Context, id string) (AuditTrail, error) {
	tr, err := s.store.Audit(ctx, id)
	if err != nil {
		return AuditTrail{}, fmt.Errorf("audit %s: %w", id, err)
	}
	return tr, nil
}

// Review is what a reviewer sees: the request with its status derived.
type Review struct {
	Record
	Now time.Time
	// Reviewer is who the render was audited as: the signed-in reviewer's
	// principal, or Reviewer without sign-in.
	Reviewer string
}

// OpenReview checks the review key and reads the request for the review
// page, recording the render in the audit trail. A wrong key gives
// ErrNotFound, so that a key cannot be used to probe for ids.
//
// With sign-in, the reviewer signed in (the context's Identity) must be
// one who may decide the request; anyone else gets a *Error with
// CodeForbidden, and the refused render is audited under their name.
func (s *Service) OpenReview(ctx context.Context, id, key string) (Review, error) {
	rec, err := s.reviewRecord(ctx, id, key)
	if err != nil {
		return Review{}, err
	}
	now := s.now().UTC()
	by, _, refused := s.reviewer(ctx, rec)
	detail := string(rec.State.Status)
	if refused != nil {
		detail = "refused: " + refusalReason(refused)
	}
	if err := s.store.Append(ctx, id, AuditEntry{At: now, Action: ActionRendered, Principal: by, Detail: detail}); err != nil {
		return Review{}, fmt.Errorf("review %s: %w", id, errors.Join(refused, err))
	}
	if refused != nil {
		return Review{}, fmt.Errorf("review %s: %w", id, refused)
	}
	return Review{Record: rec, Now: now, Reviewer: by}, nil
}

// ErrNotSignedIn: sign-in is required and the request carries no identity.
var ErrNotSignedIn = &Error{Code: CodeForbidden, Kind: errNotSignedIn, Field: "reviewer", Message: "sign in to review this request"}

var errNotSignedIn = fmt.Errorf("not signed in: %w", ErrForbidden)

// reviewer names the reviewer of a review request for the audit trail and
// says whether they may decide rec (nil) or not (a *Error, CodeForbidden).
// Without sign-in every holder of the review link is Reviewer.
// forWhom is the reviewer they decide for through a delegation, if any.
func (s *Service) reviewer(ctx context.Context, rec Record) (by, forWhom string, err error) {
	if !s.signIn {
		return Reviewer, "", nil
	}
	id, ok := IdentityFrom(ctx)
	if !ok {
		return Reviewer, "", ErrNotSignedIn
	}
	forWhom, err = s.mayDecide(ctx, id, rec)
	return id.Principal(), forWhom, err
}

// mayDecide applies the one may-decide rule (ReviewerPolicy.DecidesFor)
// to the signed-in reviewer id and rec, reading the delegations to id only
// when id may not decide it on their own.
func (s *Service) mayDecide(ctx context.Context, id Identity, rec Record) (forWhom string, err error) {
	if err := s.policy.MayDecide(id, rec.State.Owner, rec.Payload.Reviewers); err == nil || errors.Is(err, ErrOwnerBarred) {
		return "", err
	}
	ds, derr := s.delegatedTo(ctx, id)
	if derr != nil {
		return "", derr
	}
	return s.policy.DecidesFor(id, rec.State.Owner, rec.Payload.Reviewers, ds)
}

// MayDecide checks, without recording anything, what Submit would check
// before it validates an answer: the review key (ErrNotFound), that the
// reviewer in ctx may decide the request (the same rule as OpenReview's;
// a *Error with CodeForbidden), and that it is still open (ErrConflict,
// ErrCanceled, ErrExpired). A Slack button that opens a dialog asks it
// first, so that the reviewer is not asked for a comment in vain.
func (s *Service) MayDecide(ctx context.Context, id, key string) (State, error) {
	rec, err := s.reviewRecord(ctx, id, key)
	if err != nil {
		return State{}, err
	}
	if _, _, err := s.reviewer(ctx, rec); err != nil {
		return rec.State, fmt.Errorf("review %s: %w", id, err)
	}
	if err := s.closed(rec.State); err != nil {
		return rec.State, fmt.Errorf("review %s: %w", id, err)
	}
	return rec.State, nil
}

// ApprovalRefusal says, recording nothing, whether an approval of rec (as
// Receipt read it) by the reviewer in ctx would be refused by its quorum:
// ErrAlreadyApproved or ErrSeatApproved (State.ApprovalRefused, the rule
// Resolution.Check applies when it lands), nil when it could count. A
// batch asks it before it offers an approval.
func (s *Service) ApprovalRefusal(ctx context.Context, rec Record) error {
	if rec.State.Quorum() <= 1 {
		return nil
	}
	by, forWhom, err := s.reviewer(ctx, rec)
	if err != nil {
		return fmt.Errorf("review %s: %w", rec.State.ID, err)
	}
	return rec.State.ApprovalRefused(by, forWhom)
}

// Receipt reads a request for the holder of its review key without
// recording a render: what the page shows right after a decision (what was
// recorded, and when). A wrong key gives ErrNotFound.
func (s *Service) Receipt(ctx context.Context, id, key string) (Review, error) {
	rec, err := s.reviewRecord(ctx, id, key)
	if err != nil {
		return Review{}, err
	}
	return Review{Record: rec, Now: s.now().UTC()}, nil
}

// NoKey is the review key of the signed-in way in to a request (the
// reviewer's inbox links to /review/{id}): no key at all, so that no key is
// stored anywhere. It opens a request only with reviewer sign-in, for a
// signed-in reviewer who may decide it (ReviewerPolicy.MayDecide, the rule
// the key's page applies too); anyone else gets ErrNotFound, as for a wrong
// key, so that an id alone confirms nothing.
const NoKey = ""

func (s *Service) reviewRecord(ctx context.Context, id, key string) (Record, error) {
	rec, err := s.store.Load(ctx, id)
	if err != nil {
		return Record{}, fmt.Errorf("review %s: %w", id, err)
	}
	if !s.opens(ctx, rec, key) {
		return Record{}, fmt.Errorf("review %s: wrong review key: %w", id, ErrNotFound)
	}
	rec.State = s.derive(rec.State)
	return rec, nil
}

// opens reports whether key opens rec: its review key, or NoKey for a
// signed-in reviewer who may decide it.
func (s *Service) opens(ctx context.Context, rec Record, key string) bool {
	if key != NoKey {
		return rec.Payload.ReviewKeyMatches(key)
	}
	id, ok := IdentityFrom(ctx)
	if !s.signIn || !ok {
		return false
	}
	_, err := s.mayDecide(ctx, id, rec)
	return err == nil
}

// RefuseSubmission records a submission attempt refused before it reached
// Submit (for example for a bad or expired page token). A wrong review key
// gives ErrNotFound and records nothing, so that only a holder of the
// review key (or, with NoKey, a signed-in reviewer who may decide the
// request) can add to a request's audit trail.
func (s *Service) RefuseSubmission(ctx context.Context, id, key, by, reason string) error {
	if _, err := s.reviewRecord(ctx, id, key); err != nil {
		return err
	}
	return s.recordRefusal(ctx, id, by, reason)
}

func (s *Service) recordRefusal(ctx context.Context, id, by, reason string) error {
	e := AuditEntry{At: s.now().UTC(), Action: ActionSubmissionRefused, Principal: cmp.Or(by, Reviewer), Detail: reason}
	if err := s.store.Append(ctx, id, e); err != nil {
		return fmt.Errorf("refuse submission %s: %w", id, err)
	}
	return nil
}

// Submit validates a reviewer's submission and lands it exactly once. A
// malformed submission resolves nothing: it is audited as refused and the
// error says what to fix (a *FormError for form values). A submission
// after a decision gives ErrConflict (ErrCanceled after a cancel),
// ErrExpired after expiry; the retry of the winning submission succeeds.
func (s *Service) Submit(ctx context.Context, id, key string, sub Submission) (State, error) {
	rec, err := s.reviewRecord(ctx, id, key)
	if err != nil {
		return State{}, err
	}
	refuse := func(reason string, cause error) (State, error) {
		if aerr := s.recordRefusal(ctx, id, sub.By, reason); aerr != nil {
			return State{}, errors.Join(cause, aerr)
		}
		return rec.State, fmt.Errorf("submit %s: %w", id, cause)
	}
	by, forWhom, forbidden := s.reviewer(ctx, rec)
	if s.signIn || sub.By == "" {
		sub.By = by
	}
	if forbidden != nil {
		return refuse(refusalReason(forbidden), forbidden)
	}
	if sub.ID == "" {
		return refuse("missing submission id", invalid(ErrSubmissionIDMissing, "submission", "the submission has no id; reload the page"))
	}
	t := Resolution{Status: Status(sub.Decision), SubmissionID: sub.ID, At: s.now().UTC(), By: cmp.Or(sub.By, Reviewer), Via: cmp.Or(sub.Via, ViaPage), For: forWhom}
	if id, ok := IdentityFrom(ctx); ok && t.By == id.Principal() {
		t.Issuer = id.Issuer // who vouched for By: reviewer sign-in, or Slack
	}
	if st, resent, retry := s.resend(rec, sub, t); resent {
		if retry {
			return st, nil
		}
		return refuse("resent with another answer", ErrConflict)
	}
	if err := s.closed(rec.State); err != nil {
		return refuse(string(rec.State.Status), err)
	}
	answer, err := rec.Payload.answer(rec.State.Kind, sub)
	if err != nil {
		return refuse(refusalReason(err), err)
	}
	t.Answer = answer
	rule, err := s.ruleWith(ctx, rec, sub, answer)
	if err != nil {
		return refuse(refusalReason(err), err)
	}
	s.resolutionOutbox(&t, rec)
	if CommentOf(answer) != "" {
		// The audit says that a comment came with the decision, never what it says.
		t.Detail = string(t.Status) + ", with a comment"
	}
	st, err := s.store.Resolve(ctx, id, t)
	if err != nil {
		if reason, cause, ok := s.refusedResolve(st, err); ok {
			return refuse(reason, cause)
		}
		return State{}, fmt.Errorf("submit %s: %w", id, err)
	}
	if st.Status != StatusPending {
		s.queued(t.Outbox)
	}
	s.resolved(st, t)
	return s.derive(st), s.saveRule(ctx, rule, st)
}

// resend decides a submission from a page that was already counted: resent
// is false when sub is a new submission. The same page sent again is the
// success it was if it carries the same answer (a lost response, a double
// tap: retry, with the state to answer); a different answer from that page
// (Back, another choice) is a conflict, so the reviewer is never shown an
// outcome that was not recorded. The store applies the same rule
// (IsRetryOf) when two sends overlap.
//
// A page counted is the one that decided, or an approval already counted
// towards a quorum.
func (s *Service) resend(rec Record, sub Submission, t Resolution) (st State, resent, retry bool) {
	_, approved := rec.State.approvalOf(sub.ID)
	if !approved && (rec.State.SubmissionID != sub.ID || rec.State.Status == StatusPending) {
		return State{}, false, false
	}
	if answer, err := rec.Payload.answer(rec.State.Kind, sub); err == nil {
		t.Answer = answer
		if t.IsRetryOf(withDigest(rec)) {
			return rec.State, true, true
		}
	}
	return State{}, true, false
}

// refusedResolve says whether the store's err from Resolve is a refusal of
// this submission (recorded in the audit with reason, answered with cause)
// rather than a failure; st is the state the store returned with it.
func (s *Service) refusedResolve(st State, err error) (reason string, cause error, refused bool) {
	if errors.Is(err, ErrAlreadyApproved) || errors.Is(err, ErrAnswerDiffers) {
		return refusalReason(err), err, true
	}
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrExpired) {
		st = s.derive(st)
		if cerr := s.closed(st); cerr != nil {
			err = cerr
		}
		return string(st.Status), err, true
	}
	return "", nil, false
}

// withDigest is rec's state with its answer digest, computed from the
// stored answer for a request decided before digests were stored.
func withDigest(rec Record) State {
	st := rec.State
	if st.AnswerDigest == "" && st.Decision != "" {
		st.AnswerDigest = AnswerDigest(st.Decision, rec.Answer)
	}
	return st
}

// closed is the error for submitting to a request in state st, or nil if
// it is still open.
func (s *Service) closed(st State) error {
	if st.StatusAt(s.now()) == StatusPending {
		return nil
	}
	return cmp.Or(s.undecided(st), ErrConflict)
}

// refusalReason names what was wrong with a submission for the audit trail,
// without the values submitted.
func refusalReason(err error) string {
	var fe *FormError
	if errors.As(err, &fe) {
		names := make([]string, len(fe.Fields))
		for i, f := range fe.Fields {
			names[i] = f.Field
		}
		return truncate("invalid form: "+strings.Join(names, ", "), 200)
	}
	var e *Error
	if errors.As(err, &e) && e.Kind != nil {
		if e.Code == CodeForbidden {
			return "forbidden: " + e.Kind.Error()
		}
		return "invalid: " + e.Kind.Error()
	}
	switch {
	case errors.Is(err, ErrSeatApproved):
		return "already approved for this reviewer's place"
	case errors.Is(err, ErrAlreadyApproved):
		return "already approved by this reviewer"
	case errors.Is(err, ErrAnswerDiffers):
		return "approval with a different answer"
	}
	return "invalid: " + CodeOf(err).String()
}
