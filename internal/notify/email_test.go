package notify_test

import (
	"context"
	"encoding/json"
	"flag"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

var screenshot = flag.Bool("screenshot", false, "render the e-mail Mailpit received in Chromium into docs/screenshots/notification-email.png")

// MailpitModule is the real SMTP server the e-mail tests send to (FIELD-NOTES).
const MailpitModule = "github.com/axllent/mailpit@v1.33.1"

// mailpit is a running Mailpit: SMTP on SMTP, its HTTP API on API.
type mailpit struct {
	SMTP, API string
}

func startMailpit(t *testing.T, args ...string) *mailpit {
	t.Helper()
	bin := testenv.GoTool(t, MailpitModule, "mailpit")
	smtpPort, apiPort := testenv.FreePort(t), testenv.FreePort(t)
	m := &mailpit{SMTP: "127.0.0.1:" + strconv.Itoa(smtpPort), API: "http://127.0.0.1:" + strconv.Itoa(apiPort)}
	cmd := exec.Command(bin, "--smtp", m.SMTP, "--listen", "127.0.0.1:"+strconv.Itoa(apiPort),
		"--database", filepath.Join(t.TempDir(), "mailpit.db"), "--disable-version-check", "--quiet", "--smtp-disable-rdns")
	cmd.Args = append(cmd.Args, args...)
	logs := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start mailpit: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(m.API + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m
			}
		}
		select {
		case <-exited:
			t.Fatalf("mailpit exited: %s", logs)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit did not become ready: %s", logs)
		}
	}
}

type mailSummary struct {
	ID      string
	Subject string
	To      []struct{ Address string }
}

type mailMessage struct {
	ID        string
	MessageID string
	Subject   string
	Text      string
	HTML      string
}

func (m *mailpit) get(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := http.Get(m.API + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("mailpit %s: %v", path, err)
	}
}

