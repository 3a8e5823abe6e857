//go:build unix

package lambdatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

// Grant is one DynamoDB Allow statement of a function's policy in
// template.yaml: the actions, on items whose partition key matches one of
// the dynamodb:LeadingKeys patterns, of the table or (Index) of one of its
// indexes (a Resource of !Sub "${Table.Arn}/index/NAME").
type Grant struct {
	Actions []string
	Leading []string
	Index   string
}

// Policies reads the DynamoDB statements of each function's policy from
// template.yaml, keyed by logical id.
func Policies(t testing.TB) map[string][]Grant {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("lambdatest: template.yaml: %v", err)
	}
	out := map[string][]Grant{}
	resources := lookup(doc.Content[0], "Resources")
	for i := 0; resources != nil && i+1 < len(resources.Content); i += 2 {
		name, res := resources.Content[i].Value, resources.Content[i+1]
		if t := lookup(res, "Type"); t == nil || t.Value != "AWS::Serverless::Function" {
			continue
		}
		out[name] = []Grant{}
		pols := lookup(lookup(res, "Properties"), "Policies")
		if pols == nil {
			continue
		}
		for _, pol := range pols.Content {
			sts := lookup(pol, "Statement")
			if sts == nil {
				continue
			}
			for _, st := range sts.Content {
				actions := scalars(lookup(st, "Action"))
				if len(actions) == 0 || !strings.HasPrefix(actions[0], "dynamodb:") {
					continue
				}
				leading := scalars(lookup(lookup(lookup(st, "Condition"), "ForAllValues:StringLike"), "dynamodb:LeadingKeys"))
				g := Grant{Actions: actions, Leading: leading}
				if res := lookup(st, "Resource"); res != nil && res.Tag == "!Sub" {
					_, g.Index, _ = strings.Cut(res.Value, "/index/")
				}
				out[name] = append(out[name], g)
			}
		}
	}
	return out
}

