package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// HeaderMailDelivery carries the delivery id in every e-mail; the
// Message-ID is derived from it too, so a repeated delivery is the same
// message to a mail client.
const HeaderMailDelivery = "X-Elicitation-Delivery"

// Mail is one rendered e-mail.
type Mail struct {
	From    string
	To      []string
	Subject string
	Text    string
	HTML    string
	// DeliveryID becomes the Message-ID and X-Elicitation-Delivery.
	DeliveryID string
}

// NewMail renders n for the recipients.
func NewMail(from string, to []string, n elicitation.Notice) Mail {
	return Mail{From: from, To: to, Subject: Subject(n), Text: Text(n), HTML: HTML(n), DeliveryID: n.DeliveryID}
}

// Bytes is the message in RFC 5322 form: multipart/alternative, plain text
// then HTML, both quoted-printable.
func (m Mail) Bytes(now time.Time) []byte {
	var b bytes.Buffer
	domain := "elicitation.invalid"
	if a, err := mail.ParseAddress(m.From); err == nil {
		if i := strings.LastIndexByte(a.Address, '@'); i >= 0 {
			domain = a.Address[i+1:]
		}
	}
	mw := multipart.NewWriter(&b)
	hdr := []string{
		"From: " + m.From,
		"To: " + strings.Join(m.To, ", "),
		"Subject: " + foldWords(mime.QEncoding.Encode("utf-8", m.Subject)),
		"Date: " + now.Format(time.RFC1123Z),
		"Message-ID: <" + m.DeliveryID + "@" + domain + ">",
		HeaderMailDelivery + ": " + m.DeliveryID,
		"Auto-Submitted: auto-generated",
		"MIME-Version: 1.0",
		`Content-Type: multipart/alternative; boundary="` + mw.Boundary() + `"`,
	}
	var head bytes.Buffer
	head.WriteString(strings.Join(hdr, "\r\n") + "\r\n\r\n")
	for _, part := range []struct{ typ, body string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		w, _ := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {part.typ + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		qw := quotedprintable.NewWriter(w)
		_, _ = qw.Write([]byte(strings.ReplaceAll(part.body, "\n", "\r\n")))
		_ = qw.Close()
	}
	_ = mw.Close()
	return append(head.Bytes(), b.Bytes()...)
}

// foldWords folds an encoded header value between its encoded words,
// which mime's encoder puts on one line: a subject of multi-byte
// characters (emoji, say) would otherwise run past RFC 5322's 998
// characters a line, which relays refuse. (Text left unencoded is short.)
func foldWords(v string) string { return strings.ReplaceAll(v, "?= =?", "?=\r\n =?") }

// SMTP sends e-mail through an SMTP relay.
type SMTP struct {
	Config SMTPConfig
	From   string
	To     []string
	Now    func() time.Time
}

// Send implements Sender.
func (s *SMTP) Send(ctx context.Context, n elicitation.Notice) error {
	to := n.AlsoTo(s.To) // a reminder or escalation reaches the delegates too
	m := NewMail(s.From, to, n)
	from, err := mail.ParseAddress(s.From)
	if err != nil {
		return &SendError{Reason: "bad sender address", Permanent: true}
	}
	return s.send(ctx, from.Address, to, len(s.To), m.Bytes(nowOf(s.Now)))
}

// send sends msg to rcpt, of which the first required are the target's
// own addresses: a refusal of one of them fails the send; the others are
// delegates (a reviewer chose them, the relay may not take them), and a
// refusal of one leaves it out of the message, never the reviewers.
func (s *SMTP) send(ctx context.Context, from string, rcpt []string, required int, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	host, _, err := net.SplitHostPort(s.Config.Addr)
	if err != nil {
		return &SendError{Reason: "bad SMTP address", Permanent: true}
	}
	var conn net.Conn
	if s.Config.TLS == "tls" {
		conn, err = (&tls.Dialer{Config: &tls.Config{ServerName: host}}).DialContext(ctx, "tcp", s.Config.Addr)
	} else {
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", s.Config.Addr)
	}
	if err != nil {
		return Reason(err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return smtpError(err)
	}
	defer c.Close()
	if err := s.secure(c, host); err != nil {
		return err
	}
	if err := c.Mail(from); err != nil {
		return smtpError(err)
	}
	for i, to := range rcpt {
		a, err := mail.ParseAddress(to)
		if err == nil {
			err = c.Rcpt(a.Address)
		}
		var te *textproto.Error
		switch {
		case err == nil:
		case i >= required && (a == nil || errors.As(err, &te)):
			// A delegate the relay refused (or no address at all): the
			// message goes to the rest.
		case a == nil:
			return &SendError{Reason: "bad recipient address", Permanent: true}
		default:
			return smtpError(err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return smtpError(err)
	}
	if _, err := w.Write(msg); err != nil {
		return smtpError(err)
	}
	if err := w.Close(); err != nil {
		return smtpError(err)
	}
	// The relay has taken the message (250 after its data): what becomes
	// of the connection now must not send it again.
	_ = c.Quit()
	return nil
}

// secure starts TLS where the configuration asks for it and logs in, never
// with the password in clear: a username needs TLS (tls, or STARTTLS
// offered by the server), whatever the relay's address.
func (s *SMTP) secure(c *smtp.Client, host string) error {
	encrypted := s.Config.TLS == "tls"
	if s.Config.TLS == "" || s.Config.TLS == "starttls" {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(&tls.Config{ServerName: host}); err != nil {
				return &SendError{Reason: "STARTTLS failed"}
			}
			encrypted = true
		}
	}
	if s.Config.Username == "" {
		return nil
	}
	if !encrypted {
		return &SendError{Reason: "the SMTP connection is not encrypted (tls none, or no STARTTLS offered); refusing to send the password in clear", Permanent: true}
	}
	if err := c.Auth(smtp.PlainAuth("", s.Config.Username, s.Config.Password, host)); err != nil {
		return smtpError(err)
	}
	return nil
}

func smtpError(err error) error {
	if err == nil {
		return nil
	}
	var te *textproto.Error
	if errors.As(err, &te) {
		return &SendError{Reason: fmt.Sprintf("SMTP %d", te.Code), Permanent: te.Code >= 500}
	}
	return Reason(err)
}
