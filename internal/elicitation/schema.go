package elicitation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// FieldType is the kind of control a form field needs.
type FieldType string

const (
	FieldString      FieldType = "string"
	FieldNumber      FieldType = "number"
	FieldInteger     FieldType = "integer"
	FieldBoolean     FieldType = "boolean"
	FieldSelect      FieldType = "select"      // a string with enum or oneOf: pick one
	FieldMultiSelect FieldType = "multiselect" // an array of enum strings: pick several
)

// The string formats of the MCP form subset.
const (
	FormatEmail    = "email"
	FormatURI      = "uri"
	FormatDate     = "date"
	FormatDateTime = "date-time"
)

// Choice is one value of a select field.
type Choice struct {
	Value string `json:"value"`
	Title string `json:"title,omitempty"`
}

// Field is one property of a form schema.
type Field struct {
	Name        string    `json:"name"`
	Type        FieldType `json:"type"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
	Required    bool      `json:"required,omitempty"`
	Format      string    `json:"format,omitempty"`
	MinLength   *int      `json:"minLength,omitempty"`
	MaxLength   *int      `json:"maxLength,omitempty"`
	Minimum     *float64  `json:"minimum,omitempty"`
	Maximum     *float64  `json:"maximum,omitempty"`
	MinItems    *int      `json:"minItems,omitempty"`
	MaxItems    *int      `json:"maxItems,omitempty"`
	Choices     []Choice  `json:"choices,omitempty"`
	Default     any       `json:"default,omitempty"`
}

// FormSchema is a parsed requestedSchema: the flat form subset of MCP
// 2025-11-25 elicitation, its fields in the order the agent wrote them.
type FormSchema struct {
	Fields []Field `json:"fields"`
	// Raw is the schema as the agent sent it.
	Raw json.RawMessage `json:"raw"`
}

// Field returns the field with that name.
func (s *FormSchema) Field(name string) (Field, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// annotations are keywords that change nothing about validation.
var annotations = map[string]bool{"$schema": true, "$id": true, "$comment": true, "title": true, "description": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true}

func schemaErr(field, format string, args ...any) *Error {
	return invalid(ErrSchemaInvalid, field, "requestedSchema: "+format, args...)
}

// ParseFormSchema parses and checks a requestedSchema: an object schema whose
// properties are strings (optionally email, uri, date or date-time, with
// length bounds), numbers or integers (with bounds), booleans, single-select
// enums (enum, with optional enumNames, or oneOf of const/title) and
// multi-select arrays of such enums, each with an optional default.
func ParseFormSchema(raw json.RawMessage) (*FormSchema, error) {
	top, order, err := objectKeys(raw)
	if err != nil {
		return nil, schemaErr("requestedSchema", "must be a JSON object")
	}
	if t, ok := top["type"]; ok && string(t) != `"object"` {
		return nil, schemaErr("requestedSchema.type", `type must be "object"`)
	}
	for _, k := range order {
		if k != "type" && k != "properties" && k != "required" && !annotations[k] {
			return nil, schemaErr("requestedSchema."+k, "keyword %q is not supported in a flat form schema", k)
		}
	}
	props, names, err := objectKeys(top["properties"])
	if err != nil || len(names) == 0 {
		return nil, schemaErr("requestedSchema.properties", "properties must be an object with at least one field")
	}
	if len(names) > MaxSchemaFields {
		return nil, invalid(ErrSchemaTooManyFields, "requestedSchema.properties", "requestedSchema has %d fields; at most %d are allowed", len(names), MaxSchemaFields)
	}
	s := &FormSchema{Raw: append(json.RawMessage(nil), bytes.TrimSpace(raw)...)}
	for _, name := range names {
		if strings.TrimSpace(name) == "" || hasControl(name) {
			return nil, schemaErr("requestedSchema.properties", "field names must not be blank or contain control characters")
		}
		f, err := parseField(name, props[name])
		if err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, f)
	}
	if r, ok := top["required"]; ok {
		var req []string
		if err := json.Unmarshal(r, &req); err != nil {
			return nil, schemaErr("requestedSchema.required", "required must be an array of field names")
		}
		for _, name := range req {
			i := slices.IndexFunc(s.Fields, func(f Field) bool { return f.Name == name })
			if i < 0 {
				return nil, schemaErr("requestedSchema.required", "required names %q, which is not a property", name)
			}
			s.Fields[i].Required = true
		}
	}
	return s, nil
}

func parseField(name string, raw json.RawMessage) (Field, error) {
	path := "requestedSchema.properties." + name
	obj, keys, err := objectKeys(raw)
	if err != nil {
		return Field{}, schemaErr(path, "field %q must be a schema object", name)
	}
	r := fieldReader{name: name, path: path, obj: obj,
		allowed: map[string]bool{"type": true, "title": true, "description": true, "default": true}}
	f := Field{Name: name}
	var typ string
	if err := json.Unmarshal(obj["type"], &typ); err != nil {
		return Field{}, schemaErr(path, "field %q needs a type (string, number, integer, boolean or array)", name)
	}
	if err := r.str("title", &f.Title); err != nil {
		return Field{}, err
	}
	if err := r.str("description", &f.Description); err != nil {
		return Field{}, err
	}
	if err := r.typed(&f, typ); err != nil {
		return Field{}, err
	}
	for _, k := range keys {
		if !r.allowed[k] && !annotations[k] {
			return Field{}, schemaErr(path+"."+k, "keyword %q is not supported for field %q", k, name)
		}
	}
	if d, ok := obj["default"]; ok && string(bytes.TrimSpace(d)) != "null" {
		v, err := decodeTyped(f, d)
		if err != nil {
			return Field{}, schemaErr(path+".default", "default of field %q does not fit the field: %s", name, err.Message)
		}
		f.Default = v
	}
	return f, nil
}

// fieldReader reads the keywords of one field's schema object, with errors
// that name the field and the keyword's path, and keeps the keywords its
// type allows.
type fieldReader struct {
	name, path string
	obj        map[string]json.RawMessage
	allowed    map[string]bool
}

func (r *fieldReader) allow(ks ...string) {
	for _, k := range ks {
		r.allowed[k] = true
	}
}

// typed reads the keywords of the field's type into f.
func (r *fieldReader) typed(f *Field, typ string) error {
	switch typ {
	case "string":
		return r.stringField(f)
	case "number", "integer":
		r.allow("minimum", "maximum")
		f.Type = FieldType(typ)
		var err error
		f.Minimum, f.Maximum, err = bounds[float64](r, "minimum", "maximum")
		return err
	case "boolean":
		f.Type = FieldBoolean
		return nil
	case "array":
		return r.arrayField(f)
	default:
		return schemaErr(r.path+".type", "type %q of field %q is not one a form can collect (string, number, integer, boolean, array of enum strings)", typ, r.name)
	}
}

func (r *fieldReader) stringField(f *Field) error {
	r.allow("format", "minLength", "maxLength", "enum", "enumNames", "oneOf")
	if err := r.str("format", &f.Format); err != nil {
		return err
	}
	switch f.Format {
	case "", FormatEmail, FormatURI, FormatDate, FormatDateTime:
	default:
		return schemaErr(r.path+".format", "format %q of field %q is not one of email, uri, date, date-time", f.Format, r.name)
	}
	var err error
	if f.MinLength, f.MaxLength, err = bounds[int](r, "minLength", "maxLength"); err != nil {
		return err
	}
	f.Type = FieldString
	if r.obj["enum"] != nil || r.obj["oneOf"] != nil {
		f.Type = FieldSelect
		if f.Choices, err = parseChoices(r.path, r.obj, "oneOf"); err != nil {
			return err
		}
	}
	return nil
}

func (r *fieldReader) arrayField(f *Field) error {
	r.allow("items", "minItems", "maxItems")
	f.Type = FieldMultiSelect
	items, _, err := objectKeys(r.obj["items"])
	if err != nil {
		return schemaErr(r.path+".items", "field %q is an array: items must be a string enum (a form cannot collect other arrays)", r.name)
	}
	var itemType string
	if t, ok := items["type"]; ok && (json.Unmarshal(t, &itemType) != nil || itemType != "string") {
		return schemaErr(r.path+".items.type", "field %q is an array: its items must be strings from an enum", r.name)
	}
	if f.Choices, err = parseChoices(r.path+".items", items, "anyOf"); err != nil {
		return err
	}
	f.MinItems, f.MaxItems, err = bounds[int](r, "minItems", "maxItems")
	return err
}

func (r *fieldReader) str(k string, dst *string) error {
	if v, ok := r.obj[k]; ok {
		if json.Unmarshal(v, dst) != nil {
			return schemaErr(r.path+"."+k, "%s of field %q must be a string", k, r.name)
		}
	}
	return nil
}

// keyword reads keyword k as a T, nil when it is absent: a count (int)
// must be a non-negative integer, a bound (float64) any number.
func keyword[T int | float64](r *fieldReader, k string) (*T, error) {
	v, ok := r.obj[k]
	if !ok {
		return nil, nil
	}
	var n T
	if _, count := any(n).(int); json.Unmarshal(v, &n) != nil || count && n < 0 {
		what := "a number"
		if count {
			what = "a non-negative integer"
		}
		return nil, schemaErr(r.path+"."+k, "%s of field %q must be %s", k, r.name, what)
	}
	return &n, nil
}

// bounds reads two keywords that bound each other (minLength and
// maxLength, minItems and maxItems, minimum and maximum).
func bounds[T int | float64](r *fieldReader, minKey, maxKey string) (lo, hi *T, err error) {
	if lo, err = keyword[T](r, minKey); err != nil {
		return nil, nil, err
	}
	if hi, err = keyword[T](r, maxKey); err != nil {
		return nil, nil, err
	}
	if lo != nil && hi != nil && *lo > *hi {
		return nil, nil, schemaErr(r.path, "%s of field %q is above its %s", minKey, r.name, maxKey)
	}
	return lo, hi, nil
}

// parseChoices reads enum (+ enumNames) or a list of {const, title} under listKey.
func parseChoices(path string, obj map[string]json.RawMessage, listKey string) ([]Choice, error) {
	var out []Choice
	if e, ok := obj["enum"]; ok {
		var vals []string
		if json.Unmarshal(e, &vals) != nil || len(vals) == 0 {
			return nil, schemaErr(path+".enum", "enum must be a non-empty array of strings")
		}
		var names []string
		if n, ok := obj["enumNames"]; ok && (json.Unmarshal(n, &names) != nil || len(names) != len(vals)) {
			return nil, schemaErr(path+".enumNames", "enumNames must be an array of strings as long as enum")
		}
		for i, v := range vals {
			c := Choice{Value: v}
			if names != nil {
				c.Title = names[i]
			}
			out = append(out, c)
		}
	} else if l, ok := obj[listKey]; ok {
		if json.Unmarshal(l, &out) != nil || len(out) == 0 {
			return nil, schemaErr(path+"."+listKey, "%s must be a non-empty array of {const, title}", listKey)
		}
		var consts []struct {
			Const *string `json:"const"`
		}
		_ = json.Unmarshal(l, &consts)
		for i := range out {
			if consts[i].Const == nil {
				return nil, schemaErr(fmt.Sprintf("%s.%s[%d]", path, listKey, i), "each choice needs a string const")
			}
			out[i].Value = *consts[i].Const
		}
	} else {
		return nil, schemaErr(path, "a select field needs enum or %s", listKey)
	}
	seen := map[string]bool{}
	for _, c := range out {
		if hasControl(c.Value) {
			return nil, schemaErr(path, "choice %q contains a control character (such as a newline), which a form cannot submit faithfully", c.Value)
		}
		if seen[c.Value] {
			return nil, schemaErr(path, "choice %q appears twice", c.Value)
		}
		seen[c.Value] = true
	}
	return out, nil
}

// UnmarshalJSON for Choice takes both {value,title} (stored) and {const,title} (schema).
func (c *Choice) UnmarshalJSON(b []byte) error {
	var v struct {
		Value *string `json:"value"`
		Const *string `json:"const"`
		Title string  `json:"title"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch {
	case v.Value != nil:
		c.Value = *v.Value
	case v.Const != nil:
		c.Value = *v.Const
	}
	c.Title = v.Title
	return nil
}

