// Package sessionwatch tells the parts of a server that outlive a call
// (a session's pushes, its task notifications) when the MCP session they
// belong to ends: one watcher per session, however many parts ask.
package sessionwatch

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Watch maps each session asked about to a context that ends when the
// session closes. Its zero value is ready; it must not be copied.
type Watch struct {
	done sync.Map // *mcp.ServerSession -> context.Context
}

// Done returns a context that ends when ss closes. The first call for ss
// starts the one goroutine that waits for it; the entry goes with it.
func (w *Watch) Done(ss *mcp.ServerSession) context.Context {
	if v, ok := w.done.Load(ss); ok {
		return v.(context.Context)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if v, loaded := w.done.LoadOrStore(ss, ctx); loaded {
		cancel()
		return v.(context.Context)
	}
	go func() {
		_ = ss.Wait()
		cancel()
		w.done.Delete(ss)
	}()
	return ctx
}
