package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Ntfy publishes notices to an ntfy topic (https://ntfy.sh or a
// self-hosted server) with ntfy's JSON publishing: a phone subscribed to
// the topic shows the headline and the message, and opens the review page
// on tap.
type Ntfy struct {
	// URL is the server's base URL; Topic the topic; Token an optional
	// access token.
	URL, Topic, Token string
	Client            *http.Client
}

// NtfyMessage is the JSON ntfy publishes for n.
func NtfyMessage(topic string, n elicitation.Notice) map[string]any {
	m := map[string]any{
		"topic":   topic,
		"title":   Title(n),
		"message": Summary(n.Message, 1000) + "\n\n" + strings.Join(Details(n), "\n"),
		"tags":    []string{"elicitation", string(n.Event)},
	}
	if u := string(safeURL(n.ReviewURL)); u != "" {
		m["click"] = u
		m["priority"] = 4
		m["actions"] = []any{map[string]any{"action": "view", "label": "Review", "url": u, "clear": true}}
	}
	return m
}

// Send implements Sender.
func (p *Ntfy) Send(ctx context.Context, n elicitation.Notice) error {
	body, err := json.Marshal(NtfyMessage(p.Topic, n))
	if err != nil {
		return &SendError{Reason: "could not encode the message", Permanent: true}
	}
	h := map[string]string{"Content-Type": "application/json"}
	if p.Token != "" {
		h["Authorization"] = "Bearer " + p.Token
	}
	return post(ctx, p.Client, strings.TrimRight(p.URL, "/")+"/", body, h)
}
