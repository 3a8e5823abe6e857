package elicitation

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// The limits of SPEC §2. Sizes are bytes of UTF-8 or of serialized JSON;
// lengths of ids and labels are characters.
const (
	MaxMessageBytes  = 4 << 10
	MaxOptions       = 500
	MaxOptionIDChars = 128
	MaxOptionBytes   = 4 << 10
	MaxTemplateBytes = 32 << 10 // each template, and css
	MaxContextBytes  = 64 << 10
	MaxSchemaBytes   = 32 << 10
	MaxSchemaFields  = 50
	MaxLabelChars    = 40
	MaxRequestBytes  = 256 << 10
	// MaxCommentChars bounds the reviewer's optional comment (characters,
	// after line endings are normalised to "\n").
	MaxCommentChars = 2000
	// MaxClientChars bounds each of the MCP client's name and version as
	// recorded on a request (longer values are cut, never refused).
	MaxClientChars    = 100
	DefaultTimeout    = time.Hour
	MinTimeout        = time.Minute
	MaxTimeout        = 24 * time.Hour
	DefaultRetention  = 7 * 24 * time.Hour
	defaultSelections = 1
)

// Named errors for every limit, matched with errors.Is. The *Error that
// wraps each says which input and by how much.
var (
	ErrMessageRequired       = errors.New("message is required")
	ErrMessageTooLong        = errors.New("message too long")
	ErrContentRequired       = errors.New("context or requestedSchema is required")
	ErrContextTooLarge       = errors.New("context too large")
	ErrContextInvalid        = errors.New("context is not valid JSON")
	ErrNumberOutOfRange      = errors.New("number out of range")
	ErrSchemaTooLarge        = errors.New("requestedSchema too large")
	ErrSchemaTooManyFields   = errors.New("requestedSchema has too many fields")
	ErrSchemaInvalid         = errors.New("requestedSchema is not a supported form schema")
	ErrTooFewOptions         = errors.New("options is empty")
	ErrTooManyOptions        = errors.New("too many options")
	ErrOptionInvalid         = errors.New("option is not an object with a string id")
	ErrOptionIDInvalid       = errors.New("option id is empty or too long")
	ErrOptionIDDuplicate     = errors.New("option id is not unique")
	ErrOptionTooLarge        = errors.New("option too large")
	ErrSelectionBounds       = errors.New("minSelections/maxSelections out of range")
	ErrTemplateTooLarge      = errors.New("template too large")
	ErrTemplateInvalid       = errors.New("template does not compile or render")
	ErrCSSTooLarge           = errors.New("css too large")
	ErrLabelInvalid          = errors.New("button label length out of range")
	ErrRequestTooLarge       = errors.New("request too large")
	ErrSelectionInvalid      = errors.New("selection does not satisfy the request")
	ErrFormInvalid           = errors.New("form values do not satisfy requestedSchema")
	ErrSubmissionIDMissing   = errors.New("submission id missing")
	ErrElicitationIDRequired = errors.New("elicitationId is required")
	ErrCommentTooLong        = errors.New("comment too long")
	ErrCommentInvalid        = errors.New("comment holds control characters")
)

// Input is what an agent sends to ask: one input for both kinds of
// request, whose fields are the ones they share, then an approval's, then
// a selection's (a field of the other kind is refused). Payload validates
// it for a kind, and Service.Create creates either.
type Input struct {
	Message        string
	CSS            string
	Labels         Labels
	TimeoutSeconds int
	Notify
	// Client is the MCP client that sent the request, where it said.
	Client Client
	// Reviewers and Approvals: who may decide, and how many distinct
	// reviewers must approve (0 means one). Both need reviewer sign-in.
	Reviewers []string
	Approvals int
	// PushLink, if set, seals the review link (id and review key) for a
	// later push to the agent's host (Payload.PushLink); nil: none.
	PushLink func(id, key string) string
	// HostLink, if set, seals the review key for decisions in the host
	// (Payload.HostLink: its own form, the MCP App); nil: none.
	HostLink func(id, key string) string
	// AskInHost asks in the host's own form (Payload.AskInHost); it needs
	// HostLink.
	AskInHost bool

	// An approval's.
	Context         json.RawMessage // any JSON, shown read-only; null or empty means none
	RequestedSchema json.RawMessage // a flat form schema; null or empty means none
	DisplayTemplate string

	// A selection's.
	Options         []json.RawMessage
	MinSelections   int // 0 means the default
	MaxSelections   int // 0 means the default
	RowTemplate     string
	HeadingTemplate string
	FooterTemplate  string
	HoverTemplate   string
}

