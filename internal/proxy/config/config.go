// Package config loads and validates the YAML configuration of
// mcp-elicitation-proxy.
//
// The keys of the Python original (v0.1.0) load and mean the same; the
// port's own keys are documented extensions. A mistake (a value of the wrong
// type, a blank value, both or neither upstream, args/env without a
// command, a duplicate key, a second YAML document) is refused with one
// error naming the file, the line and the YAML path. An unknown key is a
// warning with the same place and the nearest known key, so that a typo
// stays visible; with Options.Strict it is refused.
//
// gate.go holds the human gate's keys.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultName is the MCP server name the proxy announces when proxy.name is
// not set.
const DefaultName = "mcp-elicitation-proxy"

// FallbackStructuredError is the default value of
// elicitation.fallback_on_unsupported: a client that cannot answer a form gets
// a structured result naming the missing fields.
const FallbackStructuredError = "structured_error"

// Field types a configured elicitation field may declare; the original
// accepts any other string and ignores it, and so does the port (with a
// warning).
var fieldTypes = []string{"string", "number", "integer", "boolean"}

// Config is a loaded, validated proxy configuration.
type Config struct {
	Proxy       Proxy
	Upstream    Upstream
	Elicitation Elicitation
	Policies    Policies
	// Tools holds per-tool settings keyed by upstream tool name.
	Tools map[string]Tool
	// ElicitationService is where the human gate asks when the host
	// cannot (gate.go); nil when not configured.
	ElicitationService *ElicitationService
	// Warnings are what loading ignored: unknown keys and values the
	// proxy does not use, each at its place in the file.
	Warnings []*Error
}

// Proxy describes the proxy's own MCP identity.
type Proxy struct {
	// Name is the server name announced to downstream clients.
	Name string
}

// Upstream is the one MCP server the proxy fronts: exactly one of URL and
// Command is set.
type Upstream struct {
	// URL is a streamable HTTP endpoint, or a legacy SSE endpoint when its
	// path ends in /sse. A url naming a .py or .js server script, as the
	// original accepts, loads as Command python3 or node with the script
	// as its argument.
	URL string
	// Command, Args and Env start a stdio child process. The child gets a
	// safe default environment plus Env, or the proxy's whole environment
	// plus Env when InheritEnv is set.
	Command    string
	Args       []string
	Env        map[string]string
	InheritEnv bool
}

// SSE reports whether the URL names a legacy SSE endpoint (its path ends in
// /sse), which the original reaches with the SSE transport.
func (u Upstream) SSE() bool {
	pu, err := url.Parse(u.URL)
	if u.URL == "" || err != nil {
		return false
	}
	return strings.HasSuffix(strings.TrimSuffix(pu.Path, "/"), "/sse")
}

// Elicitation configures how missing arguments are asked for.
type Elicitation struct {
	Enabled               bool
	FallbackOnUnsupported string
}

// Policies configures the required-field checks.
type Policies struct {
	SchemaRequired     SchemaRequired
	SensitiveRequired  SensitiveRequired
	ConfirmDestructive ConfirmDestructive
}

// SchemaRequired controls required-field enforcement. Disabled, as in the
// original, no missing field is elicited or refused (neither the schema's
// nor tools.<tool>.required), while the sensitive policy still sees them.
type SchemaRequired struct {
	Enabled bool
}

// SensitiveRequired controls the refusal to elicit fields that look like
// secrets.
type SensitiveRequired struct {
	Enabled bool
	// SensitiveNameMarkers and SensitiveSchemaMarkers are the original's
	// keys: a non-empty list replaces that list's built-in markers.
	SensitiveNameMarkers   []string
	SensitiveSchemaMarkers []string
	// DefaultMarkers keeps the built-in markers; NameMarkers and
	// SchemaMarkers are added to them (the port's extension keys).
	DefaultMarkers bool
	// NameMarkers are matched, token by token, against argument names.
	NameMarkers []string
	// SchemaMarkers are matched against a property's title, description and
	// format.
	SchemaMarkers []string
}

