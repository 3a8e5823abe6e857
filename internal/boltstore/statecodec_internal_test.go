package boltstore

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
)

// everyField is a State with every field the scanner reads set (all but
// the approvers), found by reflection so that a field added to State is
// set too.
func everyField(t *testing.T) elicitation.State {
	var st elicitation.State
	v := reflect.ValueOf(&st).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeOf(time.Time{}):
			f.Set(reflect.ValueOf(storetest.T0.Add(time.Duration(i) * time.Millisecond)))
		case f.Kind() == reflect.String:
			f.SetString("v-" + v.Type().Field(i).Name)
		case f.Kind() == reflect.Int:
			f.SetInt(int64(i))
		case v.Type().Field(i).Name == "Approvers":
		default:
			t.Fatalf("State.%s is of a kind this test does not set (%s): teach scanState and this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	return st
}

// TestScanStateKnowsEveryField: the scanner reads every field of State as
// json.Marshal writes it (all but the approvers, which encoding/json
// decodes); a field added to State without teaching the scanner fails here
// (it would still decode, through encoding/json, only slower).
func TestScanStateKnowsEveryField(t *testing.T) {
	st := everyField(t)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var got elicitation.State
	if !scanState(b, &got) {
		t.Fatalf("scanState does not read %s", b)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("scanState:\n got %+v\nwant %+v", got, st)
	}
}

// TestDecodeStateIsEncodingJSON: whatever the stored bytes, decodeState
// gives what encoding/json gives (the same state, or an error when it
// errs).
func TestDecodeStateIsEncodingJSON(t *testing.T) {
	decided := everyField(t)
	decided.Approvers = []elicitation.Approval{{By: "alice", SubmissionID: "s1", At: storetest.T0, AnswerDigest: "d"}}
	escaped := storetest.NewApproval(t, time.Hour).State
	escaped.Owner = `a"b<c>\d` + "\u2028é"
	var inputs []string
	for _, st := range []elicitation.State{{}, storetest.NewApproval(t, time.Hour).State, storetest.NewSelection(t, 3, time.Minute).State, everyField(t), decided, escaped} {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(b))
	}
	inputs = append(inputs,
		`{}`, `{"id":"x","future":{"a":[1,2]}}`, `{ "id" : "x" }`, `{"id":"x"`, `{"id":1}`, `{"approvals":-1}`,
		`{"approvals":12345678901234567890123}`, `{"createdAt":"nope"}`, `{"createdAt":null}`, `{"id":"x"}x`, `{"id":"x",}`, ``, `null`,
		strings.Replace(inputs[1], `"status":"pending"`, `"status":"pend\u0069ng"`, 1))
	for _, in := range inputs {
		var want, got elicitation.State
		werr := json.Unmarshal([]byte(in), &want)
		gerr := decodeState([]byte(in), &got)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: decodeState error %v, encoding/json's %v", in, gerr, werr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want)
		}
	}
}
