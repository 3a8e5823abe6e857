package slackact

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// DefaultAPIURL is Slack's Web API.
const DefaultAPIURL = "https://slack.com/api"

// callTimeout bounds each call to Slack: Slack waits 3 s for the answer
// to an interaction, which comes after them.
const callTimeout = 1200 * time.Millisecond

// webAPI calls the Slack Web API methods the handler needs with the bot
// token, through slack-go's client: views.open (the comment dialog) and
// users.info (the e-mail of a user the mapping names by address).
type webAPI struct {
	slack *slack.Client
}

func newWebAPI(base, token string, client *http.Client) webAPI {
	return webAPI{slack: slack.New(token, slack.OptionAPIURL(base+"/"), slack.OptionHTTPClient(client))}
}

// apiError is a Web API call that failed: Slack's error word (never the
// token, never what was sent).
type apiError struct{ method, word string }

func (e *apiError) Error() string { return "slack " + e.method + ": " + e.word }

// failed turns the error of a Web API call into an apiError (nil for nil).
func failed(method string, err error) error {
	var (
		refused slack.SlackErrorResponse
		status  slack.StatusCodeError
		limited *slack.RateLimitedError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &refused):
		return &apiError{method, word(refused.Err)}
	case errors.As(err, &status):
		return &apiError{method, fmt.Sprintf("HTTP %d", status.Code)}
	case errors.As(err, &limited):
		return &apiError{method, "ratelimited"}
	case errors.Is(err, context.DeadlineExceeded):
		return &apiError{method, "timed out"}
	}
	return &apiError{method, "unreachable or unreadable"}
}

// word keeps an error word of Slack's to what an error word may be.
func word(s string) string {
	if s == "" || len(s) > 64 || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz_0123456789") != "" {
		return "error"
	}
	return s
}

// openView opens a modal for the interaction trigger.
func (a webAPI) openView(ctx context.Context, trigger string, view slack.ModalViewRequest) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := a.slack.OpenViewContext(ctx, trigger, view)
	return failed("views.open", err)
}

// userEmail is the e-mail address of a Slack user's profile (users.info;
// the users:read.email scope).
func (a webAPI) userEmail(ctx context.Context, user string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	u, err := a.slack.GetUserInfoContext(ctx, user)
	if err != nil {
		return "", failed("users.info", err)
	}
	if u.Profile.Email == "" {
		return "", &apiError{"users.info", "no e-mail (is the users:read.email scope granted?)"}
	}
	return u.Profile.Email, nil
}

// respond posts a message to an interaction's response_url (slack-go's
// webhook post): the update of the original message (ReplaceOriginal) or
// a note only the user sees (ephemeral).
func (h *Handler) respond(ctx context.Context, responseURL string, msg *slack.WebhookMessage) {
	if !h.responseURLOK(responseURL) {
		h.Logger.WarnContext(ctx, "slack interaction: response_url is not Slack's; nothing sent")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	err := slack.PostWebhookCustomHTTPContext(ctx, responseURL, h.Client, msg)
	var status slack.StatusCodeError
	switch {
	case errors.As(err, &status):
		h.Logger.WarnContext(ctx, "slack response_url refused the message", "status", status.Code)
	case err != nil:
		h.Logger.WarnContext(ctx, "slack response_url unreachable")
	}
}

// responseURLOK reports whether u is a response URL of the Slack the Web
// API URL names: the same scheme, and its host or "hooks." and its host
// (https://hooks.slack.com for https://slack.com/api), so that a signed
// interaction cannot make the service post elsewhere.
func (h *Handler) responseURLOK(u string) bool {
	pu, err := url.Parse(u)
	if err != nil || pu.User != nil || pu.Scheme != h.apiURL.Scheme {
		return false
	}
	return pu.Host == h.apiURL.Host || pu.Host == "hooks."+h.apiURL.Host
}