// Tool holds the settings of one upstream tool.
type Tool struct {
	// Required lists fields required in addition to the schema's.
	Required []string
	Elicit   Elicit
	// AmbiguousIf and ConfirmIf are the human gate's rules (gate.go);
	// nil when not configured.
	AmbiguousIf *Ambiguity
	ConfirmIf   *Confirm
}

// Elicit configures the form shown for a tool's missing fields.
type Elicit struct {
	Message string
	Fields  map[string]Field
}

// Field overrides how one field is asked for.
type Field struct {
	// Type is "string", "number", "integer", "boolean", or empty for the
	// upstream's type.
	Type        string
	Description string
}

// Error is a configuration mistake, or a warning, at a place in the file.
type Error struct {
	File string // may be empty
	Line int    // 0 when unknown
	Path string // YAML path such as "upstream.args"; empty for the document
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Options changes how a configuration is loaded.
type Options struct {
	// Strict refuses unknown keys and ignored values instead of warning.
	Strict bool
}

// LoadWith reads and validates the configuration file at path.
func LoadWith(path string, opts Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cfg, err := ParseWith(data, opts)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.File = path
		}
		return nil, err
	}
	for _, w := range cfg.Warnings {
		w.File = path
	}
	return cfg, nil
}

// ParseWith validates a configuration document.
func ParseWith(data []byte, opts Options) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Msg: "the configuration is empty: an upstream is required"}
		}
		return nil, &Error{Line: yamlErrorLine(err), Msg: "invalid YAML: " + yamlErrorText(err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{Line: extra.Line, Msg: "more than one YAML document; put the whole configuration in one"}
	} else if !errors.Is(err, io.EOF) {
		return nil, &Error{Line: yamlErrorLine(err), Msg: "invalid YAML: " + yamlErrorText(err)}
	}
	cfg := &Config{
		Proxy:       Proxy{Name: DefaultName},
		Elicitation: Elicitation{Enabled: true, FallbackOnUnsupported: FallbackStructuredError},
		Policies: Policies{
			SchemaRequired:    SchemaRequired{Enabled: true},
			SensitiveRequired: SensitiveRequired{Enabled: true, DefaultMarkers: true},
		},
		Tools: map[string]Tool{},
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	d := &decoder{cfg: cfg, strict: opts.Strict}
	if err := d.root(root); err != nil {
		return nil, err
	}
	cfg.Warnings = d.warnings
	return cfg, nil
}

var lineRE = regexp.MustCompile(`line (\d+): `)

func yamlErrorLine(err error) int {
	m := lineRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	var n int
	fmt.Sscanf(m[1], "%d", &n)
	return n
}

func yamlErrorText(err error) string {
	return lineRE.ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), "")
}

// decoder holds what one load collects besides the configuration.
type decoder struct {
	cfg    *Config
	strict bool
	// extension is set for the port's own sections (mapping): strict
	// whatever the mode, and a duplicate key there is a mistake.
	extension bool
	warnings  []*Error
	// fallbackNode is elicitation.fallback_on_unsupported's, for checkGate.
	fallbackNode *yaml.Node
}

// keys decodes the known keys of one mapping: each function gets the value
// node and its YAML path.
type keys map[string]func(v *yaml.Node, path string) error

func (d *decoder) root(n *yaml.Node) error {
	var upstreamNode *yaml.Node
	cfg := d.cfg
	err := d.mapping(n, "", keys{
		"proxy": func(v *yaml.Node, p string) error {
			return d.mapping(v, p, keys{"name": strKey(&cfg.Proxy.Name)})
		},
		"upstream": func(v *yaml.Node, p string) error {
			upstreamNode = v
			return d.upstream(v, p, &cfg.Upstream)
		},
		"elicitation": func(v *yaml.Node, p string) error { return d.elicitation(v, p, &cfg.Elicitation) },
		"policies":    func(v *yaml.Node, p string) error { return d.policies(v, p, &cfg.Policies) },
		"elicitation_service": func(v *yaml.Node, p string) (err error) {
			cfg.ElicitationService, err = decodeElicitationService(v, p)
			return err
		},
		"tools": func(v *yaml.Node, p string) error { return eachValue(d, v, p, &cfg.Tools, d.tool) },
	})
	if err != nil {
		return err
	}
	u := cfg.Upstream
	switch {
	case upstreamNode == nil:
		return &Error{Line: n.Line, Msg: "upstream is required: set upstream.url (streamable HTTP) or upstream.command (stdio)"}
	case u.URL != "" && u.Command != "":
		return errAt(upstreamNode, "upstream", "set exactly one of url and command, not both")
	case u.URL == "" && u.Command == "":
		return errAt(upstreamNode, "upstream", "set exactly one of url (streamable HTTP) and command (stdio)")
	}
	return checkGate(d.fallbackNode, cfg)
}

