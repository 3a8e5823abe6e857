package clientreg

import (
	"net/http"

	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// Rate is a number of registrations per window (ratelimit.Rate).
type Rate = ratelimit.Rate

// RemoteIP is the default source of a registration (ratelimit.RemoteIP).
func RemoteIP(r *http.Request) string { return ratelimit.RemoteIP(r) }
