package notify_test

import (
	"bytes"
	"mime"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// TestMailLinesWithinLimit: whatever the agent's message, every line of
// the e-mail is within RFC 5322's 998 characters (a relay such as Exim
// refuses longer ones), the subject reads back as rendered, and a line
// break in the message never starts a header of its own.
func TestMailLinesWithinLimit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, msg string }{
		{"emoji", strings.Repeat("🚀", 100)},
		{"CJK", strings.Repeat("部署", 60)},
		{"ASCII", strings.Repeat("deploy ", 40)},
		{"encoded-word look-alike", "=?utf-8?q?Approved?= =?utf-8?q?now?= " + strings.Repeat("é", 70)},
		{"header injection", "Deploy?\r\nBcc: eve@example.net\r\nSubject: hi"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := elicitation.Notice{DeliveryID: "dlv_1", Event: elicitation.EventCreated, Kind: elicitation.KindApproval, Message: c.msg}
			raw := notify.NewMail("Elicitation <elicitation@example.com>", []string{"alice@example.com"}, n).Bytes(time.Now())
			for i, line := range bytes.Split(raw, []byte("\r\n")) {
				if len(line) > 998 {
					t.Errorf("line %d is %d characters long: %.80s…", i, len(line), line)
				}
			}
			m, err := mail.ReadMessage(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
			if err != nil || got != notify.Subject(n) {
				t.Errorf("subject reads back %q (%v), want %q", got, err, notify.Subject(n))
			}
			if m.Header.Get("Bcc") != "" || len(m.Header["Subject"]) != 1 {
				t.Errorf("the message made headers of its own: %v", m.Header)
			}
		})
	}
}