// ErrFieldOfOtherKind: an input sets a field of the other kind of request
// (options on an approval, context on a selection).
var ErrFieldOfOtherKind = errors.New("field belongs to the other kind of request")

// otherKindField names the first field in sets that belongs to the other
// kind than kind, or "" when there is none.
func (in Input) otherKindField(kind Kind) string {
	type field struct {
		name string
		set  bool
	}
	approval := []field{{"context", in.Context != nil}, {"requestedSchema", in.RequestedSchema != nil}, {"displayTemplate", in.DisplayTemplate != ""}}
	selection := []field{{"options", in.Options != nil}, {"minSelections", in.MinSelections != 0}, {"maxSelections", in.MaxSelections != 0},
		{"rowTemplate", in.RowTemplate != ""}, {"headingTemplate", in.HeadingTemplate != ""}, {"footerTemplate", in.FooterTemplate != ""}, {"hoverTemplate", in.HoverTemplate != ""}}
	other := selection
	if kind == KindSelection {
		other = approval
	}
	for _, f := range other {
		if f.set {
			return f.name
		}
	}
	return ""
}

// ClampTimeout turns timeoutSeconds into a TTL: 0 (or less) is the default
// of one hour; anything else is clamped to 60 s .. 24 h.
func ClampTimeout(seconds int) time.Duration {
	if seconds <= 0 {
		return DefaultTimeout
	}
	d := time.Duration(min(seconds, int(MaxTimeout/time.Second))) * time.Second
	return max(d, MinTimeout)
}

// Payload validates in as a request of kind and builds the payload it
// describes: the one validation of both kinds, the shared fields first.
func (in Input) Payload(kind Kind) (Payload, error) {
	p := Payload{Message: in.Message, CSS: in.CSS, Labels: in.Labels, Client: in.Client.clean()}
	switch kind {
	case KindApproval:
		p.Templates = Templates{Display: in.DisplayTemplate}
	case KindSelection:
		p.Templates = Templates{Row: in.RowTemplate, Heading: in.HeadingTemplate, Footer: in.FooterTemplate, Hover: in.HoverTemplate}
	default:
		return Payload{}, fmt.Errorf("payload: unknown kind %q", kind)
	}
	if f := in.otherKindField(kind); f != "" {
		return Payload{}, invalid(ErrFieldOfOtherKind, f, "%s is not a field of a%s %s request", f, map[Kind]string{KindApproval: "n"}[kind], kind)
	}
	if err := checkCommon(p); err != nil {
		return Payload{}, err
	}
	var err error
	if p.Reviewers, err = deciders(in.Reviewers, in.Approvals); err != nil {
		return Payload{}, err
	}
	if kind == KindApproval {
		err = in.approval(&p)
	} else {
		err = in.selection(&p)
	}
	if err != nil {
		return Payload{}, err
	}
	return p, checkSize(p)
}

// approval validates an approval's own fields into p.
func (in Input) approval(p *Payload) error {
	if ctx := trimJSON(in.Context); ctx != nil {
		if len(ctx) > MaxContextBytes {
			return invalid(ErrContextTooLarge, "context", "context is %d bytes serialized; at most %d are allowed", len(ctx), MaxContextBytes)
		}
		if !json.Valid(ctx) {
			return invalid(ErrContextInvalid, "context", "context is not valid JSON")
		}
		if err := checkNumbers("context", ctx); err != nil {
			return err
		}
		if _, err := jcs.Transform(ctx); err != nil {
			// The receipt digests the context in its RFC 8785 form
			// (receipt.Digest): one it cannot read could be decided but
			// never attested, and its result never read.
			return invalid(ErrContextInvalid, "context", "context is not I-JSON (RFC 7493): an object repeats a member name, or a string holds an unpaired surrogate escape such as \\ud800")
		}
		p.Context = ctx
	}
	if raw := trimJSON(in.RequestedSchema); raw != nil {
		if len(raw) > MaxSchemaBytes {
			return invalid(ErrSchemaTooLarge, "requestedSchema", "requestedSchema is %d bytes serialized; at most %d are allowed", len(raw), MaxSchemaBytes)
		}
		s, err := ParseFormSchema(raw)
		if err != nil {
			return err
		}
		p.Schema = s
	}
	if p.Context == nil && p.Schema == nil {
		return invalid(ErrContentRequired, "context", "give context (the payload to approve), requestedSchema (a form to fill), or both")
	}
	return nil
}

