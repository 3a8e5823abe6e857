package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The tools decode their own arguments, rather than letting the SDK
// validate them against the input schema, so that every malformed argument
// gets an invalid_argument error naming the argument and saying what it
// must be, in words a model can act on (the SDK's validator reports
// JSON-schema paths), and so that the hot tools pay for no schema
// validation at all.

// args holds one call's arguments by name.
type args struct {
	m     map[string]json.RawMessage
	known []string // the names the tool's input schema declares (parseArgs)
}

// badArg is an invalid_argument error about one argument.
func badArg(field, format string, a ...any) *elicitation.Error {
	return &elicitation.Error{Code: elicitation.CodeInvalidArgument, Field: field, Message: fmt.Sprintf(format, a...)}
}

// parseArgs reads raw (absent or null means no arguments) as a JSON object
// whose keys are all among known.
func parseArgs(raw json.RawMessage, known ...string) (args, error) {
	raw = bytes.TrimSpace(raw)
	a := args{known: known}
	if len(raw) == 0 || string(raw) == "null" {
		return a, nil
	}
	if raw[0] != '{' || json.Unmarshal(raw, &a.m) != nil {
		return args{}, badArg("arguments", "arguments must be a JSON object")
	}
	var unknown []string
	for k := range a.m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return args{}, badArg(unknown[0], "unknown argument %s; this tool takes %s", quoteList(unknown), strings.Join(known, ", "))
	}
	return a, nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// raw returns an argument's JSON, nil if absent or null. It panics when
// name is not one the tool's input schema declares: the schema is the one
// list of names, and a decoder that reads another (a misspelling, a name
// the schema lost) is a programming error every test of the tool catches.
func (a args) raw(name string) json.RawMessage {
	if !slices.Contains(a.known, name) {
		panic("mcptools: argument " + strconv.Quote(name) + " is not in the tool's input schema")
	}
	r := bytes.TrimSpace(a.m[name])
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return r
}

// str reads an optional string argument.
func (a args) str(name string) (string, error) {
	r := a.raw(name)
	if r == nil {
		return "", nil
	}
	var s string
	if r[0] != '"' || json.Unmarshal(r, &s) != nil {
		return "", badArg(name, "%s must be a string", name)
	}
	return s, nil
}

// requiredStr reads a required string argument; what says what it is for.
func (a args) requiredStr(name, what string) (string, error) {
	if a.raw(name) == nil {
		return "", badArg(name, "%s is required: %s", name, what)
	}
	return a.str(name)
}

// boolean reads an optional boolean argument (false when absent).
func (a args) boolean(name string) (bool, error) {
	r := a.raw(name)
	if r == nil {
		return false, nil
	}
	switch string(r) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, badArg(name, "%s must be true or false, not %s", name, describe(r))
}

// number reads an optional number argument; ok is false when absent.
func (a args) number(name, rule string) (f float64, ok bool, err error) {
	r := a.raw(name)
	if r == nil {
		return 0, false, nil
	}
	var n json.Number
	if c := r[0]; (c != '-' && (c < '0' || c > '9')) || json.Unmarshal(r, &n) != nil {
		return 0, false, badArg(name, "%s must be %s, not %s", name, rule, describe(r))
	}
	f, err = n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false, badArg(name, "%s must be %s", name, rule)
	}
	return f, true, nil
}

// integer reads an optional integer argument at least min; larger values
// saturate at math.MaxInt32 (every integer limit is far below it).
func (a args) integer(name string, least int, rule string) (n int, ok bool, err error) {
	f, ok, err := a.number(name, rule)
	if err != nil || !ok {
		return 0, ok, err
	}
	if f != math.Trunc(f) || f < float64(least) {
		return 0, false, badArg(name, "%s must be %s, not %s", name, rule, describe(a.raw(name)))
	}
	return int(min(f, math.MaxInt32)), true, nil
}

// describe names a JSON value's type (and a short number) for a message;
// it never echoes strings, which may be long or sensitive.
func describe(r json.RawMessage) string {
	switch r[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	}
	if len(r) <= 24 {
		return string(r)
	}
	return "a number"
}

// labels reads the optional labels object.
func (a args) labels() (elicitation.Labels, error) {
	r := a.raw("labels")
	if r == nil {
		return elicitation.Labels{}, nil
	}
	if r[0] != '{' {
		return elicitation.Labels{}, badArg("labels", `labels must be an object like {"submit": "Ship it", "decline": "Not yet"}`)
	}
	la, err := parseArgs(r, labelNames...)
	if err != nil {
		field := "labels"
		if e, ok := err.(*elicitation.Error); ok {
			field = "labels." + e.Field
		}
		return elicitation.Labels{}, badArg(field, `labels takes only "submit" and "decline"`)
	}
	var l elicitation.Labels
	if l.Submit, err = la.str("submit"); err != nil {
		return l, badArg("labels.submit", "labels.submit must be a string")
	}
	if l.Decline, err = la.str("decline"); err != nil {
		return l, badArg("labels.decline", "labels.decline must be a string")
	}
	return l, nil
}

// timeout reads the optional timeoutSeconds (0 when absent: the default).
// Any whole number is taken, and one outside MinTimeout..MaxTimeout is
// clamped, as the tool's description says: zero and negative values give
// the shortest timeout.
func (a args) timeout() (int, error) {
	least, most := int(elicitation.MinTimeout.Seconds()), int(elicitation.MaxTimeout.Seconds())
	rule := fmt.Sprintf("a whole number of seconds (values outside %d..%d are clamped; default %d)", least, most, int(elicitation.DefaultTimeout.Seconds()))
	f, ok, err := a.number("timeoutSeconds", rule)
	if err != nil || !ok {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, badArg("timeoutSeconds", "timeoutSeconds must be %s, not %s", rule, describe(a.raw("timeoutSeconds")))
	}
	return int(min(max(f, float64(least)), float64(most))), nil
}

