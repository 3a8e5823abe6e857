package mcptools

import (
	"testing"
)

// TestAnsweredAtOnce: the messages whose stream's priming event goes out
// with the answer are the calls of tools that cannot wait, as
// encoding/json reads them, and nothing else.
func TestAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"elicit_status","arguments":{"elicitationId":"el_1"}}}`, true},
		{`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"_meta":{"progressToken":1},"name":"elicit_result","arguments":{}}}`, true},
		{`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"_meta":{"progressToken":1},"name":"elicit_await","arguments":{}}}`, false},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"elicit_status"}}`, false},
		{`{"method":"tools/call","params":{"name":"elicit_cancel"}}`, false},
		{`{"method":"tools/call","params":{"name":"elicit_cancel"},"id":null}`, true},
		{`{"method":"tools/call","method":null,"params":{"name":"elicit_status"},"params":{"requestId":[1]},"id":1}`, true},
		{`{"Method":"tools/call","id":1,"params":{"name":"elicit_status"}}`, true},
		{`{"method":"tools/c\u0061ll","id":1,"params":{"name":"elicit_status"}}`, true},
		{`{"method":7,"params":{"name":"elicit_status"}}`, false},
		{`[{"method":"tools/call","id":1,"params":{"name":"elicit_status"}}]`, false},
		{`{"method":"tools/call","id":1,"params":{"NAME":"elicit_status"}}`, true},
	} {
		if got := answeredAtOnce([]byte(tc.body)); got != tc.want {
			t.Errorf("answeredAtOnce(%s) = %v, want %v", tc.body, got, tc.want)
		}
	}
}