// selection validates a selection's own fields into p.
func (in Input) selection(p *Payload) error {
	switch n := len(in.Options); {
	case n == 0:
		return invalid(ErrTooFewOptions, "options", "options must hold at least one option")
	case n > MaxOptions:
		return invalid(ErrTooManyOptions, "options", "options holds %d options; at most %d are allowed", n, MaxOptions)
	}
	seen := make(map[string]int, len(in.Options))
	p.Options = make([]Option, 0, len(in.Options))
	for i, raw := range in.Options {
		o, err := parseOption(i, raw)
		if err != nil {
			return err
		}
		if j, dup := seen[o.ID]; dup {
			return invalid(ErrOptionIDDuplicate, fmt.Sprintf("options[%d].id", i), "options[%d] and options[%d] share the id %q; ids must be unique", j, i, o.ID)
		}
		seen[o.ID] = i
		p.Options = append(p.Options, o)
	}
	p.MinSelections = cmp.Or(in.MinSelections, defaultSelections)
	p.MaxSelections = cmp.Or(in.MaxSelections, max(defaultSelections, p.MinSelections))
	if p.MinSelections < 1 || p.MinSelections > p.MaxSelections || p.MaxSelections > len(p.Options) {
		return invalid(ErrSelectionBounds, "minSelections", "need 1 <= minSelections (%d) <= maxSelections (%d) <= number of options (%d)", p.MinSelections, p.MaxSelections, len(p.Options))
	}
	return nil
}

// checkNumbers refuses a JSON value holding a number that no 64-bit float
// can hold (1e400): every reader of the value (templates, the page, the
// agent's own JSON library) would fail on it or turn it into infinity.
func checkNumbers(field string, raw json.RawMessage) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	for {
		tok, err := d.Token()
		if err != nil {
			return nil // the end, or a syntax error reported by its caller
		}
		n, ok := tok.(json.Number)
		if !ok {
			continue
		}
		if _, err := strconv.ParseFloat(string(n), 64); err != nil {
			return invalid(ErrNumberOutOfRange, field, "%s holds the number %s, which is out of range: numbers must fit a 64-bit float (up to about 1.8e308); send larger values as strings", field, truncate(string(n), 32))
		}
	}
}

func parseOption(i int, raw json.RawMessage) (Option, error) {
	field := fmt.Sprintf("options[%d]", i)
	raw = trimJSON(raw)
	if len(raw) > MaxOptionBytes {
		return Option{}, invalid(ErrOptionTooLarge, field, "%s is %d bytes serialized; at most %d are allowed", field, len(raw), MaxOptionBytes)
	}
	var obj map[string]json.RawMessage
	if raw == nil || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return Option{}, invalid(ErrOptionInvalid, field, "%s must be a JSON object with a string \"id\"", field)
	}
	if err := checkNumbers(field, raw); err != nil {
		return Option{}, err
	}
	var o Option
	if err := json.Unmarshal(obj["id"], &o.ID); err != nil || obj["id"] == nil {
		return Option{}, invalid(ErrOptionInvalid, field+".id", "%s.id must be a string", field)
	}
	if strings.TrimSpace(o.ID) == "" || utf8.RuneCountInString(o.ID) > MaxOptionIDChars {
		return Option{}, invalid(ErrOptionIDInvalid, field+".id", "%s.id must be a non-empty string of at most %d characters", field, MaxOptionIDChars)
	}
	if hasControl(o.ID) {
		// A browser rewrites NUL, CR and LF in form values, so such an id
		// could submit as another option's id, or never match its own.
		return Option{}, invalid(ErrOptionIDInvalid, field+".id", "%s.id must not contain control characters (such as newlines)", field)
	}
	if l, ok := obj["label"]; ok {
		// A label that is not a string is data for templates, not for the
		// default rendering, which then shows the id.
		_ = json.Unmarshal(l, &o.Label)
	}
	o.Raw = append(json.RawMessage(nil), raw...)
	return o, nil
}