// objectKeys decodes a JSON object, keeping its keys in document order.
// Duplicate keys are refused.
func objectKeys(raw json.RawMessage) (map[string]json.RawMessage, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("not an object")
	}
	m := map[string]json.RawMessage{}
	var order []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := m[k]; dup {
			return nil, nil, fmt.Errorf("duplicate key %q", k)
		}
		m[k] = v
		order = append(order, k)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("trailing data")
	}
	return m, order, nil
}

// FieldError says what is wrong with one field's value.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// FormError lists what is wrong with a submitted form, field by field, so
// the page can show the reviewer what to fix.
type FormError struct{ Fields []FieldError }

func (e *FormError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Message
	}
	return "form values do not satisfy requestedSchema: " + strings.Join(parts, "; ")
}

// Unwrap lets errors.Is(err, ErrFormInvalid) and CodeOf see an invalid_argument.
func (e *FormError) Unwrap() error {
	return &Error{Code: CodeInvalidArgument, Kind: ErrFormInvalid, Message: e.Error()}
}

// DateTimeZone is the zone in which date-time values without an offset are
// read; the review page says so beside each such field.
var DateTimeZone = time.UTC

// The layouts a browser's date and datetime-local controls submit.
const (
	dateLayout          = "2006-01-02"
	localDateTimeLayout = "2006-01-02T15:04"
)

