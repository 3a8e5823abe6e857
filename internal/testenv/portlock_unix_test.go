//go:build unix

package testenv_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// claimEnv, set, makes the test binary the other test process of
// TestPortClaimedAcrossProcesses (TestMain).
const claimEnv = "TESTENV_CLAIM_PORT"

func TestMain(m *testing.M) {
	if p := os.Getenv(claimEnv); p != "" {
		os.Exit(otherProcess(p))
	}
	os.Exit(m.Run())
}

// otherProcess tries to claim the parent's port, claims one of its own,
// says both on stdout, and holds its claim until stdin closes.
func otherProcess(parents string) int {
	port, err := strconv.Atoi(parents)
	if err != nil {
		return 2
	}
	own, err := testenv.Port()
	if err != nil {
		return 2
	}
	fmt.Printf("%t %d\n", testenv.LockPort(port), own)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // EOF when the parent closes it
	return 0
}

// TestPortClaimedAcrossProcesses: a port one test process took is not
// handed to another while the first lives (go test runs packages as
// processes side by side), and is free again once that process ends.
func TestPortClaimedAcrossProcesses(t *testing.T) {
	mine := testenv.FreePort(t)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), claimEnv+"="+strconv.Itoa(mine))
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	var claimedMine bool
	var theirs int
	if _, err := fmt.Fscan(stdout, &claimedMine, &theirs); err != nil {
		t.Fatalf("the other process said nothing readable: %v", err)
	}
	if claimedMine {
		t.Errorf("the other process claimed port %d, which this one holds", mine)
	}
	if testenv.LockPort(theirs) {
		t.Errorf("this process claimed port %d, which the other one holds", theirs)
	}
	_ = stdin.Close()
	if err := child.Wait(); err != nil {
		t.Fatalf("the other process: %v", err)
	}
	if !testenv.LockPort(theirs) {
		t.Errorf("port %d is still claimed after the process that held it ended", theirs)
	}
}
