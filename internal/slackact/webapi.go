package slackact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultAPIURL is Slack's Web API.
const DefaultAPIURL = "https://slack.com/api"

// callTimeout bounds each call to Slack: Slack waits 3 s for the answer
// to an interaction, which comes after them.
const callTimeout = 1200 * time.Millisecond

// webAPI calls the Slack Web API methods the handler needs with the bot
// token: views.open (the comment dialog) and users.info (the e-mail of a
// user the mapping names by address).
type webAPI struct {
	base   string
	token  string
	client *http.Client
}

// apiError is a Web API call that failed: Slack's error word (never the
// token, never what was sent).
type apiError struct{ method, word string }

func (e *apiError) Error() string { return "slack " + e.method + ": " + e.word }

func (a webAPI) call(ctx context.Context, method, contentType string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/"+method, bytes.NewReader(body))
	if err != nil {
		return &apiError{method, "bad request"}
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := a.client.Do(req)
	if err != nil {
		return &apiError{method, "unreachable"}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return &apiError{method, fmt.Sprintf("HTTP %d", resp.StatusCode)}
	}
	var res struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &res) != nil {
		return &apiError{method, "unreadable answer"}
	}
	if !res.OK {
		return &apiError{method, word(res.Error)}
	}
	if out != nil && json.Unmarshal(b, out) != nil {
		return &apiError{method, "unreadable answer"}
	}
	return nil
}

// word keeps an error word of Slack's to what an error word may be.
func word(s string) string {
	if s == "" || len(s) > 64 || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz_0123456789") != "" {
		return "error"
	}
	return s
}

// openView opens a modal for the interaction trigger.
func (a webAPI) openView(ctx context.Context, trigger string, view map[string]any) error {
	b, err := json.Marshal(map[string]any{"trigger_id": trigger, "view": view})
	if err != nil {
		return &apiError{"views.open", "unencodable view"}
	}
	return a.call(ctx, "views.open", "application/json; charset=utf-8", b, nil)
}

// userEmail is the e-mail address of a Slack user's profile (users.info;
// the users:read.email scope).
func (a webAPI) userEmail(ctx context.Context, user string) (string, error) {
	var out struct {
		User struct {
			Profile struct {
				Email string `json:"email"`
			} `json:"profile"`
		} `json:"user"`
	}
	err := a.call(ctx, "users.info", "application/x-www-form-urlencoded", []byte(url.Values{"user": {user}}.Encode()), &out)
	if err != nil {
		return "", err
	}
	if out.User.Profile.Email == "" {
		return "", &apiError{"users.info", "no e-mail (is the users:read.email scope granted?)"}
	}
	return out.User.Profile.Email, nil
}

// respond posts a message to an interaction's response_url: the update
// of the original message (replace_original) or a note only the user
// sees (ephemeral).
func (h *Handler) respond(ctx context.Context, responseURL string, msg map[string]any) {
	if !h.responseURLOK(responseURL) {
		h.log.WarnContext(ctx, "slack interaction: response_url is not Slack's; nothing sent")
		return
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, responseURL, bytes.NewReader(b))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := h.api.client.Do(req)
	if err != nil {
		h.log.WarnContext(ctx, "slack response_url unreachable")
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.log.WarnContext(ctx, "slack response_url refused the message", "status", resp.StatusCode)
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
