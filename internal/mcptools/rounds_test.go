package mcptools_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// TestRequestState: a request state opens with what it binds, unless it
// was altered, sealed by other keys or for another purpose, is another
// request's or principal's, or expired: each refused as the retry's
// invalid params (-32602).
func TestRequestState(t *testing.T) {
	t.Parallel()
	keys, other := keyring(t), keyring(t)
	now := time.Now()
	st := mcptools.RequestState{ID: "e1", Principal: "alice", Expires: now.Add(time.Minute), Memo: []byte(`{"step":2}`)}
	sealed := mcptools.SealState(keys, "p", st)
	if again := mcptools.SealState(keys, "p", st); again == sealed {
		t.Error("two states sealed alike: the nonce should make each unique")
	}
	got, err := mcptools.OpenState(keys, "p", sealed, "e1", "alice", now)
	if err != nil || string(got.Memo) != `{"step":2}` || got.Nonce == "" || !got.Expires.Equal(st.Expires) {
		t.Fatalf("open = %+v, %v", got, err)
	}
	for _, c := range []struct {
		name           string
		keys           mcptools.Sealer
		purpose, state string
		id, principal  string
		at             time.Time
		want           string
	}{
		{"tampered", keys, "p", sealed + "-TAMPERED", "e1", "alice", now, "altered or foreign"},
		{"other keys", other, "p", sealed, "e1", "alice", now, "altered or foreign"},
		{"no keys", nil, "p", sealed, "e1", "alice", now, "is not one this server issued"},
		{"another purpose", keys, "q", sealed, "e1", "alice", now, "altered or foreign"},
		{"another request", keys, "p", sealed, "e2", "alice", now, "belongs to another request or another agent"},
		{"another principal", keys, "p", sealed, "e1", "bob", now, "belongs to another request or another agent"},
		{"expired", keys, "p", sealed, "e1", "alice", now.Add(time.Minute), "has expired"},
	} {
		_, err := mcptools.OpenState(c.keys, c.purpose, c.state, c.id, c.principal, c.at)
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, c.want) {
			t.Errorf("%s: %v, want a -32602 error saying %q", c.name, err, c.want)
		}
	}
}

func keyring(t *testing.T) *sealer.Keyring {
	t.Helper()
	k, err := sealer.ParseKeyring(sealer.GenerateSecret())
	if err != nil {
		t.Fatal(err)
	}
	return k
}
