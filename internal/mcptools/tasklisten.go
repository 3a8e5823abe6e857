package mcptools

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// MaxListenTasks bounds how many tasks one subscriptions/listen watches,
// and how many of the ids it names are read.
const MaxListenTasks = 100

// listen answers a 2026-07-28 subscriptions/listen that asks for task
// notifications (notifications.taskIds, which Lift moved into _meta) from a
// client that declared the extension: it acknowledges the asker's own
// tasks among the first MaxListenTasks distinct ids (unknown and other
// principals' ids are left out of the acknowledgement, as the
// specification lets it), then sends each
// one's notifications/tasks when it ends (decided, declined, cancelled,
// expired: the DetailedTask tasks/get would answer, the result inline), and
// ends the stream when all have, or when the client goes away. The
// notifications travel as carriers, which Uncarry turns back.
func (t *tasks) listen(ctx context.Context, req mcp.Request) (mcp.Result, bool, error) {
	meta := req.GetParams().GetMeta()
	raw, _ := json.Marshal(meta[listenTaskIDsMeta])
	var ids []string
	if meta[listenTaskIDsMeta] == nil || json.Unmarshal(raw, &ids) != nil || !declaresExtension(req) {
		return nil, false, nil // not a task listen: the SDK's
	}
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok {
		return nil, false, nil
	}
	subID := meta[listenIDMeta]
	principal := PrincipalOf(req.GetExtra())
	// The first MaxListenTasks distinct ids named are read, each once:
	// however many a listen names, it costs the store that many reads.
	accepted, read := []string{}, make([]string, 0, MaxListenTasks)
	for _, id := range ids {
		if len(read) == MaxListenTasks {
			break
		}
		if slices.Contains(read, id) {
			continue
		}
		read = append(read, id)
		if _, err := t.s.svc.Status(ctx, principal, id); err == nil {
			accepted = append(accepted, id)
		}
	}
	if len(accepted) > 0 {
		release, err := t.s.waits.take(t.s.limitPrincipal(req.GetExtra()))
		if err != nil {
			return nil, true, errBusy(err)
		}
		defer release()
	}
	ack := map[string]any{"notifications": map[string]any{"taskIds": accepted}, "_meta": map[string]any{mcp.MetaKeySubscriptionID: subID}}
	if err := notify(ctx, ss, methodAcked, ack); err != nil {
		return nil, true, errInternal
	}
	// The listen ends, with its result, at the server's wait bound (within
	// --max-wait, and before the HTTP write deadline or the invocation's
	// end): the host listens again for the tasks still working.
	watch, stop := context.WithTimeout(ctx, t.s.svc.WaitBound(ctx, 0))
	defer stop()
	var wg sync.WaitGroup
	for _, id := range accepted {
		wg.Go(func() { t.notifyWhenOver(ctx, watch, ss, req, principal, id) })
	}
	wg.Wait()
	return &mcp.SubscriptionsListenResult{Meta: mcp.Meta{mcp.MetaKeySubscriptionID: subID}}, true, nil
}

// notifyWhenOver waits for task id to end while watch lasts, then sends
// its DetailedTask (under ctx: a task that ends as watch does is still
// told).
func (t *tasks) notifyWhenOver(ctx, watch context.Context, ss *mcp.ServerSession, req mcp.Request, principal, id string) {
	st, err := t.s.svc.Watch(watch, principal, id)
	if err != nil || st.Status == elicitation.StatusPending {
		return
	}
	tg := target{req: req, f: eraSessionless, principal: principal, state: st, view: viewOf(st, eraSessionless)}
	res, err := t.getExt(ctx, tg)
	if err != nil {
		t.s.log.DebugContext(ctx, "task notification not built", "taskId", id, "err", err)
		return
	}
	b, err := json.Marshal(res)
	var params map[string]json.RawMessage
	if err != nil || json.Unmarshal(b, &params) != nil {
		return
	}
	delete(params, "resultType") // a tasks/get result's, not the task's
	if err := notify(ctx, ss, methodExtStatus, params); err != nil {
		t.s.log.DebugContext(ctx, "task notification not delivered", "taskId", id, "err", err)
	}
}
