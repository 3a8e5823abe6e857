package notify

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// A notice is rendered from elicitation.Notice only: what was asked, by
// whom, until when, the review link on created notices and the decision on
// decided ones. Nothing the reviewer submitted is ever in a notice.

// Title is the notice's one-line headline.
func Title(n elicitation.Notice) string {
	what := "Approval"
	if n.Kind == elicitation.KindSelection {
		what = "Selection"
	}
	switch n.Event {
	case elicitation.EventCreated:
		return what + " requested"
	case elicitation.EventDecided:
		switch {
		case n.Decision == elicitation.DecisionDeclined && n.Kind == elicitation.KindSelection:
			return "Selection declined (none of these)"
		case n.Decision == elicitation.DecisionDeclined:
			return "Approval declined"
		case n.Kind == elicitation.KindSelection:
			return "Selection made"
		}
		return "Approved"
	case elicitation.EventCanceled:
		return what + " request canceled"
	case elicitation.EventExpired:
		return what + " request expired unanswered"
	case elicitation.EventReminder:
		return what + " still waiting (reminder " + strconv.Itoa(n.Step) + ")"
	case elicitation.EventEscalated:
		if n.ReviewURL != "" {
			return what + " escalated to you"
		}
		return what + " request escalated"
	}
	return what + " request " + string(n.Event)
}

// Summary is the request's message, shortened to at most n characters.
func Summary(msg string, n int) string {
	msg = strings.TrimSpace(msg)
	if utf8.RuneCountInString(msg) <= n {
		return msg
	}
	r := []rune(msg)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// Subject is an e-mail subject line.
func Subject(n elicitation.Notice) string {
	return Title(n) + ": " + Summary(firstLine(n.Message), 80)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// Details are the facts a notice states under its message.
func Details(n elicitation.Notice) []string {
	d := []string{"Requested by " + n.Owner}
	switch n.Event {
	case elicitation.EventCreated, elicitation.EventReminder:
		d = append(d, "Answer by "+stamp(n.ExpiresAt))
	case elicitation.EventEscalated:
		d = append(d, "Undecided since "+stamp(n.CreatedAt)+"; escalated to "+strings.Join(n.EscalatedTo, ", "), "Answer by "+stamp(n.ExpiresAt))
	case elicitation.EventDecided:
		by := cmp.Or(n.DecidedBy, "the reviewer")
		d = append(d, "Decided by "+by+" at "+stamp(n.At))
	case elicitation.EventCanceled:
		d = append(d, "Canceled at "+stamp(n.At))
	case elicitation.EventExpired:
		d = append(d, "Expired at "+stamp(n.ExpiresAt))
	}
	return append(d, "Elicitation "+n.ID)
}

// Text is the plain-text body (e-mail, push).
func Text(n elicitation.Notice) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s\n\n", Title(n), strings.TrimSpace(n.Message))
	if n.ReviewURL != "" {
		fmt.Fprintf(&b, "Review it here:\n%s\n\n", n.ReviewURL)
	}
	for _, d := range Details(n) {
		b.WriteString(d + "\n")
	}
	if n.ReviewURL != "" {
		b.WriteString("\nThe link is your capability to decide: do not forward it.\n")
	}
	return b.String()
}

var htmlBody = template.Must(template.New("mail").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1d2330">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:8px;border:1px solid #dfe2e8">
<tr><td style="padding:24px 28px 8px 28px">
<p style="margin:0 0 4px 0;font-size:13px;letter-spacing:.04em;text-transform:uppercase;color:#5a6275">MCP elicitation</p>
<h1 style="margin:0;font-size:22px;line-height:1.3">{{.Title}}</h1>
</td></tr>
<tr><td style="padding:12px 28px;font-size:16px;line-height:1.5;white-space:pre-wrap">{{.Message}}</td></tr>
{{if .ReviewURL}}<tr><td style="padding:12px 28px 20px 28px">
<a href="{{.ReviewURL}}" style="display:inline-block;padding:12px 22px;background:#1f5fd6;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600;font-size:16px">Review and decide</a>
</td></tr>{{end}}
<tr><td style="padding:8px 28px 24px 28px;font-size:14px;line-height:1.6;color:#5a6275">
{{range .Details}}{{.}}<br>{{end}}
{{if .ReviewURL}}<span style="display:block;margin-top:10px">The link is your capability to decide: do not forward it. If the button does not work, open<br><a href="{{.ReviewURL}}" style="color:#1f5fd6;word-break:break-all">{{.ReviewURL}}</a></span>{{end}}
</td></tr>
</table></td></tr></table>
</body></html>
`))

// HTML is the HTML body (e-mail): one card, inline styles, one button.
func HTML(n elicitation.Notice) string {
	var b bytes.Buffer
	_ = htmlBody.Execute(&b, struct {
		Title, Message string
		ReviewURL      template.URL
		Details        []string
	}{Title(n), strings.TrimSpace(n.Message), safeURL(n.ReviewURL), Details(n)})
	return b.String()
}

// safeURL passes only http(s) links (the service's own review URLs).
func safeURL(u string) template.URL {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return template.URL(u)
	}
	return ""
}
