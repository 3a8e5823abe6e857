// Package config loads and validates the YAML configuration of
// mcp-elicitation-proxy.
//
// Loading is strict: an unknown key, a value of the wrong type, a blank value,
// both or neither upstream, or args/env without a command is refused with one
// error that names the file, the line and the YAML path of the mistake.
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

// FallbackStructuredError is the only supported value of
// elicitation.fallback_on_unsupported: a client that cannot answer a form gets
// a structured result naming the missing fields.
const FallbackStructuredError = "structured_error"

// Field types a configured elicitation field may declare.
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
}

// Proxy describes the proxy's own MCP identity.
type Proxy struct {
	// Name is the server name announced to downstream clients.
	Name string
}

// Upstream is the one MCP server the proxy fronts: exactly one of URL and
// Command is set.
type Upstream struct {
	// URL is a streamable HTTP endpoint.
	URL string
	// Command, Args and Env start a stdio child process. Env is added to the
	// proxy's own environment.
	Command string
	Args    []string
	Env     map[string]string
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

// SchemaRequired controls whether the upstream schema's "required" list is
// enforced.
type SchemaRequired struct {
	Enabled bool
}

// SensitiveRequired controls the refusal to elicit fields that look like
// secrets.
type SensitiveRequired struct {
	Enabled bool
	// DefaultMarkers keeps the built-in markers; NameMarkers and
	// SchemaMarkers are added to them.
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
	Type        string
	Description string
}

// Error is a configuration mistake at a place in the file.
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

// Load reads and validates the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.File = path
		}
		return nil, err
	}
	return cfg, nil
}

