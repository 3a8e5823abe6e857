package mcptools

import (
	"bytes"
	"encoding/json"
)

// propertyNames lists the top-level property names of an object schema in
// the order the document gives them: the tools take exactly the arguments
// their input schema declares, so the schema is the one list of names
// (parseArgs refuses any other). It panics on a schema it cannot read (a
// programming error, caught at start-up by every test).
func propertyNames(schema json.RawMessage) []string {
	var doc struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil || len(doc.Properties) == 0 {
		panic("mcptools: an input schema without properties")
	}
	dec := json.NewDecoder(bytes.NewReader(doc.Properties))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		panic("mcptools: an input schema's properties are not an object")
	}
	var names []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			panic("mcptools: reading an input schema: " + err.Error())
		}
		names = append(names, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			panic("mcptools: reading an input schema: " + err.Error())
		}
	}
	return names
}

// property is the schema of one top-level property of an object schema.
// It panics as propertyNames does.
func property(schema json.RawMessage, name string) json.RawMessage {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil || doc.Properties[name] == nil {
		panic("mcptools: an input schema without the property " + name)
	}
	return doc.Properties[name]
}

// The names each tool takes, from its input schema; labelNames are the
// names inside the creating tools' labels object.
var (
	approvalArgNames  = propertyNames(approvalInputSchema)
	selectionArgNames = propertyNames(selectionInputSchema)
	awaitArgNames     = propertyNames(awaitInputSchema)
	statusArgNames    = propertyNames(statusInputSchema)
	idArgNames        = propertyNames(idInputSchema)
	appDecideArgNames = propertyNames(appDecideInputSchema)
	labelNames        = propertyNames(property(approvalInputSchema, "labels"))
)
