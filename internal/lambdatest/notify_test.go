//go:build unix

package lambdatest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

const (
	notifySecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:NotifySecret-XyZ123"
	hookSecret      = "stream-test-webhook-secret-0123"
)

// hooks is one webhook receiver with two paths: /ok accepts, /flaky
// refuses (503) until it is told to accept. Both verify signatures.
type hooks struct {
	srv *httptest.Server

	mu      sync.Mutex
	flaky   bool                // /flaky refuses while true
	got     map[string][]string // path -> delivery ids, every attempt
	events  map[string]elicitation.Event
	links   map[string]string // delivery id -> reviewUrl
	badSigs int
}

func newHooks(t *testing.T) *hooks {
	h := &hooks{flaky: true, got: map[string][]string{}, events: map[string]elicitation.Event{}, links: map[string]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if notify.Verify([]byte(hookSecret), r.Header, body, time.Now(), 5*time.Minute) != nil {
			h.badSigs++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		id := r.Header.Get(notify.HeaderDelivery)
		h.got[r.URL.Path] = append(h.got[r.URL.Path], id)
		h.events[id] = elicitation.Event(r.Header.Get(notify.HeaderEvent))
		var n elicitation.Notice
		_ = json.Unmarshal(body, &n)
		h.links[id] = n.ReviewURL
		if r.URL.Path == "/flaky" && h.flaky {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hooks) attempts(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got[path])
}

// streamRecords reads every record of the table's stream from DynamoDB
// Local's Streams API, as the event source mapping would hand them over.
func streamRecords(t *testing.T, table string) events.DynamoDBEvent {
	t.Helper()
	recs, err := dynamotest.OpenStream(t, table).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return events.DynamoDBEvent{Records: recs}
}

// startNotify runs the notify function's bootstrap under the emulator on
// table, behind its template.yaml IAM policy, with the targets of doc and
// their secret (HOOK_SECRET) from a Secrets Manager stand-in.
func startNotify(t *testing.T, table, doc string) *lambdatest.Function {
	t.Helper()
	sm := lambdatest.NewSecretsManager(t, notifySecretARN, `{"HOOK_SECRET":"`+hookSecret+`"}`)
	enforcer := lambdatest.NewEnforcer(t, "NotifyFunction", lambdatest.Policies(t)["NotifyFunction"], dynamotest.Endpoint(t))
	t.Cleanup(func() {
		for _, d := range enforcer.Denied() {
			t.Errorf("IAM would refuse a call of the notify function: %s", d)
		}
	})
	boot := lambdatest.Build(t, "NotifyFunction", filepath.Join(t.TempDir(), "notify"))
	return lambdatest.Start(t, "NotifyFunction", boot, 60*time.Second,
		"ELICITATION_TABLE="+table, "ELICITATION_LOG_LEVEL=debug",
		"ELICITATION_NOTIFY_CONFIG="+doc, "ELICITATION_NOTIFY_SECRET_ARN="+notifySecretARN,
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=dummy", "AWS_SECRET_ACCESS_KEY=dummy", "AWS_SESSION_TOKEN=dummy",
		"AWS_ENDPOINT_URL_DYNAMODB="+enforcer.URL, "AWS_ENDPOINT_URL_SECRETS_MANAGER="+sm.URL,
	)
}

// TestNotifyFunctionOnStream runs the notify function's bootstrap under the
// Lambda emulator, behind its template.yaml IAM policy, on stream records
// read from DynamoDB Local: the created notices of two requests, one to a
// target that accepts and one to a target that refuses. The function
// delivers the first and reports no record failed: the refused one backs
// off in the outbox, and once its backoff has passed the scheduled sweep
// delivers it without sending the first again (the one retry policy,
// docs/notifications.md); the sweep sends an expired request's expiry
// notice once.
func TestNotifyFunctionOnStream(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	h := newHooks(t)
	db := dynamotest.Client(dynamotest.Endpoint(t))
	table := dynamotest.Table(t, db)
	doc := `{"targets":{` +
		`"ops":{"type":"webhook","url":"` + h.srv.URL + `/ok","secret":"${HOOK_SECRET}","events":["created","expired"]},` +
		`"flaky":{"type":"webhook","url":"` + h.srv.URL + `/flaky","secret":"${HOOK_SECRET}"}}}`
	fn := startNotify(t, table, doc)

	// The MCP function's side: requests created over the same table, their
	// notices written by the creation's transaction (routing only: the
	// MCP function never sees the secret).
	routing, err := notify.ParseRouting([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	store := dynamostore.New(db, table, dynamostore.Options{})
	ctx := context.Background()
	svc := elicitation.NewService(elicitation.Config{Store: store, Notifications: routing})
	link := func(id, key string) string { return "https://api.example/review/" + id + "/" + key }
	mk := func(svc *elicitation.Service, msg string, targets ...string) elicitation.Created {
		c, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: msg, Context: json.RawMessage(`1`), TimeoutSeconds: 60,
			Notify: elicitation.Notify{Targets: targets, ReviewLink: link}})

		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	good := mk(svc, "Deploy?", "ops")
	bad := mk(svc, "Rotate keys?", "flaky")
	goodID := elicitation.DeliveryID(good.State.ID, elicitation.EventCreated, "ops")
	badID := elicitation.DeliveryID(bad.State.ID, elicitation.EventCreated, "flaky")

	batch := streamRecords(t, table)
	var badSeq string
	outbox := 0
	for _, r := range batch.Records {
		if pk := r.Change.Keys["pk"].String(); dynamostore.IsOutboxKey(pk) && r.EventName == "INSERT" {
			outbox++
			if d, _ := dynamostore.DeliveryAt(r.Change.Keys["sk"].String()); d.ID == badID {
				badSeq = r.Change.SequenceNumber
			}
		}
	}
	// Two created notices and one scheduled expiry notice, among the
	// requests' own items (which the function ignores).
	if outbox != 3 || badSeq == "" || len(batch.Records) <= outbox {
		t.Fatalf("stream: %d records, %d outbox inserts; want 3 among the requests' items", len(batch.Records), outbox)
	}
	invoke := func(ev any) []byte {
		b, _ := json.Marshal(ev)
		out, _ := fn.InvokeRaw(t, b)
		return out
	}
	var res struct{ Attempted int }
	if out := invoke(batch); json.Unmarshal(out, &res) != nil || res.Attempted != 2 {
		t.Fatalf("stream batch: %s; want the two created notices attempted", out)
	}
	if got := h.attempts("/ok"); !slices.Equal(got, []string{goodID}) {
		t.Errorf("the accepting target got %v, want %s once", got, goodID)
	}
	if got := h.attempts("/flaky"); !slices.Equal(got, []string{badID}) {
		t.Errorf("the refusing target got %v, want one attempt of %s", got, badID)
	}
	scheduled := []byte(`{"version":"0","id":"e1","detail-type":"Scheduled Event","source":"aws.events","account":"123456789012","time":"2026-12-01T09:00:00Z","region":"us-east-1","resources":["arn:aws:events:us-east-1:123456789012:rule/sweep"],"detail":{}}`)
	sweep := func(what string, want int) {
		t.Helper()
		out, _ := fn.InvokeRaw(t, scheduled)
		var res struct{ Attempted int }
		if err := json.Unmarshal(out, &res); err != nil || res.Attempted != want {
			t.Fatalf("%s: %s, want %d attempted", what, out, want)
		}
	}
	sweep("within the backoff", 0)

	// The backoff (15 s) passes: the test moves the refused delivery's
	// next attempt to now, as the time would; the target accepts now.
	backoffPassed(t, db, table, badID)
	h.mu.Lock()
	h.flaky = false
	h.mu.Unlock()
	sweep("after the backoff", 1)
	if got := h.attempts("/flaky"); !slices.Equal(got, []string{badID, badID}) {
		t.Errorf("the flaky target got %v, want %s twice (same delivery id)", got, badID)
	}
	if got := h.attempts("/ok"); len(got) != 1 {
		t.Errorf("the accepting target got %v after the retry, want its one delivery only", got)
	}
	tr, err := svc.Audit(ctx, "alice", bad.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionNotified {
			notes = append(notes, e.Detail)
		}
	}
	if len(notes) != 2 || !strings.HasPrefix(notes[0], "created to flaky: attempt 1 failed (HTTP 503)") || notes[1] != "created to flaky: delivered (attempt 2)" {
		t.Errorf("the audit trail says %q", notes)
	}

	// The schedule's sweep: a request that expired a minute ago (created
	// by a service whose clock is two minutes behind) gets its expiry
	// notice, once; the pending one's is not due yet.
	past := elicitation.NewService(elicitation.Config{Store: store, Notifications: routing, Now: func() time.Time { return time.Now().Add(-2 * time.Minute) }})
	old := mk(past, "Too late?", "ops")
	sweep("the old request's created and expired notices", 2)
	sweep("once", 0)
	expired := elicitation.DeliveryID(old.State.ID, elicitation.EventExpired, "ops")
	if got := h.attempts("/ok"); !slices.Contains(got, expired) || len(got) != 3 {
		t.Errorf("the accepting target got %v, want the old request's created and expired notices after the first", got)
	}
	h.mu.Lock()
	if h.badSigs != 0 || h.events[expired] != elicitation.EventExpired {
		t.Errorf("bad signatures %d; expired notice's event %q", h.badSigs, h.events[expired])
	}
	h.mu.Unlock()
}

// TestNotificationsOnAWS is the whole path on the deployed functions: an
// agent creates an approval through the MCP function and the reviewer
// decides through the review and submit functions, each behind its IAM
// policy and reading the targets' document without its secret; the notify
// function, fed the table's stream, sends the created notice with the
// review URL the agent got and the decided notice, each once.
func TestNotificationsOnAWS(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	h := newHooks(t)
	doc := `{"defaults":["ops"],"targets":{"ops":{"type":"webhook","url":"` + h.srv.URL + `/ok","secret":"${HOOK_SECRET}","events":["created","decided","expired"]}}}`
	s := newStack(t, stackOptions{allEnv: []string{"ELICITATION_NOTIFY_CONFIG=" + doc}})
	fn := startNotify(t, s.table, doc)
	created := mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-approval", phKey, s.keys["alice"]))
	id, key := reviewParts(t, created.ReviewURL)
	page, _ := s.fn["review"].Invoke(t, event(t, "review-get", phID, id, phRKey, key))
	if page.StatusCode != 200 {
		t.Fatalf("review page: %d", page.StatusCode)
	}
	sub, _ := s.fn["submit"].Invoke(t, event(t, "submit-valid", phID, id, phRKey, key, phToken, pageToken(t, page.Body)))
	if sub.StatusCode != 200 {
		t.Fatalf("submission: %d\n%.2000s", sub.StatusCode, sub.Body)
	}
	b, _ := json.Marshal(streamRecords(t, s.table))
	out, _ := fn.InvokeRaw(t, b)
	var res struct{ Attempted int }
	if err := json.Unmarshal(out, &res); err != nil || res.Attempted != 2 {
		t.Fatalf("stream batch: %s; want the created and decided notices attempted", out)
	}
	want := []string{elicitation.DeliveryID(id, elicitation.EventCreated, "ops"), elicitation.DeliveryID(id, elicitation.EventDecided, "ops")}
	if got := h.attempts("/ok"); len(got) != 2 || !slices.Contains(got, want[0]) || !slices.Contains(got, want[1]) {
		t.Fatalf("the target got %v, want the created and decided notices %v once each", got, want)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.events[want[0]] != elicitation.EventCreated || h.events[want[1]] != elicitation.EventDecided || h.badSigs != 0 {
		t.Errorf("events %v, bad signatures %d", h.events, h.badSigs)
	}
	if h.links[want[0]] != created.ReviewURL {
		t.Errorf("the created notice links %q, want the agent's review URL %q", h.links[want[0]], created.ReviewURL)
	}
}

// backoffPassed makes the outbox item of delivery id due now, as the end
// of its backoff would (the function's clock is the machine's).
func backoffPassed(t *testing.T, db *dynamodb.Client, table, id string) {
	t.Helper()
	ctx := context.Background()
	out, err := db.Scan(ctx, &dynamodb.ScanInput{
		TableName: aws.String(table), FilterExpression: aws.String("#id = :id"),
		ExpressionAttributeNames: map[string]string{"#id": "id"}, ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberS{Value: id}},
	})
	if err != nil || len(out.Items) != 1 {
		t.Fatalf("the outbox item of %s: %d, %v", id, len(out.Items), err)
	}
	_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: map[string]types.AttributeValue{"pk": out.Items[0]["pk"], "sk": out.Items[0]["sk"]},
		UpdateExpression: aws.String("REMOVE #notBefore"), ExpressionAttributeNames: map[string]string{"#notBefore": "notBefore"},
	})
	if err != nil {
		t.Fatal(err)
	}
}