// Parse validates a configuration document.
func Parse(data []byte) (*Config, error) {
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
	if err := decodeRoot(root, cfg); err != nil {
		return nil, err
	}
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

func decodeRoot(n *yaml.Node, cfg *Config) error {
	var upstreamNode, fallbackNode *yaml.Node
	err := mapping(n, "", map[string]func(*yaml.Node, string) error{
		"proxy": func(v *yaml.Node, p string) error {
			return mapping(v, p, map[string]func(*yaml.Node, string) error{
				"name": func(v *yaml.Node, p string) error { return str(v, p, &cfg.Proxy.Name) },
			})
		},
		"upstream": func(v *yaml.Node, p string) error {
			upstreamNode = v
			return decodeUpstream(v, p, &cfg.Upstream)
		},
		"elicitation": func(v *yaml.Node, p string) error {
			return mapping(v, p, map[string]func(*yaml.Node, string) error{
				"enabled": func(v *yaml.Node, p string) error { return boolean(v, p, &cfg.Elicitation.Enabled) },
				"fallback_on_unsupported": func(v *yaml.Node, p string) error {
					fallbackNode = v
					return decodeFallback(v, p, &cfg.Elicitation.FallbackOnUnsupported)
				},
			})
		},
		"elicitation_service": func(v *yaml.Node, p string) (err error) {
			cfg.ElicitationService, err = decodeElicitationService(v, p)
			return err
		},
		"policies": func(v *yaml.Node, p string) error { return decodePolicies(v, p, &cfg.Policies) },
		"tools": func(v *yaml.Node, p string) error {
			return eachKey(v, p, func(name string, v *yaml.Node, p string) error {
				t, err := decodeTool(v, p)
				if err != nil {
					return err
				}
				cfg.Tools[name] = t
				return nil
			})
		},
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
	return checkGate(fallbackNode, cfg)
}

func decodeUpstream(n *yaml.Node, path string, u *Upstream) error {
	var argsNode, envNode *yaml.Node
	err := mapping(n, path, map[string]func(*yaml.Node, string) error{
		"url": func(v *yaml.Node, p string) error {
			if err := str(v, p, &u.URL); err != nil {
				return err
			}
			pu, err := url.Parse(u.URL)
			if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				return errAt(v, p, fmt.Sprintf("%q is not an http:// or https:// URL", u.URL))
			}
			return nil
		},
		"command": func(v *yaml.Node, p string) error { return str(v, p, &u.Command) },
		"args": func(v *yaml.Node, p string) error {
			argsNode = v
			return strList(v, p, &u.Args, true)
		},
		"env": func(v *yaml.Node, p string) error {
			envNode = v
			u.Env = map[string]string{}
			return eachKey(v, p, func(name string, v *yaml.Node, p string) error {
				if !envNameRE.MatchString(name) {
					return errAt(v, p, fmt.Sprintf("%q is not a valid environment variable name", name))
				}
				if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
					return errAt(v, p, "must be a string (quote numbers and booleans)")
				}
				u.Env[name] = v.Value
				return nil
			})
		},
	})
	if err != nil {
		return err
	}
	if u.Command == "" {
		if argsNode != nil {
			return errAt(argsNode, path+".args", "is only valid with upstream.command")
		}
		if envNode != nil {
			return errAt(envNode, path+".env", "is only valid with upstream.command")
		}
	}
	if u.Args == nil {
		u.Args = []string{}
	}
	return nil
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func decodePolicies(n *yaml.Node, path string, p *Policies) error {
	return mapping(n, path, map[string]func(*yaml.Node, string) error{
		"schema_required": func(v *yaml.Node, path string) error {
			return mapping(v, path, map[string]func(*yaml.Node, string) error{
				"enabled": func(v *yaml.Node, path string) error { return boolean(v, path, &p.SchemaRequired.Enabled) },
			})
		},
		"confirm_destructive": func(v *yaml.Node, path string) error {
			return mapping(v, path, map[string]func(*yaml.Node, string) error{
				"enabled": func(v *yaml.Node, path string) error { return boolean(v, path, &p.ConfirmDestructive.Enabled) },
			})
		},
		"sensitive_required": func(v *yaml.Node, path string) error {
			s := &p.SensitiveRequired
			return mapping(v, path, map[string]func(*yaml.Node, string) error{
				"enabled":         func(v *yaml.Node, path string) error { return boolean(v, path, &s.Enabled) },
				"default_markers": func(v *yaml.Node, path string) error { return boolean(v, path, &s.DefaultMarkers) },
				"name_markers":    func(v *yaml.Node, path string) error { return strList(v, path, &s.NameMarkers, false) },
				"schema_markers":  func(v *yaml.Node, path string) error { return strList(v, path, &s.SchemaMarkers, false) },
			})
		},
	})
}

func decodeTool(n *yaml.Node, path string) (Tool, error) {
	var t Tool
	err := mapping(n, path, map[string]func(*yaml.Node, string) error{
		"required": func(v *yaml.Node, p string) error {
			if err := strList(v, p, &t.Required, false); err != nil {
				return err
			}
			seen := map[string]bool{}
			for i, f := range t.Required {
				if seen[f] {
					return errAt(v.Content[i], fmt.Sprintf("%s[%d]", p, i), fmt.Sprintf("%q is listed twice", f))
				}
				seen[f] = true
			}
			return nil
		},
		"elicit": func(v *yaml.Node, p string) error {
			return mapping(v, p, map[string]func(*yaml.Node, string) error{
				"message": func(v *yaml.Node, p string) error { return str(v, p, &t.Elicit.Message) },
				"fields": func(v *yaml.Node, p string) error {
					t.Elicit.Fields = map[string]Field{}
					return eachKey(v, p, func(name string, v *yaml.Node, p string) error {
						var f Field
						err := mapping(v, p, map[string]func(*yaml.Node, string) error{
							"type": func(v *yaml.Node, p string) error {
								if err := str(v, p, &f.Type); err != nil {
									return err
								}
								for _, ok := range fieldTypes {
									if f.Type == ok {
										return nil
									}
								}
								return errAt(v, p, fmt.Sprintf("unsupported type %q; use one of %s", f.Type, strings.Join(fieldTypes, ", ")))
							},
							"description": func(v *yaml.Node, p string) error { return str(v, p, &f.Description) },
						})
						t.Elicit.Fields[name] = f
						return err
					})
				},
			})
		},
		"ambiguous_if": func(v *yaml.Node, p string) (err error) {
			t.AmbiguousIf, err = decodeAmbiguity(v, p)
			return err
		},
		"confirm_if": func(v *yaml.Node, p string) (err error) {
			t.ConfirmIf, err = decodeConfirm(v, p)
			return err
		},
	})
	return t, err
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

// mapping decodes a mapping node whose keys must all be known.
func mapping(n *yaml.Node, path string, fields map[string]func(*yaml.Node, string) error) error {
	if n.Kind != yaml.MappingNode {
		what := "the configuration"
		if path != "" {
			what = "it"
		}
		return errAt(n, path, fmt.Sprintf("%s must be a mapping, not %s", what, kindName(n)))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return errAt(k, path, "keys must be plain strings")
		}
		p := join(path, k.Value)
		if seen[k.Value] {
			return errAt(k, p, "duplicate key")
		}
		seen[k.Value] = true
		decode, ok := fields[k.Value]
		if !ok {
			return errAt(k, p, "unknown key; known keys here: "+strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
		if err := decode(v, p); err != nil {
			return err
		}
	}
	return nil
}

// eachKey decodes a mapping with arbitrary, non-blank, unique keys.
func eachKey(n *yaml.Node, path string, each func(string, *yaml.Node, string) error) error {
	if n.Kind != yaml.MappingNode {
		return errAt(n, path, fmt.Sprintf("must be a mapping, not %s", kindName(n)))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || strings.TrimSpace(k.Value) == "" {
			return errAt(k, path, "keys must be non-blank strings")
		}
		p := join(path, k.Value)
		if seen[k.Value] {
			return errAt(k, p, "duplicate key")
		}
		seen[k.Value] = true
		if err := each(k.Value, v, p); err != nil {
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

func boolean(n *yaml.Node, path string, dst *bool) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return errAt(n, path, fmt.Sprintf("must be true or false, not %s", kindName(n)))
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return errAt(n, path, "must be true or false")
	}
	*dst = b
	return nil
}

// strList decodes a list of non-blank strings. An argument list may hold
// numbers and booleans too: they are passed as their text.
func strList(n *yaml.Node, path string, dst *[]string, scalarsAsText bool) error {
	if n.Kind != yaml.SequenceNode {
		return errAt(n, path, fmt.Sprintf("must be a list, not %s", kindName(n)))
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		ok := item.Kind == yaml.ScalarNode && item.Tag == "!!str"
		if scalarsAsText && item.Kind == yaml.ScalarNode && (item.Tag == "!!int" || item.Tag == "!!float" || item.Tag == "!!bool") {
			ok = true
		}
		if !ok {
			return errAt(item, p, fmt.Sprintf("must be a string, not %s", kindName(item)))
		}
		if !scalarsAsText && strings.TrimSpace(item.Value) == "" {
			return errAt(item, p, "must not be blank")
		}
		out = append(out, item.Value)
	}
	*dst = out
	return nil
}

// anyValue keeps an arbitrary YAML value as plain Go data.
func anyValue(n *yaml.Node, path string, dst *any) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return errAt(n, path, "must not be empty")
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return errAt(n, path, "cannot be read: "+err.Error())
	}
	*dst = v
	return nil
}
