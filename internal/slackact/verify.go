package slackact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxSkew is Slack's replay window: a request whose timestamp is further
// than this from the clock is refused, however well signed.
const MaxSkew = 5 * time.Minute

// Errors of Verify.
var (
	ErrUnsigned  = errors.New("slack request without X-Slack-Signature or X-Slack-Request-Timestamp")
	ErrSignature = errors.New("slack request signature does not match the signing secret")
	ErrStale     = errors.New("slack request timestamp is more than five minutes from the server's clock")
)

// Verify checks a request from Slack as Slack's documentation says: the
// X-Slack-Signature header is "v0=" and the hex HMAC-SHA256, keyed with
// the app's signing secret, of "v0:" + X-Slack-Request-Timestamp + ":" +
// the raw body; and the timestamp (Unix seconds) is within MaxSkew of now.
// The comparison takes constant time.
func Verify(secret []byte, h http.Header, body []byte, now time.Time) error {
	sig, ts := h.Get("X-Slack-Signature"), h.Get("X-Slack-Request-Timestamp")
	if sig == "" || ts == "" {
		return ErrUnsigned
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxSkew || d < -MaxSkew {
		return ErrStale
	}
	hexSig, ok := strings.CutPrefix(sig, "v0=")
	if !ok {
		return ErrSignature
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return ErrSignature
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return ErrSignature
	}
	return nil
}