// waitMessages waits until Mailpit has received n messages.
func (m *mailpit) waitMessages(t *testing.T, n int) []mailSummary {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var list struct{ Messages []mailSummary }
		m.get(t, "/api/v1/messages", &list)
		if len(list.Messages) >= n {
			return list.Messages
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit holds %d messages, want %d", len(list.Messages), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var href = regexp.MustCompile(`href="([^"]+)"`)

// TestEmailThroughMailpit: the created notice reaches a real SMTP server as
// a plain-text and HTML e-mail whose link opens the real review page.
func TestEmailThroughMailpit(t *testing.T) {
	t.Parallel()
	mp := startMailpit(t)
	st, err := boltstore.Open(dbPath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := notify.Config{
		Targets: map[string]notify.TargetConfig{"approvers": {Type: notify.TypeEmail, To: []string{"Alice Reviewer <alice@example.com>", "bob@example.com"}}},
		Email:   notify.EmailConfig{From: "Elicitation <elicitation@example.com>", SMTP: notify.SMTPConfig{Addr: mp.SMTP, TLS: "none"}},
	}
	targets, err := notify.New(cfg, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := elicitation.NewService(elicitation.Config{Store: st, Notifications: targets})
	keys, _ := pagetoken.ParseKeyring("k1:" + pagetoken.GenerateSecret())
	mux := http.NewServeMux()
	review.New(review.Options{Service: svc, Tokens: keys}).Routes(mux)
	site := httptest.NewServer(mux)
	defer site.Close()

	w := notify.NewWorker(&notify.Deliverer{Store: st, Targets: targets, Log: slog.New(slog.DiscardHandler)}, time.Second)
	targets.OnQueued(w.Wake)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	cr, err := svc.Create(context.Background(), "deploy-bot", elicitation.KindApproval, elicitation.Input{
		Message: "Deploy api v1.3 to production?\nThree replicas, canary first.", Context: json.RawMessage(`{"service":"api","version":"1.3"}`),
		Notify: elicitation.Notify{Targets: []string{"approvers"}, ReviewLink: func(id, key string) string { return site.URL + review.Path(id, key) }},
	})

	if err != nil {
		t.Fatal(err)
	}
	list := mp.waitMessages(t, 1)
	if len(list) != 1 || len(list[0].To) != 2 || list[0].To[0].Address != "alice@example.com" {
		t.Fatalf("mailpit received %+v", list)
	}
	var msg mailMessage
	mp.get(t, "/api/v1/message/"+list[0].ID, &msg)
	link := site.URL + review.Path(cr.State.ID, cr.ReviewKey)
	if msg.Subject != "Approval requested: Deploy api v1.3 to production?" {
		t.Errorf("subject %q", msg.Subject)
	}
	if want := elicitation.DeliveryID(cr.State.ID, elicitation.EventCreated, "approvers") + "@example.com"; msg.MessageID != want {
		t.Errorf("Message-ID %q, want %q (stable: a repeat is the same message)", msg.MessageID, want)
	}
	if !strings.Contains(msg.Text, link) || !strings.Contains(msg.Text, "Requested by deploy-bot") || !strings.Contains(msg.Text, "Three replicas, canary first.") {
		t.Errorf("text part:\n%s", msg.Text)
	}
	links := href.FindAllStringSubmatch(msg.HTML, -1)
	if len(links) == 0 {
		t.Fatalf("HTML part has no link:\n%s", msg.HTML)
	}
	for _, l := range links {
		if u := html.UnescapeString(l[1]); u != link {
			t.Errorf("HTML link %q, want %q", u, link)
		}
	}
	if *screenshot {
		shoot(t, msg.HTML)
	}
	// The link works: it opens the review page of this request.
	resp, err := http.Get(html.UnescapeString(links[0][1]))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Deploy api v1.3 to production?") {
		t.Errorf("the mailed link gave %d:\n%.500s", resp.StatusCode, page)
	}
}

// shoot renders page in headless Chromium, as a phone-sized mail client
// would show it, into the docs.
func shoot(t *testing.T, page string) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "mail.html")
	if err := os.WriteFile(src, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(testenv.Root(t), "docs", "screenshots", "notification-email.png")
	cmd := exec.Command("/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=600,480", "--screenshot="+out, "file://"+src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b)
	}
}

// TestSMTPNeverSendsThePasswordInClear: tls none with a username is refused
// when the configuration is read, and the sender refuses it too: a Mailpit
// that accepts any login over plain text records none and receives
// nothing, while the same relay without a username gets the message. tls
// none with a relay that is not on loopback is refused at start.
func TestSMTPNeverSendsThePasswordInClear(t *testing.T) {
	testenv.Slow(t, "Mailpit")
	t.Parallel()
	mp := startMailpit(t, "--smtp-auth-accept-any", "--smtp-auth-allow-insecure")
	doc := `{targets: {a: {type: email, to: [alice@example.com]}}, email: {from: e@example.com, smtp: {addr: "` + mp.SMTP + `", tls: none, username: bob, password: "hunter2-hunter2"}}}`
	if _, err := notify.Parse([]byte(doc), nil); err == nil || !strings.Contains(err.Error(), "password in clear") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("tls none with a username: Parse = %v; want a refusal that says why (and no password)", err)
	}
	for _, addr := range []string{"smtp.example.com:25", "10.0.0.7:25", "[2001:db8::1]:25"} {
		doc := `{targets: {a: {type: email, to: [alice@example.com]}}, email: {from: e@example.com, smtp: {addr: "` + addr + `", tls: none}}}`
		if _, err := notify.Parse([]byte(doc), nil); err == nil || !strings.Contains(err.Error(), "only for a relay on loopback") {
			t.Errorf("tls none to %s: Parse = %v; want refused", addr, err)
		}
	}
	for _, addr := range []string{mp.SMTP, "localhost:1025", "[::1]:25"} {
		doc := `{targets: {a: {type: email, to: [alice@example.com]}}, email: {from: e@example.com, smtp: {addr: "` + addr + `", tls: none}}}`
		if _, err := notify.Parse([]byte(doc), nil); err != nil {
			t.Errorf("tls none to loopback %s: %v", addr, err)
		}
	}

	n := elicitation.Notice{DeliveryID: "dlv_clear", Event: elicitation.EventCreated, ID: "el_1", Kind: elicitation.KindApproval, Message: "Deploy?"}
	login := &notify.SMTP{Config: notify.SMTPConfig{Addr: mp.SMTP, TLS: "none", Username: "bob", Password: "hunter2-hunter2"}, From: "e@example.com", To: []string{"alice@example.com"}}
	err := login.Send(context.Background(), n)
	if se := notify.Reason(err); err == nil || !se.Permanent || !strings.Contains(se.Reason, "password in clear") {
		t.Errorf("send with a username over plain text = %v; want a permanent refusal", err)
	}
	plain := &notify.SMTP{Config: notify.SMTPConfig{Addr: mp.SMTP, TLS: "none"}, From: "e@example.com", To: []string{"alice@example.com"}}
	n.DeliveryID = "dlv_plain"
	if err := plain.Send(context.Background(), n); err != nil {
		t.Fatalf("send without a username: %v", err)
	}
	msgs := mp.waitMessages(t, 1)
	if len(msgs) != 1 {
		t.Errorf("mailpit holds %d messages, want only the one sent without a login", len(msgs))
	}
}