// deciders validates the reviewers and approvals inputs and returns the
// reviewers to store (nil for none).
func deciders(reviewers []string, approvals int) ([]string, error) {
	r, err := ParseReviewers(reviewers)
	if err != nil {
		return nil, err
	}
	if len(r) == 0 {
		r = nil
	}
	return r, checkApprovals(approvals, r)
}

func checkCommon(p Payload) error {
	if strings.TrimSpace(p.Message) == "" {
		return invalid(ErrMessageRequired, "message", "message is required: tell the reviewer what you are asking")
	}
	if n := len(p.Message); n > MaxMessageBytes {
		return invalid(ErrMessageTooLong, "message", "message is %d bytes; at most %d are allowed", n, MaxMessageBytes)
	}
	for _, t := range p.Templates.Named() {
		if len(t.Source) > MaxTemplateBytes {
			return invalid(ErrTemplateTooLarge, t.Name, "%s is %d bytes; at most %d are allowed", t.Name, len(t.Source), MaxTemplateBytes)
		}
	}
	if len(p.CSS) > MaxTemplateBytes {
		return invalid(ErrCSSTooLarge, "css", "css is %d bytes; at most %d are allowed", len(p.CSS), MaxTemplateBytes)
	}
	for _, l := range [...]struct{ name, l string }{{"labels.submit", p.Labels.Submit}, {"labels.decline", p.Labels.Decline}} {
		name, l := l.name, l.l
		if n := utf8.RuneCountInString(l); l != "" && (strings.TrimSpace(l) == "" || n > MaxLabelChars) {
			return invalid(ErrLabelInvalid, name, "%s must be 1 to %d characters (not blank)", name, MaxLabelChars)
		}
	}
	return nil
}

func checkSize(p Payload) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("measure payload: %w", err)
	}
	if len(b) > MaxRequestBytes {
		return invalid(ErrRequestTooLarge, "", "the request is %d bytes serialized; at most %d are allowed", len(b), MaxRequestBytes)
	}
	return nil
}

// trimJSON returns nil for absent JSON (empty or null), else raw trimmed of space.
func trimJSON(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// hasControl reports whether s holds a control character or is not valid
// UTF-8: text a browser would rewrite when it submits a form.
func hasControl(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl)
}

// CleanComment checks a reviewer's comment and returns it as stored: line
// endings normalised to "\n" (browsers send a textarea's as "\r\n"),
// surrounding space trimmed, at most MaxCommentChars characters, plain text
// with no control characters other than newline and tab.
func CleanComment(s string) (string, error) {
	s = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"))
	if n := utf8.RuneCountInString(s); n > MaxCommentChars {
		return "", invalid(ErrCommentTooLong, "comment", "the comment is %d characters; at most %d are allowed", n, MaxCommentChars)
	}
	if !utf8.ValidString(s) {
		return "", invalid(ErrCommentInvalid, "comment", "the comment is not valid text")
	}
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) {
		return "", invalid(ErrCommentInvalid, "comment", "the comment holds control characters; send plain text")
	}
	return s, nil
}

// clean bounds the client's self-description for display: control
// characters dropped, space trimmed, each part cut to MaxClientChars. A
// client that sends odd text is still served; its request just records less.
func (c Client) clean() *Client {
	part := func(s string) string {
		s = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || r == utf8.RuneError {
				return -1
			}
			return r
		}, s)
		s = strings.TrimSpace(s)
		if utf8.RuneCountInString(s) > MaxClientChars {
			s = string([]rune(s)[:MaxClientChars])
		}
		return s
	}
	c = Client{Name: part(c.Name), Version: part(c.Version)}
	if c.Name == "" {
		return nil
	}
	return &c
}
