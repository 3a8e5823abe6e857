package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
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

// escalate reads the optional escalate: the request's escalation chain,
// [{"after": "30m", "notify": ["oncall-lead"]}, …]. The Service checks
// the durations against the request's expiry and the names against the
// deployment's targets.
func (a args) escalate() ([]elicitation.EscalationStep, error) {
	r := a.raw("escalate")
	if r == nil {
		return nil, nil
	}
	const rule = `escalate must be an array of steps such as [{"after": "30m", "notify": ["oncall-lead"]}]`
	var steps []struct {
		After  json.RawMessage `json:"after"`
		Notify json.RawMessage `json:"notify"`
	}
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.DisallowUnknownFields()
	if r[0] != '[' || dec.Decode(&steps) != nil {
		return nil, badArg("escalate", "%s (each step has only after and notify), not %s", rule, describe(r))
	}
	if len(steps) > elicitation.MaxEscalationSteps {
		return nil, badArg("escalate", "escalate has %d steps; at most %d are allowed", len(steps), elicitation.MaxEscalationSteps)
	}
	out := make([]elicitation.EscalationStep, len(steps))
	for i, st := range steps {
		f := fmt.Sprintf("escalate[%d]", i)
		var after string
		if json.Unmarshal(st.After, &after) != nil {
			return nil, badArg(f+".after", `%s.after must be a duration string such as "30m" or "1h30m"`, f)
		}
		d, err := time.ParseDuration(after)
		if err != nil {
			return nil, badArg(f+".after", `%s.after %q is not a duration such as "30m" or "1h30m"`, f, after)
		}
		if json.Unmarshal(st.Notify, &out[i].Notify) != nil || len(out[i].Notify) == 0 {
			return nil, badArg(f+".notify", `%s.notify must be a non-empty array of notification target names, such as ["oncall-lead"]`, f)
		}
		out[i].After = d
	}
	return out, nil
}