// ParseForm reads a submitted form (every value as text, as an HTML form
// posts it) against the schema and returns the typed values: strings,
// float64 for numbers, int64 for integers, bool, and []string for
// multi-selects. An absent boolean is false; an empty optional field is
// left out. Every problem is reported, field by field, in a *FormError.
func (s *FormSchema) ParseForm(values map[string][]string) (map[string]any, error) {
	out := make(map[string]any, len(s.Fields))
	var errs []FieldError
	for name := range values {
		if _, ok := s.Field(name); !ok {
			errs = append(errs, FieldError{Field: name, Message: "is not a field of this form"})
		}
	}
	slices.SortFunc(errs, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
	for _, f := range s.Fields {
		v, err := parseFormField(f, values[f.Name])
		if err != nil {
			errs = append(errs, FieldError{Field: f.Name, Message: err.Message})
			continue
		}
		if v != nil {
			out[f.Name] = v
		}
	}
	if len(errs) > 0 {
		return nil, &FormError{Fields: errs}
	}
	return out, nil
}

func fieldErr(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArgument, Kind: ErrFormInvalid, Message: fmt.Sprintf(format, args...)}
}

func parseFormField(f Field, vals []string) (any, *Error) {
	if f.Type == FieldMultiSelect {
		picked := slices.DeleteFunc(slices.Clone(vals), func(v string) bool { return v == "" })
		if len(picked) == 0 && !f.Required && f.MinItems == nil {
			return nil, nil
		}
		return checkMulti(f, picked)
	}
	if len(vals) > 1 {
		return nil, fieldErr("was sent %d times; send it once", len(vals))
	}
	var text string
	if len(vals) == 1 {
		text = vals[0]
	}
	if f.Type == FieldBoolean {
		switch strings.ToLower(strings.TrimSpace(text)) {
		case "", "false", "off", "0":
			return false, nil
		case "true", "on", "1":
			return true, nil
		}
		return nil, fieldErr("must be true or false")
	}
	if strings.TrimSpace(text) == "" {
		if f.Required {
			return nil, fieldErr("is required")
		}
		return nil, nil
	}
	switch f.Type {
	case FieldNumber, FieldInteger:
		n, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fieldErr("must be a number")
		}
		return checkNumber(f, n)
	}
	return checkString(f, text, true)
}

