package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The signed webhook: a POST of the notice as JSON with
//
//	Elicitation-Delivery:  the delivery id (the same on every attempt: drop repeats)
//	Elicitation-Event:     created, reminder, escalated, decided, canceled or expired
//	Elicitation-Timestamp: unix seconds of this attempt
//	Elicitation-Signature: v1=hex(HMAC-SHA256(secret, timestamp + "." + body))
//
// A receiver recomputes the signature over the raw body, compares in
// constant time and refuses timestamps far from its clock (replays).
const (
	HeaderDelivery  = "Elicitation-Delivery"
	HeaderEvent     = "Elicitation-Event"
	HeaderTimestamp = "Elicitation-Timestamp"
	HeaderSignature = "Elicitation-Signature"
)

// Sign returns the signature header value of body sent at ts.
func Sign(secret []byte, ts time.Time, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(strconv.FormatInt(ts.Unix(), 10)))
	m.Write([]byte("."))
	m.Write(body)
	return "v1=" + hex.EncodeToString(m.Sum(nil))
}

// Errors of Verify.
var (
	ErrBadSignature = errors.New("webhook signature does not match")
	ErrStale        = errors.New("webhook timestamp outside the tolerance")
)

// Verify checks a received webhook: its signature over the raw body and
// the timestamp within tolerance of now. Receivers in Go can call it as is.
func Verify(secret []byte, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	sec, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return ErrBadSignature
	}
	ts := time.Unix(sec, 0)
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return ErrStale
	}
	want := Sign(secret, ts, body)
	for _, got := range strings.Split(h.Get(HeaderSignature), ",") {
		if hmac.Equal([]byte(strings.TrimSpace(got)), []byte(want)) {
			return nil
		}
	}
	return ErrBadSignature
}

// Webhook posts signed notices.
type Webhook struct {
	URL    string
	Secret []byte
	Client *http.Client
	// Now is the clock of the timestamp; default time.Now.
	Now func() time.Time
}

// Send implements Sender.
func (w *Webhook) Send(ctx context.Context, n elicitation.Notice) error {
	body, err := json.Marshal(n)
	if err != nil {
		return &SendError{Reason: "could not encode the notice", Permanent: true}
	}
	ts := nowOf(w.Now)
	return post(ctx, w.Client, w.URL, body, map[string]string{
		"Content-Type":  "application/json",
		HeaderDelivery:  n.DeliveryID,
		HeaderEvent:     string(n.Event),
		HeaderTimestamp: strconv.FormatInt(ts.Unix(), 10),
		HeaderSignature: Sign(w.Secret, ts, body),
	})
}
