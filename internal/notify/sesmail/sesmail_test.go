package sesmail_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/notify/sesmail"
)

func notice() elicitation.Notice {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return elicitation.Notice{
		DeliveryID: "dlv_x", Event: elicitation.EventCreated, At: t0, ID: "req-1", Kind: elicitation.KindApproval,
		Message: "Deploy api v1.3 to production?", Owner: "alice", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour),
		ReviewURL: "https://elicitation.example.com/review/req-1/k3y",
	}
}

// TestSES sends through the real SES v2 client to a stand-in endpoint and
// checks the request the SDK made: sender, recipients, both bodies, the
// delivery header; a rejected message is a permanent failure.
func TestSES(t *testing.T) {
	t.Parallel()
	var got map[string]any
	reject := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/email/outbound-emails" || !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		got = nil
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "application/json")
		if reject {
			w.Header().Set("X-Amzn-ErrorType", "MessageRejected")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"message":"Email address is not verified."}`)
			return
		}
		_, _ = io.WriteString(w, `{"MessageId":"0100018c-abc"}`)
	}))
	defer srv.Close()
	client := sesv2.New(sesv2.Options{
		Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	})
	s := &sesmail.SES{Client: client, From: "elicitation@example.com", To: []string{"alice@example.com"}, ConfigurationSet: "reviews"}
	n := notice()
	if err := s.Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	simple := got["Content"].(map[string]any)["Simple"].(map[string]any)
	body := simple["Body"].(map[string]any)
	text := body["Text"].(map[string]any)["Data"].(string)
	htm := body["Html"].(map[string]any)["Data"].(string)
	hdrs := fmt.Sprint(simple["Headers"])
	if got["FromEmailAddress"] != "elicitation@example.com" || got["ConfigurationSetName"] != "reviews" ||
		!strings.Contains(text, n.ReviewURL) || !strings.Contains(htm, `href="`+n.ReviewURL+`"`) || !strings.Contains(hdrs, "dlv_x") {
		t.Errorf("SES request = %v", got)
	}
	reject = true
	err := s.Send(context.Background(), n)
	if se, ok := err.(*notify.SendError); !ok || !se.Permanent || se.Reason != "SES MessageRejected" {
		t.Errorf("rejected: %v", err)
	}
}

// TestSESRefusedDelegate: a reminder SES refuses for its delegate's
// address (the sandbox's unverified recipient) is sent again to the
// target's own addresses, and succeeds; one SES refuses for those fails.
func TestSESRefusedDelegate(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sent [][]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got struct{ Destination struct{ ToAddresses []any } }
		_ = json.NewDecoder(r.Body).Decode(&got)
		to := got.Destination.ToAddresses
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(fmt.Sprint(to), "elsewhere.test") {
			w.Header().Set("X-Amzn-ErrorType", "MessageRejected")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"message":"Email address is not verified."}`)
			return
		}
		mu.Lock()
		sent = append(sent, to)
		mu.Unlock()
		_, _ = io.WriteString(w, `{"MessageId":"0100018c-abc"}`)
	}))
	defer srv.Close()
	client := sesv2.New(sesv2.Options{
		Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	})
	n := notice()
	n.Event, n.Step = elicitation.EventReminder, 1
	n.Delegates = []elicitation.Delegation{{From: "alice@example.com", To: "bob@elsewhere.test"}}
	s := &sesmail.SES{Client: client, From: "elicitation@example.com", To: []string{"alice@example.com"}}
	err := s.Send(context.Background(), n)
	mu.Lock()
	defer mu.Unlock()
	if err != nil || fmt.Sprint(sent) != "[[alice@example.com]]" {
		t.Errorf("Send = %v, sent to %v; want one message to alice", err, sent)
	}
	s.To = []string{"carol@elsewhere.test"}
	if err := s.Send(context.Background(), n); err == nil {
		t.Error("a message refused for the target's own address was sent")
	}
}
