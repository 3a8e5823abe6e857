package proxy

import (
	"context"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressRoutes maps the progress tokens the proxy gives upstream calls back
// to the downstream request that asked for progress. Downstream tokens are
// not unique across clients, so each forwarded call gets its own.
type progressRoutes struct {
	mu     sync.Mutex
	next   uint64
	routes map[string]progressRoute
}

type progressRoute struct {
	ctx     context.Context // the downstream request's context
	session *mcp.ServerSession
	token   any
}

// add registers a route and returns the upstream token and a function that
// removes the route.
func (r *progressRoutes) add(rt progressRoute) (string, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	tok := "mcp-elicitation-proxy-" + strconv.FormatUint(r.next, 10)
	if r.routes == nil {
		r.routes = map[string]progressRoute{}
	}
	r.routes[tok] = rt
	return tok, func() {
		r.mu.Lock()
		delete(r.routes, tok)
		r.mu.Unlock()
	}
}

func (r *progressRoutes) get(tok any) (progressRoute, bool) {
	s, ok := tok.(string)
	if !ok {
		return progressRoute{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rt, ok := r.routes[s]
	return rt, ok
}

// forwardProgress passes an upstream progress notification to the
// downstream request it belongs to, under that request's own token.
func (p *Proxy) forwardProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	rt, ok := p.progress.get(req.Params.ProgressToken)
	if !ok {
		return
	}
	params := cleanParams(req.Params)
	params.ProgressToken = rt.token
	if err := rt.session.NotifyProgress(rt.ctx, params); err != nil {
		p.logger.Debug("passing on upstream progress failed", "err", err)
	}
}
