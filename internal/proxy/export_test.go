package proxy

// FastCalls returns how many calls p forwarded on the fast path.
func FastCalls(p *Proxy) int64 { return p.fastCalls.Load() }
