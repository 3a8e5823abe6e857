package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// rawIDPrefix starts the IDs of requests sent with [Conn.RawCall]. The SDK's
// client numbers its own requests, so string IDs never collide with them.
const rawIDPrefix = "mcp-elicitation-proxy-raw-"

// RawDone receives the upstream's response to a raw call (its ID is the
// proxy's own), or the error that ended the call without one. It runs on
// the upstream connection's read loop and must not block for long.
type RawDone func(resp *jsonrpc.Response, err error)

// rawCalls tracks the raw calls in flight on one stdio connection.
type rawCalls struct {
	mu      sync.Mutex
	next    uint64
	pending map[string]RawDone
	err     error // set once the connection has failed
}

// RawCall sends one request with the given raw params to a stdio upstream
// under a proxy-owned ID, bypassing the SDK client's typed encoding and
// decoding, and calls done with the upstream's response. The returned
// cancel function, if the caller gives up, forgets the call and tells the
// upstream with notifications/cancelled (done is then never called).
//
// RawCall fails, without sending anything, for a URL upstream and while the
// upstream is being reconnected; the caller should then take the SDK path.
func (c *Conn) RawCall(method string, params []byte, done RawDone) (cancel func(reason string), err error) {
	c.mu.Lock()
	cc := c.raw
	c.mu.Unlock()
	if cc == nil {
		return nil, ErrUnavailable
	}
	return cc.rawCall(method, params, done)
}

func (c *captureConn) rawCall(method string, params []byte, done RawDone) (func(string), error) {
	r := &c.raw
	r.mu.Lock()
	if r.err != nil {
		r.mu.Unlock()
		return nil, r.err
	}
	r.next++
	key := rawIDPrefix + strconv.FormatUint(r.next, 10)
	if r.pending == nil {
		r.pending = map[string]RawDone{}
	}
	r.pending[key] = done
	r.mu.Unlock()
	id, _ := jsonrpc.MakeID(key)
	if err := c.Connection.Write(context.Background(), &jsonrpc.Request{ID: id, Method: method, Params: params}); err != nil {
		r.mu.Lock()
		delete(r.pending, key)
		r.mu.Unlock()
		return nil, err
	}
	cancel := func(reason string) {
		r.mu.Lock()
		_, ok := r.pending[key]
		delete(r.pending, key)
		r.mu.Unlock()
		if !ok {
			return
		}
		p, _ := json.Marshal(map[string]any{"requestId": key, "reason": reason})
		_ = c.Connection.Write(context.Background(), &jsonrpc.Request{Method: "notifications/cancelled", Params: p})
	}
	return cancel, nil
}

// deliverRaw hands a response to the raw call awaiting it and reports
// whether it was one (then the SDK must not see it).
func (c *captureConn) deliverRaw(resp *jsonrpc.Response) bool {
	key, ok := resp.ID.Raw().(string)
	if !ok || !strings.HasPrefix(key, rawIDPrefix) {
		return false
	}
	r := &c.raw
	r.mu.Lock()
	done := r.pending[key]
	delete(r.pending, key)
	r.mu.Unlock()
	if done != nil {
		done(resp, nil)
	}
	return true
}

// failRaw ends every raw call in flight with err, and refuses new ones.
func (c *captureConn) failRaw(err error) {
	if err == nil {
		err = errors.New("connection closed")
	}
	r := &c.raw
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	pending := r.pending
	r.pending = nil
	r.mu.Unlock()
	for _, done := range pending {
		done(nil, err)
	}
}
