package proxy

import (
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	t.Parallel()
	long := "{" + strings.Repeat("x", 200<<10) + "}\n"
	in := "take me\n" + "keep\n" + long + "take me too\n" + "last"
	var taken []string
	var ended error
	r := newLineReader(strings.NewReader(in), 100<<10, func(line []byte) bool {
		if strings.HasPrefix(string(line), "take") {
			taken = append(taken, string(line))
			return true
		}
		if len(line) > 100<<10 {
			t.Errorf("take saw a line of %d bytes", len(line))
		}
		return false
	}, func(err error) { ended = err })
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "keep\n" + long + "last"; string(out) != want {
		t.Errorf("passed on %d bytes, want %d", len(out), len(want))
	}
	if strings.Join(taken, "|") != "take me\n|take me too\n" {
		t.Errorf("taken %q", taken)
	}
	if ended != io.EOF {
		t.Errorf("done got %v", ended)
	}
}
