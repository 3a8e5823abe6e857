package mcptools

import (
	"encoding/json"
	"net/http"
)

// maxNotify bounds how many targets one request may name.
const maxNotify = 16

// notify reads the optional notify: names of operator-configured
// notification targets (the Service refuses names it does not know).
func (a args) notify() ([]string, error) {
	r := a.raw("notify")
	if r == nil {
		return nil, nil
	}
	var names []string
	const rule = `notify must be an array of notification target names configured by the operator, such as ["oncall"]`
	if r[0] != '[' || json.Unmarshal(r, &names) != nil {
		return nil, badArg("notify", "%s, not %s", rule, describe(r))
	}
	if len(names) > maxNotify {
		return nil, badArg("notify", "notify names %d targets; at most %d are allowed", len(names), maxNotify)
	}
	for _, n := range names {
		if n == "" {
			return nil, badArg("notify", "%s; an empty name is not one", rule)
		}
	}
	return names, nil
}

// reviewLink builds the review URL of a new request for its created notice
// the same way the creation result does.
func (s *Server) reviewLink(r *http.Request) func(id, key string) string {
	return func(id, key string) string { return s.reviewURL(r, id, key) }
}
