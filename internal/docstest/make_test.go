package docstest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/docstest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The documented key command passes a name with a quote as typed: the
// recipe hands the values to the command in its environment.
func TestMakeKeyTargetsTakeAnyName(t *testing.T) {
	cmd := exec.Command("make", "--no-print-directory", "api-key-create", "PRINCIPAL=alice", "TABLE=elicitation", "NAME=alice's laptop", "EXPIRES=90d", "ELICITATION=printf [%s]")
	cmd.Dir = testenv.Root(t)
	cmd.Env = append(os.Environ(), "MAKEFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make api-key-create: %v\n%s", err, out)
	}
	want := "[keys][--store][dynamodb][--table][elicitation][create][--principal][alice][--name][alice's laptop][--expires][90d]"
	if !strings.Contains(string(out), want) {
		t.Fatalf("the command received\n%s\nwant %s", out, want)
	}
}

// A recipe that pastes a value into single quotes breaks on a quote in
// the value, and the docs test says so (the Makefile before the fix).
func TestMakeRecipeThatBreaksIsCaught(t *testing.T) {
	c := checker(t)
	c.Root = t.TempDir()
	mk := "api-key-create:\n\tgo run ./cmd/elicitation keys --store dynamodb --table '$(TABLE)' create --principal '$(PRINCIPAL)' $(if $(NAME),--name '$(NAME)')\n"
	if err := os.WriteFile(filepath.Join(c.Root, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	blocks, err := docstest.Extract("deploy.md", []byte("```sh\nmake api-key-create PRINCIPAL=alice TABLE=t NAME=\"alice's laptop\"\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	errs := c.Check(context.Background(), blocks[0])
	if len(errs) == 0 || !strings.Contains(errs[0].Error(), "the recipe it runs is not valid shell") {
		t.Fatalf("got %v", errs)
	}
}
