package mcptools

import (
	"testing"
)

// The heads of messages answeredAtOnce reads, as the clients send them
// and otherwise.
var headSeeds = []string{
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"elicit_status","arguments":{"elicitationId":"el_1"}}}`,
	`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"_meta":{"progressToken":1},"name":"elicit_await","arguments":{}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user"}}`,
	`{"method":"tools/call","params":null,"id":null}`,
	`{"method":"tools/call","method":null,"params":{"name":"x"},"params":{"requestId":[1]}}`,
	`{"Method":"tools/call","id":1}`,
	`{"method":"tools/c\u0061ll","id":1,"params":{"name":"elicit_await"}}`,
	`{"method":7}`,
	`{"params":"x"}`,
	`[{"method":"tools/call"}]`,
	`{"method":"tools/call","id":1,"params":{"NAME":"elicit_await"}}`,
}

// TestScanHeadReadsWhatClientsSend: the messages the clients send are read
// by scanHead, not handed to encoding/json (else the fast path is gone and
// only the benchmarks would say so).
func TestScanHeadReadsWhatClientsSend(t *testing.T) {
	t.Parallel()
	for _, in := range headSeeds[:5] {
		var h rpcHead
		if !scanHead([]byte(in), &h) {
			t.Errorf("scanHead(%s) = false, want it read", in)
		}
	}
}

// FuzzScanHeadIsEncodingJSON: where scanHead reads a message, it reads
// what encoding/json does (jsonHead), so readHead's answer is always
// encoding/json's.
func FuzzScanHeadIsEncodingJSON(f *testing.F) {
	for _, s := range headSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got rpcHead
		if !scanHead(b, &got) {
			return
		}
		want, ok := jsonHead(b)
		if !ok {
			t.Fatalf("scanHead read %q, which encoding/json refuses", b)
		}
		if string(got.id) != string(want.id) || got.method != want.method || got.name != want.name {
			t.Fatalf("scanHead(%q) = %+v, encoding/json %+v", b, got, want)
		}
	})
}