// elicitationID reads the required elicitationId.
func (a args) elicitationID() (string, error) {
	id, err := a.requiredStr("elicitationId", "pass the elicitationId that elicit_approval or elicit_selection returned")
	if err == nil && strings.TrimSpace(id) == "" {
		err = badArg("elicitationId", "elicitationId is required: pass the elicitationId that elicit_approval or elicit_selection returned")
	}
	return id, err
}

// createInput is what the creating tools take, decoded by one decoder
// (decodeCreate) into the Service's input: the arguments both take, then
// each kind's own; create adds what the call's transport tells (the
// review link, the client, the push and host links).
type createInput struct {
	elicitation.Input
	kind elicitation.Kind
	push bool
}

// decodeCreate decodes elicit_selection's arguments if selection, else
// elicit_approval's.
func decodeCreate(raw json.RawMessage, selection bool) (createInput, error) {
	in := createInput{kind: elicitation.KindApproval}
	names, what := approvalArgNames, "tell the reviewer what you are asking them to approve"
	if selection {
		in.kind, names, what = elicitation.KindSelection, selectionArgNames, "tell the reviewer what to pick and why"
	}
	a, err := parseArgs(raw, names...)
	if err != nil {
		return in, err
	}
	if in.Notify.Targets, err = a.notify(); err != nil {
		return in, err
	}
	if in.Notify.Escalate, err = a.escalate(); err != nil {
		return in, err
	}
	if in.Reviewers, err = a.reviewers(); err != nil {
		return in, err
	}
	if in.Approvals, err = a.approvals(); err != nil {
		return in, err
	}
	if in.Message, err = a.requiredStr("message", what); err != nil {
		return in, err
	}
	if selection {
		err = a.selectionArgs(&in.Input)
	} else {
		err = a.approvalArgs(&in.Input)
	}
	if err != nil {
		return in, err
	}
	if in.CSS, err = a.str("css"); err != nil {
		return in, err
	}
	if in.Labels, err = a.labels(); err != nil {
		return in, err
	}
	if in.TimeoutSeconds, err = a.timeout(); err != nil {
		return in, err
	}
	if in.push, err = a.pushArg(); err != nil {
		return in, err
	}
	in.AskInHost, err = a.boolean("askInHost")
	return in, err
}

// approvalArgs reads elicit_approval's own arguments into in.
func (a args) approvalArgs(in *elicitation.Input) (err error) {
	in.Context = a.raw("context")
	if s := a.raw("requestedSchema"); s != nil {
		if s[0] != '{' {
			return badArg("requestedSchema", `requestedSchema must be a JSON object like {"type": "object", "properties": {...}, "required": [...]}`)
		}
		in.RequestedSchema = s
	}
	in.DisplayTemplate, err = a.str("displayTemplate")
	return err
}

// selectionArgs reads elicit_selection's own arguments into in.
func (a args) selectionArgs(in *elicitation.Input) (err error) {
	opts := a.raw("options")
	if opts == nil {
		return badArg("options", `options is required: an array of objects, each with a unique string "id" (and optionally a "label" and any other keys)`)
	}
	if opts[0] != '[' || json.Unmarshal(opts, &in.Options) != nil {
		return badArg("options", `options must be an array of objects, each with a unique string "id"`)
	}
	const bound = "a whole number at least 1 (default 1; 1 <= minSelections <= maxSelections <= number of options)"
	if in.MinSelections, _, err = a.integer("minSelections", 1, bound); err != nil {
		return err
	}
	if in.MaxSelections, _, err = a.integer("maxSelections", 1, bound); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		dst  *string
	}{{"rowTemplate", &in.RowTemplate}, {"headingTemplate", &in.HeadingTemplate}, {"footerTemplate", &in.FooterTemplate}, {"hoverTemplate", &in.HoverTemplate}} {
		if *t.dst, err = a.str(t.name); err != nil {
			return err
		}
	}
	return nil
}

// pushArg reads a creating tool's optional push (default true).
func (a args) pushArg() (bool, error) {
	r, ok := a.m["push"]
	if !ok {
		return true, nil
	}
	switch string(r) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return true, badArg("push", "push must be true or false, not %s", describe(r))
}

// reviewers reads the optional reviewers: who may decide, checked against
// the signed-in reviewer (the Service validates the entries and refuses
// them on a server without reviewer sign-in).
func (a args) reviewers() ([]string, error) {
	r := a.raw("reviewers")
	if r == nil {
		return nil, nil
	}
	var list []string
	if r[0] != '[' || json.Unmarshal(r, &list) != nil {
		return nil, badArg("reviewers", `reviewers must be an array of e-mail addresses and "group:NAME" entries, such as ["alice@example.com", "group:ops"], not %s`, describe(r))
	}
	return list, nil
}

// approvals reads the optional approvals: how many distinct reviewers
// must approve (0 when absent: one).
func (a args) approvals() (int, error) {
	n, _, err := a.integer("approvals", 1, fmt.Sprintf("a whole number of distinct reviewers from 1 to %d (default 1)", elicitation.MaxApprovals))
	return n, err
}
