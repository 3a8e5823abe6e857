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
		strings.Replace(inputs[1], `"status":"pending"`, `"status":"pend\u0069ng"`, 1),
		`{"ID":"x"}`, `{"Owner":"a","owner":"b"}`, `{"id":"x","id":"y"}`, "{\"id\":\"\xff\"}", `{"approvals":1.0}`, `{"approvals":null}`,
		`{"kind":null,"status":"pending"}`, "{\"id\":\"x\"}\n", `{"createdAt":"2026-01-02T03:04:05Z"}`)
	for _, in := range inputs {
		sameAsEncodingJSON(t, []byte(in))
	}
}

// FuzzDecodeStateIsEncodingJSON: decodeState gives what encoding/json
// gives for any bytes (go test -fuzz FuzzDecodeStateIsEncodingJSON
// ./internal/boltstore).
func FuzzDecodeStateIsEncodingJSON(f *testing.F) {
	b, _ := json.Marshal(storetest.NewApproval(f, time.Hour).State)
	for _, seed := range []string{string(b), `{"id":"x","approvals":2}`, `{"createdAt":"2026-01-02T03:04:05Z","ID":"y"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(sameAsEncodingJSON)
}

func sameAsEncodingJSON(t *testing.T, in []byte) {
	t.Helper()
	var want, got elicitation.State
	werr := json.Unmarshal(in, &want)
	gerr := decodeState(in, &got)
	if (werr == nil) != (gerr == nil) {
		t.Errorf("%q: decodeState error %v, encoding/json's %v", in, gerr, werr)
		return
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("%q:\n got %+v\nwant %+v", in, got, want)
	}
}