func (d *decoder) elicitation(n *yaml.Node, path string, e *Elicitation) error {
	return d.mapping(n, path, keys{
		"enabled": func(v *yaml.Node, p string) error { return boolean(v, p, &e.Enabled) },
		"fallback_on_unsupported": func(v *yaml.Node, p string) error {
			d.fallbackNode = v
			return decodeFallback(v, p, &e.FallbackOnUnsupported)
		},
	})
}

func (d *decoder) upstream(n *yaml.Node, path string, u *Upstream) error {
	var argsNode, envNode, inheritNode *yaml.Node
	err := d.mapping(n, path, keys{
		"url": func(v *yaml.Node, p string) error {
			if err := str(v, p, &u.URL); err != nil {
				return err
			}
			pu, err := url.Parse(u.URL)
			if err == nil && pu.Scheme == "" && scriptCommand(u.URL) != "" {
				return nil // a server script, as the original's FastMCP runs one
			}
			if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				return errAt(v, p, fmt.Sprintf("%q is not an http:// or https:// URL (or a .py or .js server script)", u.URL))
			}
			return nil
		},
		"command": strKey(&u.Command),
		"args": func(v *yaml.Node, p string) error {
			argsNode = v
			return strList(v, p, &u.Args, argList)
		},
		"env": func(v *yaml.Node, p string) error {
			envNode = v
			u.Env = map[string]string{}
			return d.eachKey(v, p, func(name string, v *yaml.Node, p string) error {
				if err := envName(v, p, name); err != nil {
					return err
				}
				if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
					return errAt(v, p, "must be a string (quote numbers and booleans)")
				}
				u.Env[name] = v.Value
				return nil
			})
		},
		"inherit_env": func(v *yaml.Node, p string) error {
			inheritNode = v
			return boolean(v, p, &u.InheritEnv)
		},
	})
	if err != nil {
		return err
	}
	if u.Command == "" {
		if err := d.commandOnly(path, argsNode, envNode, inheritNode); err != nil {
			return err
		}
		u.Env = nil
	}
	if c := scriptCommand(u.URL); c != "" && !strings.Contains(u.URL, "://") {
		// The original hands url to FastMCP, which runs a .py or .js
		// path as a stdio server: so does the port, with python3 or node.
		if u.Command != "" {
			return errAt(n, path, "set exactly one of url and command, not both")
		}
		u.Command, u.Args, u.URL = c, []string{u.URL}, ""
	}
	if u.Args == nil {
		u.Args = []string{}
	}
	return nil
}

// commandOnly checks the keys that only upstream.command takes when it is
// not set: an empty args or env (as a template left in, which the original
// ignores) is a warning, anything else a mistake.
func (d *decoder) commandOnly(path string, args, env, inherit *yaml.Node) error {
	for _, x := range []struct {
		n   *yaml.Node
		key string
	}{{args, "args"}, {env, "env"}, {inherit, "inherit_env"}} {
		switch {
		case x.n == nil:
		case x.key != "inherit_env" && (x.n.Kind == yaml.SequenceNode || x.n.Kind == yaml.MappingNode) && len(x.n.Content) == 0:
			if err := d.warn(x.n, path+"."+x.key, "is empty and ignored: it is only used with upstream.command"); err != nil {
				return err
			}
		default:
			return errAt(x.n, path+"."+x.key, "is only valid with upstream.command")
		}
	}
	return nil
}