func checkNumber(f Field, n float64) (any, *Error) {
	if f.Minimum != nil && n < *f.Minimum {
		return nil, fieldErr("must be at least %s", strconv.FormatFloat(*f.Minimum, 'f', -1, 64))
	}
	if f.Maximum != nil && n > *f.Maximum {
		return nil, fieldErr("must be at most %s", strconv.FormatFloat(*f.Maximum, 'f', -1, 64))
	}
	if f.Type == FieldInteger {
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return nil, fieldErr("must be a whole number")
		}
		return int64(n), nil
	}
	return n, nil
}

// checkString validates a string (or single select) value. fromForm means
// the value came from a browser control (date-time without an offset is
// then read in DateTimeZone).
func checkString(f Field, s string, fromForm bool) (any, *Error) {
	if !utf8.ValidString(s) {
		return nil, fieldErr("is not valid text")
	}
	if f.Type == FieldSelect {
		if !slices.ContainsFunc(f.Choices, func(c Choice) bool { return c.Value == s }) {
			return nil, fieldErr("must be one of the offered choices")
		}
		return s, nil
	}
	n := utf8.RuneCountInString(s)
	if f.MinLength != nil && n < *f.MinLength {
		return nil, fieldErr("must be at least %d characters", *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return nil, fieldErr("must be at most %d characters", *f.MaxLength)
	}
	return checkFormat(f.Format, s, fromForm)
}

// checkFormat checks s against a string field's format; a date-time comes
// back in RFC 3339 (a form's local date-time read in DateTimeZone).
func checkFormat(format, s string, fromForm bool) (any, *Error) {
	switch format {
	case FormatEmail:
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s || a.Name != "" {
			return nil, fieldErr("must be an email address like name@example.com")
		}
	case FormatURI:
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "") {
			return nil, fieldErr("must be an absolute URI like https://example.com/")
		}
	case FormatDate:
		if _, err := time.Parse(dateLayout, s); err != nil {
			return nil, fieldErr("must be a date like 2026-01-31")
		}
	case FormatDateTime:
		return checkDateTime(s, fromForm)
	}
	return s, nil
}

