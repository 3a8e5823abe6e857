package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// rawIDPrefix starts the IDs of requests sent with [upstreamConn.RawCall]. The SDK's
// client numbers its own requests, so string IDs never collide with them.
const rawIDPrefix = "mcp-elicitation-proxy-raw-"

// rawDone receives the upstream's response to a raw call (its ID is the
// proxy's own), or the error that ended the call without one. It runs on
// the upstream connection's reading goroutine and must not block for long.
type rawDone func(resp *jsonrpc.Response, err error)

// rawLink is the raw side of one stdio connection: requests written to the
// child's stdin beside the SDK's, and their responses picked out of its
// stdout before the SDK decodes anything.
type rawLink struct {
	mu      sync.Mutex
	w       io.Writer // the child's stdin, shared with the SDK
	next    uint64
	pending map[string]rawDone
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
func (c *upstreamConn) RawCall(method string, params []byte, done rawDone) (cancel func(reason string), err error) {
	c.mu.Lock()
	l := c.raw
	c.mu.Unlock()
	if l == nil {
		return nil, errUpstreamUnavailable
	}
	return l.call(method, params, done)
}

func (l *rawLink) call(method string, params []byte, done rawDone) (func(string), error) {
	l.mu.Lock()
	if l.err != nil || l.w == nil {
		err := l.err
		l.mu.Unlock()
		if err == nil {
			err = errUpstreamUnavailable
		}
		return nil, err
	}
	l.next++
	key := rawIDPrefix + strconv.FormatUint(l.next, 10)
	if l.pending == nil {
		l.pending = map[string]rawDone{}
	}
	l.pending[key] = done
	w := l.w
	l.mu.Unlock()
	id, _ := jsonrpc.MakeID(key)
	if err := writeMessage(w, &jsonrpc.Request{ID: id, Method: method, Params: params}); err != nil {
		l.mu.Lock()
		delete(l.pending, key)
		l.mu.Unlock()
		return nil, err
	}
	cancel := func(reason string) {
		l.mu.Lock()
		_, ok := l.pending[key]
		delete(l.pending, key)
		l.mu.Unlock()
		if !ok {
			return
		}
		p, _ := json.Marshal(map[string]any{"requestId": key, "reason": reason})
		_ = writeMessage(w, &jsonrpc.Request{Method: "notifications/cancelled", Params: p})
	}
	return cancel, nil
}

// writeMessage writes msg as the SDK's stdio transport does: its JSON-RPC
// encoding and a newline, in one write.
func writeMessage(w io.Writer, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

var rawIDMarker = []byte(`"` + rawIDPrefix)

// take consumes a line of the child's stdout that answers a raw call.
func (l *rawLink) take(line []byte) bool {
	if !bytes.Contains(line, rawIDMarker) {
		return false
	}
	obj, err := plan.ParseObject(line)
	if err != nil {
		return false
	}
	if _, ok := obj.Get("method"); ok {
		return false
	}
	rawID, _ := obj.Get("id")
	var key string
	if json.Unmarshal(rawID, &key) != nil || !strings.HasPrefix(key, rawIDPrefix) {
		return false
	}
	result, _ := obj.Get("result")
	var rerr *jsonrpc.Error
	if raw, ok := obj.Get("error"); ok && string(raw) != "null" {
		rerr = new(jsonrpc.Error)
		if json.Unmarshal(raw, rerr) != nil {
			return false
		}
	}
	l.mu.Lock()
	done := l.pending[key]
	delete(l.pending, key)
	l.mu.Unlock()
	if done != nil {
		id, _ := jsonrpc.MakeID(key)
		resp := &jsonrpc.Response{ID: id, Result: result}
		if rerr != nil {
			resp.Result, resp.Error = nil, rerr
		}
		done(resp, nil)
	}
	return true // a cancelled call's: not the SDK's business either
}

// fail ends every raw call in flight with err, and refuses new ones.
func (l *rawLink) fail(err error) {
	if err == nil || errors.Is(err, io.EOF) {
		err = errors.New("connection closed")
	}
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	pending := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, done := range pending {
		done(nil, err)
	}
}

// stdioTransport starts the upstream command and connects to it as
// mcp.CommandTransport does (the same shutdown: stdin closed, then SIGTERM,
// then SIGKILL), with the child's stdout read through a filter that hands
// raw-call responses to link and its stdin shared with link.
type stdioTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration
	link      *rawLink
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	w := newLineWriter(stdin, func() error {
		t.link.fail(errors.New("upstream connection closed"))
		return t.shutdown(stdin)
	})
	t.link.mu.Lock()
	t.link.w = w
	t.link.mu.Unlock()
	r := newLineReader(stdout, 0, t.link.take, t.link.fail)
	// Closing the connection closes stdin; stdout is left to the child.
	return (&mcp.IOTransport{Reader: io.NopCloser(r), Writer: w}).Connect(ctx)
}

// shutdown is mcp.CommandTransport's: close stdin, wait for the child to
// exit, then SIGTERM, then SIGKILL.
func (t *stdioTransport) shutdown(stdin io.Closer) error {
	if err := stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	res := make(chan error, 1)
	go func() { res <- t.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-res:
			return err, true
		case <-time.After(t.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if err := t.cmd.Process.Signal(syscall.SIGTERM); err == nil {
		if err, ok := wait(); ok {
			return terminated(err)
		}
	}
	if err := t.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("unresponsive subprocess")
}

// terminated is nil for a child that exited on the SIGTERM the proxy sent
// it, which is a clean end; any other exit is returned as it is.
func terminated(err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return err
}
