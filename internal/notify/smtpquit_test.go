package notify_test

import (
	"context"
	"encoding/json"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// relayDroppingQuit is an SMTP relay on a real socket that accepts each
// message (250 after its data) and then drops the connection at QUIT
// without an answer, as a relay behind a load balancer that times out,
// or one restarting, may. It counts the messages it accepted.
type relayDroppingQuit struct {
	ln       net.Listener
	mu       sync.Mutex
	accepted int
}

func newRelayDroppingQuit(t *testing.T) *relayDroppingQuit {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relayDroppingQuit{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.serve(c)
		}
	}()
	return r
}

func (r *relayDroppingQuit) serve(c net.Conn) {
	defer c.Close()
	tp := textproto.NewConn(c)
	_ = tp.PrintfLine("220 relay.test ESMTP")
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		switch verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0]); verb {
		case "EHLO", "HELO", "MAIL", "RCPT", "RSET", "NOOP":
			_ = tp.PrintfLine("250 ok")
		case "DATA":
			_ = tp.PrintfLine("354 go on")
			if _, err := tp.ReadDotBytes(); err != nil {
				return
			}
			r.mu.Lock()
			r.accepted++
			r.mu.Unlock()
			_ = tp.PrintfLine("250 queued")
		default: // QUIT: gone without a word
			return
		}
	}
}

// TestSMTPAcceptedIsDelivered: once the relay has accepted the message
// (250 after its data), the delivery is delivered, whatever becomes of
// the connection after: it is not retried, so the reviewer gets one
// e-mail, not one per attempt.
func TestSMTPAcceptedIsDelivered(t *testing.T) {
	t.Parallel()
	relay := newRelayDroppingQuit(t)
	_, svc, d, _ := deliveryRig(t, notify.Config{
		Defaults: []string{"approvers"},
		Targets:  map[string]notify.TargetConfig{"approvers": {Type: notify.TypeEmail, To: []string{"alice@example.com"}}},
		Email:    notify.EmailConfig{From: "elicitation@example.com", SMTP: notify.SMTPConfig{Addr: relay.ln.Addr().String(), TLS: "none"}},
	})
	ctx := context.Background()
	cr, err := svc.Create(ctx, "deploy-bot", elicitation.KindApproval, elicitation.Input{Message: "Deploy?", Context: json.RawMessage(`1`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	tr, err := svc.Audit(ctx, "deploy-bot", cr.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionNotified {
			notes = append(notes, e.Detail)
		}
	}
	relay.mu.Lock()
	defer relay.mu.Unlock()
	if strings.Join(notes, "; ") != "created to approvers: delivered (attempt 1)" || relay.accepted != 1 {
		t.Errorf("audit %q, %d messages accepted; want delivered at attempt 1, once", notes, relay.accepted)
	}
}
