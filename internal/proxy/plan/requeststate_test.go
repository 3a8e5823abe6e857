package plan

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

type state struct {
	Tool   string   `json:"tool"`
	Fields []string `json:"fields"`
}

func TestSealOpen(t *testing.T) {
	t.Parallel()
	s := NewRandomSealer()
	tok, err := s.Seal(state{"echo", []string{"message"}}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var got state
	if err := s.Open(tok, &got); err != nil {
		t.Fatal(err)
	}
	if got.Tool != "echo" || len(got.Fields) != 1 || got.Fields[0] != "message" {
		t.Errorf("Open = %+v", got)
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	key := []byte(strings.Repeat("k", MinStateKeyLen))
	s, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := s.Seal(state{Tool: "echo"}, time.Minute)
	if strings.Contains(tok, "echo") {
		t.Fatalf("the state shows its contents: %s", tok)
	}
	other := NewRandomSealer()
	otherTok, _ := other.Seal(state{Tool: "echo"}, time.Minute)

	expired, _ := NewSealer(key)
	expired.Now = func() time.Time { return time.Now().Add(-2 * time.Minute) }
	expiredTok, _ := expired.Seal(state{Tool: "echo"}, time.Minute)
	flip := []byte(tok)
	flip[len(flip)-3] ^= 1

	tests := map[string]string{
		"empty":     "",
		"truncated": tok[:len(tok)-4],
		"tampered":  string(flip),
		"other key": otherTok,
		"garbage":   "s1.k0.***",
		"expired":   expiredTok,
		// The signed format states had before the one primitive.
		"old format": "eyJleHAiOjk5OTk5OTk5OTksImRhdGEiOnsidG9vbCI6ImVjaG8ifX0.AAAA",
	}
	for name, tok := range tests {
		var got state
		if err := s.Open(tok, &got); !errors.Is(err, ErrInvalidState) {
			t.Errorf("%s: Open = %v, want ErrInvalidState", name, err)
		}
	}
}

func TestNewSealerKeyLength(t *testing.T) {
	t.Parallel()
	if _, err := NewSealer(make([]byte, MinStateKeyLen-1)); err == nil {
		t.Error("short key accepted")
	}
}

// ParseStateKey reads the proxy's state key: a bare base64 secret (the key k0) or
// keyring text, so that "k1:NEW,k0:OLD" rotates it; anything else is
// refused with a sentence.
func TestParse(t *testing.T) {
	t.Parallel()
	old, cur := sealer.GenerateSecret(), sealer.GenerateSecret()
	bare, err := ParseStateKey(old)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := bare.Seal(state{Tool: "rm"}, time.Minute)
	rotated, err := ParseStateKey("k1:" + cur + ",k0:" + old)
	if err != nil {
		t.Fatal(err)
	}
	var got state
	if err := rotated.Open(tok, &got); err != nil || got.Tool != "rm" {
		t.Fatalf("a state of the bare key after rotation: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "c2hvcnQ=", "k1:!!!", "k1:" + cur + ",k1:" + old} {
		if _, err := ParseStateKey(bad); err == nil || !strings.HasPrefix(err.Error(), "request state key: ") {
			t.Errorf("ParseStateKey(%q) = %v, want a request state key error", bad, err)
		}
	}
}
