package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Sender sends one notice to one target.
type Sender interface {
	Send(ctx context.Context, n elicitation.Notice) error
}

// SendError is why a send failed, in words safe for the audit trail and
// the log: never a URL (Slack's and many webhooks' URLs are secrets), a
// token or a response body.
type SendError struct {
	Reason string
	// Permanent: retrying will not help (the target refused the request
	// as such: 400, 401, 403, 404, 410, …).
	Permanent bool
	// status is the HTTP status of a refusal, if there was one.
	status int
}

func (e *SendError) Error() string { return e.Reason }

// Reason turns a send's error into a SendError whose text is safe to
// record (senders outside this package use it too).
func Reason(err error) *SendError {
	var se *SendError
	if errors.As(err, &se) {
		return se
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return &SendError{Reason: "timed out"}
	case errors.Is(err, context.Canceled):
		return &SendError{Reason: "interrupted"}
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return &SendError{Reason: "could not connect (" + oe.Op + ")"}
	}
	return &SendError{Reason: "failed"}
}

// statusError classifies a non-2xx response.
func statusError(code int) *SendError {
	e := &SendError{Reason: fmt.Sprintf("HTTP %d", code), status: code}
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly, code == http.StatusTooManyRequests, code == http.StatusConflict:
	case code >= 400 && code < 500:
		e.Permanent = true
	}
	if code >= 300 && code < 400 {
		e.Reason += " (redirects are not followed)"
	}
	return e
}

// AttemptTimeout bounds one send (the local worker's, the sweep's).
const AttemptTimeout = 10 * time.Second

// StreamAttemptTimeout bounds one send of a stream batch on AWS (the
// notify function's, Deliverer.Attempt with stream). The stream's shard
// waits for the whole batch, and every notice behind it for the shard, so
// the bound is no longer than the event source's batching window (1 s in
// template.yaml): a batch held by a hanging target then delays the next
// batch's notices by no more than the window itself would, and a healthy
// notice arrives within about a window, a bound and the stream's own
// latency of its creation (issue 22.1 asks for 2 s at p99). Webhooks,
// Slack and SES answer well within it; a send that takes longer is not
// lost: its time-out backs off in the outbox like any failed attempt, the
// sweep sends it with AttemptTimeout, and a receiver that took the first
// one anyway sees the same delivery id again (delivery is at least once).
const StreamAttemptTimeout = time.Second

// HTTPClient is the client the HTTP targets use: bounded, and never
// following a redirect (a target that moves is fixed in the configuration,
// not silently sent elsewhere with its signed body).
func HTTPClient() *http.Client {
	return &http.Client{
		Timeout:       AttemptTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// post sends body to url with headers and classifies the answer.
func post(ctx context.Context, c *http.Client, url string, body []byte, headers map[string]string) error {
	_, err := do(ctx, c, url, body, headers)
	return err
}

// errorWord is an answer's body that is one error word (as Slack answers:
// invalid_blocks, no_service, …), safe to record.
var errorWord = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// postWord is post for a receiver that answers a refusal with one error
// word (Slack): the word joins the reason.
func postWord(ctx context.Context, c *http.Client, url string, body []byte, headers map[string]string) error {
	word, err := do(ctx, c, url, body, headers)
	var se *SendError
	if errors.As(err, &se) && errorWord.MatchString(word) {
		se.Reason += " " + word
	}
	return err
}

// do sends body and returns, for a refusal, the start of the answer's body.
func do(ctx context.Context, c *http.Client, url string, body []byte, headers map[string]string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", &SendError{Reason: "bad target URL", Permanent: true}
	}
	req.Header.Set("User-Agent", "mcp-elicitation-notify/1")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", Reason(err)
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return strings.TrimSpace(string(head)), statusError(resp.StatusCode)
	}
	return "", nil
}
