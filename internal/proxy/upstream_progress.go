package proxy

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// progressTracker lets a forwarded call wait until every progress
// notification the upstream sent before its response has been passed on.
// The SDK delivers a response as soon as it is read but queues
// notifications for a handler goroutine, so without this wait a call could
// return before its last progress notifications were forwarded (and a
// downstream client drops progress for a finished request).
type progressTracker struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every handled notification
	received map[string]int
	handled  map[string]int
}

func newProgressTracker() *progressTracker {
	return &progressTracker{changed: make(chan struct{}), received: map[string]int{}, handled: map[string]int{}}
}

// sawParams records a progress notification read off the wire.
func (p *progressTracker) sawParams(params json.RawMessage) {
	var v struct {
		ProgressToken any `json:"progressToken"`
	}
	if json.Unmarshal(params, &v) != nil {
		return
	}
	tok, ok := v.ProgressToken.(string)
	if !ok {
		return
	}
	p.mu.Lock()
	p.received[tok]++
	p.mu.Unlock()
}

func (p *progressTracker) done(token any) {
	tok, ok := token.(string)
	if !ok {
		return
	}
	p.mu.Lock()
	p.handled[tok]++
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// wait blocks until every notification for tok read so far was handled, for
// at most a second, then forgets tok.
func (p *progressTracker) wait(ctx context.Context, tok string) {
	timeout := time.NewTimer(time.Second)
	defer timeout.Stop()
	for {
		p.mu.Lock()
		caughtUp := p.handled[tok] >= p.received[tok]
		ch := p.changed
		if caughtUp {
			delete(p.handled, tok)
			delete(p.received, tok)
		}
		p.mu.Unlock()
		if caughtUp {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-timeout.C:
			return
		}
	}
}

// AwaitProgress waits until the progress notifications with token that
// the upstream sent so far have been passed to upstreamOptions.Progress. Call it
// after the request that carried token has returned.
func (c *upstreamConn) AwaitProgress(ctx context.Context, token string) {
	c.progress.wait(ctx, token)
}
