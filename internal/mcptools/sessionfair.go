package mcptools

import (
	"cmp"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fairShare is the most sessions one principal may hold of a server that
// holds at most n: half of them, rounded up, whatever the operator's
// --mcp-sessions-per-principal, so that no principal holds every session
// and the rest always has room for others.
func fairShare(n int) int { return max(1, (n+1)/2) }

// makeRoom frees a place on a full server for principal, which holds mine
// sessions (opening ones included): it closes the idlest session of the
// principal holding the most, where that one holds more than principal
// would with the new session and has a session without a call in flight,
// else principal's own idlest. It reports whether it closed one.
func (l *sessionCaps) makeRoom(live map[string]*mcp.ServerSession, principal string, mine int) bool {
	held := map[string]int{}
	for _, t := range l.tracked {
		held[t.principal]++
	}
	holders := make([]string, 0, len(held))
	for p, n := range held {
		if p != principal && n > mine+1 {
			holders = append(holders, p)
		}
	}
	slices.SortFunc(holders, func(a, b string) int { return cmp.Or(cmp.Compare(held[b], held[a]), cmp.Compare(a, b)) })
	for _, p := range holders {
		if l.evictIdlest(live, p) {
			return true
		}
	}
	return l.evictIdlest(live, principal)
}