// scriptCommand is the interpreter for a server script named as a url, or
// "" when it names none.
func scriptCommand(target string) string {
	switch {
	case strings.HasSuffix(target, ".py"):
		return "python3"
	case strings.HasSuffix(target, ".js"):
		return "node"
	}
	return ""
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (d *decoder) policies(n *yaml.Node, path string, p *Policies) error {
	return d.mapping(n, path, keys{
		"schema_required":     d.enabledOnly(&p.SchemaRequired.Enabled),
		"confirm_destructive": d.enabledOnly(&p.ConfirmDestructive.Enabled),
		"sensitive_required": func(v *yaml.Node, path string) error {
			s := &p.SensitiveRequired
			markers := func(dst *[]string) func(*yaml.Node, string) error {
				return func(v *yaml.Node, path string) error {
					if isNull(v) {
						return nil // the original's None: the defaults
					}
					return strList(v, path, dst, markers)
				}
			}
			return d.mapping(v, path, keys{
				"enabled":                  func(v *yaml.Node, path string) error { return boolean(v, path, &s.Enabled) },
				"sensitive_name_markers":   markers(&s.SensitiveNameMarkers),
				"sensitive_schema_markers": markers(&s.SensitiveSchemaMarkers),
				"default_markers":          func(v *yaml.Node, path string) error { return boolean(v, path, &s.DefaultMarkers) },
				"name_markers":             markers(&s.NameMarkers),
				"schema_markers":           markers(&s.SchemaMarkers),
			})
		},
	})
}

// enabledOnly decodes a policy whose only key is enabled.
func (d *decoder) enabledOnly(dst *bool) func(*yaml.Node, string) error {
	return func(v *yaml.Node, path string) error {
		return d.mapping(v, path, keys{
			"enabled": func(v *yaml.Node, path string) error { return boolean(v, path, dst) },
		})
	}
}

func (d *decoder) tool(n *yaml.Node, path string, t *Tool) error {
	return d.mapping(n, path, keys{
		"required": func(v *yaml.Node, p string) error { return d.required(v, p, &t.Required) },
		"elicit":   func(v *yaml.Node, p string) error { return d.elicit(v, p, &t.Elicit) },
		// Null is the original's "not set".
		"ambiguous_if": func(v *yaml.Node, p string) (err error) {
			if !isNull(v) {
				t.AmbiguousIf, err = decodeAmbiguity(d, v, p)
			}
			return err
		},
		"confirm_if": func(v *yaml.Node, p string) (err error) {
			if !isNull(v) {
				t.ConfirmIf, err = decodeConfirm(d, v, p)
			}
			return err
		},
	})
}

// required decodes tools.<tool>.required. A name listed twice counts once,
// as in the original, with a warning.
func (d *decoder) required(v *yaml.Node, p string, dst *[]string) error {
	var list []string
	if err := strList(v, p, &list, nonBlank); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, f := range list {
		if seen[f] {
			if err := d.warn(v.Content[i], fmt.Sprintf("%s[%d]", p, i), fmt.Sprintf("%q is listed twice; it counts once", f)); err != nil {
				return err
			}
			continue
		}
		seen[f] = true
		*dst = append(*dst, f)
	}
	return nil
}

func (d *decoder) elicit(v *yaml.Node, p string, e *Elicit) error {
	if isNull(v) {
		return nil
	}
	return d.mapping(v, p, keys{
		// A blank message is the original's "not set": the default one.
		"message": func(v *yaml.Node, p string) error { return optStr(v, p, &e.Message) },
		"fields":  func(v *yaml.Node, p string) error { return eachValue(d, v, p, &e.Fields, d.field) },
	})
}

func (d *decoder) field(v *yaml.Node, p string, f *Field) error {
	return d.mapping(v, p, keys{
		"type": func(v *yaml.Node, p string) error {
			var typ string
			if err := str(v, p, &typ); err != nil {
				return err
			}
			if !slices.Contains(fieldTypes, typ) {
				return d.warn(v, p, fmt.Sprintf("type %q is not one a form can ask for (%s); the upstream's type is used", typ, strings.Join(fieldTypes, ", ")))
			}
			f.Type = typ
			return nil
		},
		"description": func(v *yaml.Node, p string) error { return optStr(v, p, &f.Description) },
	})
}

// warn records a warning at node n, or refuses it in strict mode.
func (d *decoder) warn(n *yaml.Node, path, msg string) error {
	if d.strict {
		return errAt(n, path, msg+" (refused by --strict-config)")
	}
	d.warnings = append(d.warnings, &Error{Line: n.Line, Path: path, Msg: msg})
	return nil
}

// unknown reports a key that no decoder knows, naming the nearest known
// key when one is close enough to be a typo.
func (d *decoder) unknown(k *yaml.Node, path string, known []string) error {
	msg := "unknown key, ignored"
	if d.strict {
		msg = "unknown key"
	}
	if near := nearest(k.Value, known); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	} else {
		msg += "; known keys here: " + strings.Join(known, ", ")
	}
	if d.strict {
		return errAt(k, path, msg)
	}
	d.warnings = append(d.warnings, &Error{Line: k.Line, Path: path, Msg: msg})
	return nil
}