func lookup(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalars(n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}

// allows reports whether grants allow action on an item with partition
// key pk, of the table (index "") or of an index.
func allows(grants []Grant, index, action, pk string) bool {
	for _, g := range grants {
		if g.Index != index || !slices.Contains(g.Actions, action) {
			continue
		}
		for _, l := range g.Leading {
			if p, ok := strings.CutSuffix(l, "*"); ok && strings.HasPrefix(pk, p) || l == pk {
				return true
			}
		}
	}
	return false
}

// Enforcer is a DynamoDB endpoint that checks every call against one
// function's policy from template.yaml, as IAM would (the action, and
// dynamodb:LeadingKeys for each item a call touches), records what it
// refuses, refuses it the way DynamoDB does (400 AccessDeniedException),
// and forwards the rest to the real (local) DynamoDB.
type Enforcer struct {
	URL string

	function string
	grants   []Grant
	mu       sync.Mutex
	denied   []string
	calls    map[string]int
}

// NewEnforcer starts an Enforcer for function in front of endpoint.
func NewEnforcer(t testing.TB, function string, grants []Grant, endpoint string) *Enforcer {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	e := &Enforcer{function: function, grants: grants, calls: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
		if reason := e.check(op, body); reason != "" {
			e.mu.Lock()
			e.denied = append(e.denied, reason)
			e.mu.Unlock()
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"__type":"com.amazon.coral.service#AccessDeniedException","message":%q}`, reason)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.URL = srv.URL
	return e
}

// Denied returns the calls refused so far.
func (e *Enforcer) Denied() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.denied)
}

// Count returns how many item accesses of call (an action with the
// partition key's prefix, like "GetItem req#") were allowed so far.
func (e *Enforcer) Count(call string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[call]
}

// Calls returns how many item accesses of each action (with the partition
// key's prefix) were allowed, like "UpdateItem req#".
func (e *Enforcer) Calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for k, n := range e.calls {
		out = append(out, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(out)
	return out
}

type attr map[string]map[string]any

func (a attr) pk() string {
	s, _ := a["pk"]["S"].(string)
	return s
}

type request struct {
	Key                       attr              `json:"Key"`
	Item                      attr              `json:"Item"`
	IndexName                 string            `json:"IndexName"`
	KeyConditionExpression    string            `json:"KeyConditionExpression"`
	ExpressionAttributeNames  map[string]string `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues attr              `json:"ExpressionAttributeValues"`
	TransactItems             []map[string]request
}

var equality = regexp.MustCompile(`([#A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)`)

// access is one item-level action a request asks for, on a partition key.
type access struct{ action, pk string }

// check returns why IAM would refuse op with body, or "".
func (e *Enforcer) check(op string, body []byte) string {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Sprintf("%s: %s: unreadable request: %v", e.function, op, err)
	}
	acc := accesses(op, req)
	for _, a := range acc {
		if !allows(e.grants, req.IndexName, "dynamodb:"+a.action, a.pk) {
			where := ""
			if req.IndexName != "" {
				where = " of index " + req.IndexName
			}
			return fmt.Sprintf("%s: %s on pk %q%s (in %s) is not allowed by its policy", e.function, a.action, a.pk, where, op)
		}
	}
	e.mu.Lock()
	for _, a := range acc {
		prefix, _, _ := strings.Cut(a.pk, "#")
		e.calls[a.action+" "+prefix+"#"]++
	}
	e.mu.Unlock()
	return ""
}

// accesses lists what IAM authorises for op: one action per item, a
// transaction's items each as their own action (as DynamoDB does).
func accesses(op string, req request) []access {
	switch op {
	case "GetItem", "DeleteItem", "UpdateItem":
		return []access{{op, req.Key.pk()}}
	case "PutItem":
		return []access{{op, req.Item.pk()}}
	case "Query":
		return []access{{op, queryPK(req)}}
	case "TransactWriteItems":
		var acc []access
		for _, it := range req.TransactItems {
			for kind, r := range it {
				if a, ok := writeAccess(kind, r); ok {
					acc = append(acc, a)
				}
			}
		}
		return acc
	case "TransactGetItems":
		var acc []access
		for _, it := range req.TransactItems {
			acc = append(acc, access{"GetItem", it["Get"].Key.pk()})
		}
		return acc
	default:
		return []access{{op, ""}}
	}
}

// writeAccess is the action of one item of a TransactWriteItems.
func writeAccess(kind string, r request) (access, bool) {
	switch kind {
	case "Put":
		return access{"PutItem", r.Item.pk()}, true
	case "Update":
		return access{"UpdateItem", r.Key.pk()}, true
	case "Delete":
		return access{"DeleteItem", r.Key.pk()}, true
	case "ConditionCheck":
		return access{"ConditionCheckItem", r.Key.pk()}, true
	}
	return access{}, false
}

// queryPK is the partition key a Query's key condition names.
func queryPK(req request) string {
	pk := ""
	for _, m := range equality.FindAllStringSubmatch(req.KeyConditionExpression, -1) {
		name := m[1]
		if n, ok := req.ExpressionAttributeNames[name]; ok {
			name = n
		}
		// An index's partition key is the first equality of its key
		// condition (the stores write it first).
		if name == "pk" || req.IndexName != "" && pk == "" {
			pk, _ = req.ExpressionAttributeValues[m[2]]["S"].(string)
		}
	}
	return pk
}

// TableSpec is the table of template.yaml, reduced to what the store
// relies on: "pk HASH", "sk RANGE", attribute types, the indexes' keys and
// projections, and the TTL attribute.
type TableSpec struct {
	Keys       []string
	Attributes map[string]string
	Indexes    map[string][]string // name -> keys, then "projection <type>"
	TTL        string
	Stream     string // the stream's view type, "" without one
}

// TemplateTable reads the Table resource of template.yaml.
func TemplateTable(t testing.TB) TableSpec {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	props := lookup(lookup(lookup(doc.Content[0], "Resources"), "Table"), "Properties")
	if props == nil {
		t.Fatal("template.yaml has no Table properties")
	}
	keys := func(n *yaml.Node) []string {
		var out []string
		for _, k := range n.Content {
			out = append(out, lookup(k, "AttributeName").Value+" "+lookup(k, "KeyType").Value)
		}
		return out
	}
	spec := TableSpec{Keys: keys(lookup(props, "KeySchema")), Attributes: map[string]string{}, Indexes: map[string][]string{}}
	for _, a := range lookup(props, "AttributeDefinitions").Content {
		spec.Attributes[lookup(a, "AttributeName").Value] = lookup(a, "AttributeType").Value
	}
	if gsis := lookup(props, "GlobalSecondaryIndexes"); gsis != nil {
		for _, g := range gsis.Content {
			spec.Indexes[lookup(g, "IndexName").Value] = append(keys(lookup(g, "KeySchema")), "projection "+lookup(lookup(g, "Projection"), "ProjectionType").Value)
		}
	}
	if ttl := lookup(props, "TimeToLiveSpecification"); ttl != nil && lookup(ttl, "Enabled").Value == "true" {
		spec.TTL = lookup(ttl, "AttributeName").Value
	}
	if st := lookup(lookup(props, "StreamSpecification"), "StreamViewType"); st != nil {
		spec.Stream = st.Value
	}
	return spec
}
