package requeststate

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type state struct {
	Tool   string   `json:"tool"`
	Fields []string `json:"fields"`
}

func TestSealOpen(t *testing.T) {
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
	s := NewRandomSealer()
	tok, _ := s.Seal(state{Tool: "echo"}, time.Minute)
	p, sig, _ := strings.Cut(tok, ".")
	other := NewRandomSealer()
	otherTok, _ := other.Seal(state{Tool: "echo"}, time.Minute)

	expired := NewRandomSealer()
	expired.key = s.key
	expired.Now = func() time.Time { return time.Now().Add(-2 * time.Minute) }
	expiredTok, _ := expired.Seal(state{Tool: "echo"}, time.Minute)

	tests := map[string]string{
		"empty":          "",
		"no signature":   p,
		"tampered":       p[:len(p)-2] + "AA." + sig,
		"other key":      otherTok,
		"bad base64 sig": p + ".***",
		"expired":        expiredTok,
	}
	for name, tok := range tests {
		var got state
		if err := s.Open(tok, &got); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Open = %v, want ErrInvalid", name, err)
		}
	}
}

func TestNewSealerKeyLength(t *testing.T) {
	if _, err := NewSealer(make([]byte, MinKeyLen-1)); err == nil {
		t.Error("short key accepted")
	}
}