// nearest returns the known key most likely meant by key: the closest in
// edit distance when within half the key's length (at least 2 edits), or
// else one that holds key's letters in order ("cmd" for "command"); "" if
// none is close.
func nearest(key string, known []string) string {
	key = strings.ToLower(key)
	best, bestDist := "", 0
	for _, k := range known {
		if dist := editDistance(key, k); best == "" || dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best != "" && bestDist <= max(2, (len(key)+1)/2) {
		return best
	}
	if len(key) >= 3 {
		for _, k := range known {
			if subsequence(key, k) {
				return k
			}
		}
	}
	return ""
}

// subsequence reports whether the bytes of a appear in b in order.
func subsequence(a, b string) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// errAt builds an Error located at node n.
func errAt(n *yaml.Node, path, msg string) error {
	return &Error{Line: n.Line, Path: path, Msg: msg}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!null":
		return "empty"
	case "!!bool":
		return "a boolean"
	case "!!int", "!!float":
		return "a number"
	case "!!str":
		return "a string"
	}
	return "a " + strings.TrimPrefix(n.Tag, "!!")
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// mapping decodes a mapping node; keys it does not know are warnings (or
// errors in strict mode).
func (d *decoder) mapping(n *yaml.Node, path string, fields keys) error {
	what := "the configuration must"
	if path != "" {
		what = "it must"
	}
	return d.walk(n, path, what, func(k, v *yaml.Node, p string) error {
		if decode, ok := fields[k.Value]; ok {
			return decode(v, p)
		}
		return d.unknown(k, p, slices.Sorted(maps.Keys(fields)))
	})
}

// strict is the decoder of the port's own extension sections (gate.go):
// an unknown key is an error whatever the mode, and so is a duplicate key;
// the original's sections go through the load's decoder, which warns.
func strict() *decoder { return &decoder{strict: true, extension: true} }

// lastKeys returns the index in n.Content of each scalar key's last
// occurrence in the mapping n.
func lastKeys(n *yaml.Node) map[string]int {
	last := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode {
			last[k.Value] = i
		}
	}
	return last
}

// duplicate reports key k, which the same key at later overrides: as
// PyYAML reads a mapping (the original's loader), the last one wins, so
// the port uses it too and warns, naming both lines. In the port's own
// sections a duplicate is a mistake.
func (d *decoder) duplicate(k *yaml.Node, path string, later *yaml.Node) error {
	if d.extension {
		return errAt(k, path, "duplicate key")
	}
	return d.warn(k, path, fmt.Sprintf("duplicate key, ignored: the one at line %d is used (the last one wins, as with the original)", later.Line))
}

// eachValue decodes a mapping with arbitrary, non-blank keys into a new
// *dst, each value with read (eachKey).
func eachValue[T any](d *decoder, n *yaml.Node, path string, dst *map[string]T, read func(*yaml.Node, string, *T) error) error {
	*dst = map[string]T{}
	return d.eachKey(n, path, func(name string, v *yaml.Node, p string) error {
		var x T
		err := read(v, p, &x)
		(*dst)[name] = x
		return err
	})
}