func checkDateTime(s string, fromForm bool) (any, *Error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.Format(time.RFC3339), nil
	}
	if !fromForm {
		return nil, fieldErr("must be a date-time like 2026-01-31T09:30:00Z")
	}
	for _, layout := range []string{localDateTimeLayout, localDateTimeLayout + ":05"} {
		if t, err := time.ParseInLocation(layout, s, DateTimeZone); err == nil {
			return t.Format(time.RFC3339), nil
		}
	}
	return nil, fieldErr("must be a date and time like 2026-01-31T09:30 (%s)", DateTimeZone)
}

func checkMulti(f Field, picked []string) (any, *Error) {
	seen := map[string]bool{}
	for _, v := range picked {
		if seen[v] {
			return nil, fieldErr("lists %q twice", v)
		}
		seen[v] = true
		if !slices.ContainsFunc(f.Choices, func(c Choice) bool { return c.Value == v }) {
			return nil, fieldErr("must only hold the offered choices")
		}
	}
	if f.Required && len(picked) == 0 {
		return nil, fieldErr("is required: pick at least one")
	}
	if f.MinItems != nil && len(picked) < *f.MinItems {
		return nil, fieldErr("pick at least %d", *f.MinItems)
	}
	if f.MaxItems != nil && len(picked) > *f.MaxItems {
		return nil, fieldErr("pick at most %d", *f.MaxItems)
	}
	if picked == nil {
		picked = []string{}
	}
	return picked, nil
}

// decodeTyped checks a JSON value (a default) against a field.
func decodeTyped(f Field, raw json.RawMessage) (any, *Error) {
	switch f.Type {
	case FieldBoolean:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, fieldErr("must be true or false")
		}
		return b, nil
	case FieldNumber, FieldInteger:
		var n float64
		if json.Unmarshal(raw, &n) != nil {
			return nil, fieldErr("must be a number")
		}
		return checkNumber(f, n)
	case FieldMultiSelect:
		var l []string
		if json.Unmarshal(raw, &l) != nil {
			return nil, fieldErr("must be an array of strings")
		}
		return checkMulti(f, l)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, fieldErr("must be a string")
	}
	return checkString(f, s, false)
}