// eachKey decodes a mapping with arbitrary, non-blank keys; of a key given
// twice the last one is used (duplicate).
func (d *decoder) eachKey(n *yaml.Node, path string, each func(string, *yaml.Node, string) error) error {
	return d.walk(n, path, "must", func(k, v *yaml.Node, p string) error { return each(k.Value, v, p) })
}

// walk calls each with every key of the mapping n but the duplicates: of a
// key given twice the last one is used (duplicate). what starts the
// message when n is not a mapping: "must" for a mapping with arbitrary
// keys (eachKey), whose keys must not be blank.
func (d *decoder) walk(n *yaml.Node, path, what string, each func(k, v *yaml.Node, path string) error) error {
	if n.Kind != yaml.MappingNode {
		return errAt(n, path, fmt.Sprintf("%s be a mapping, not %s", what, kindName(n)))
	}
	last := lastKeys(n)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case what == "must" && (k.Kind != yaml.ScalarNode || strings.TrimSpace(k.Value) == ""):
			return errAt(k, path, "keys must be non-blank strings")
		case k.Kind != yaml.ScalarNode:
			return errAt(k, path, "keys must be plain strings")
		}
		p := join(path, k.Value)
		var err error
		if j := last[k.Value]; j != i {
			err = d.duplicate(k, p, n.Content[j])
		} else {
			err = each(k, v, p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func str(n *yaml.Node, path string, dst *string) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return errAt(n, path, fmt.Sprintf("must be a string, not %s", kindName(n)))
	}
	if strings.TrimSpace(n.Value) == "" {
		return errAt(n, path, "must not be blank")
	}
	*dst = n.Value
	return nil
}

// optStr decodes a string that may be empty or null (then dst is left
// as it is).
func optStr(n *yaml.Node, path string, dst *string) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return errAt(n, path, fmt.Sprintf("must be a string, not %s", kindName(n)))
	}
	if strings.TrimSpace(n.Value) != "" {
		*dst = n.Value
	}
	return nil
}

// boolean decodes a boolean as the original reads one: YAML's true and
// false, YAML 1.1's yes/no/on/off (which YAML 1.2 reads as strings), the
// strings pydantic accepts (t/f, y/n, 1/0, any case) and the numbers 0 and
// 1.
func boolean(n *yaml.Node, path string, dst *bool) error {
	if n.Kind == yaml.ScalarNode {
		switch n.Tag {
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err == nil {
				*dst = b
				return nil
			}
		case "!!str", "!!int", "!!float":
			switch strings.ToLower(strings.TrimSpace(n.Value)) {
			case "true", "yes", "on", "y", "t", "1", "1.0":
				*dst = true
				return nil
			case "false", "no", "off", "n", "f", "0", "0.0":
				*dst = false
				return nil
			}
		}
	}
	return errAt(n, path, fmt.Sprintf("must be true or false (or yes/no, on/off), not %s", kindName(n)))
}

// The kinds of string list strList decodes.
const (
	nonBlank = iota // strings, none blank
	argList         // an argument list: numbers and booleans too, passed as their text
	markers         // blank strings skipped, as the original skips them
)

// strList decodes a list of strings of the given kind.
func strList(n *yaml.Node, path string, dst *[]string, kind int) error {
	if n.Kind != yaml.SequenceNode {
		return errAt(n, path, fmt.Sprintf("must be a list, not %s", kindName(n)))
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		text := kind == argList && (item.Tag == "!!int" || item.Tag == "!!float" || item.Tag == "!!bool")
		blank := strings.TrimSpace(item.Value) == ""
		switch {
		case item.Kind != yaml.ScalarNode || (item.Tag != "!!str" && !text):
			return errAt(item, p, fmt.Sprintf("must be a string, not %s", kindName(item)))
		case blank && kind == nonBlank:
			return errAt(item, p, "must not be blank")
		case !blank || kind != markers:
			out = append(out, item.Value)
		}
	}
	*dst = out
	return nil
}

// anyValue keeps an arbitrary YAML value as plain Go data; null leaves it
// unset.
func anyValue(n *yaml.Node, path string, dst *any) error {
	if isNull(n) {
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return errAt(n, path, "cannot be read: "+err.Error())
	}
	*dst = v
	return nil
}
