//go:build unix

package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// portLocks are the lock files of the ports this process took, open for
// its whole life: the kernel releases a process's locks when it ends,
// however it ends, so no lock outlives the tests that took it.
var portLocks struct {
	sync.Mutex
	files []*os.File
}

// lockPort claims port for this process among every test process on the
// machine (go test runs packages side by side, each its own process,
// each drawing ports): an exclusive flock on a file named by the port in
// the temporary directory. It reports false when another process holds
// the port. The claim is a courtesy between test processes; when the lock
// file cannot be made at all (a read-only temporary directory), the port
// is taken unclaimed, as before there were claims.
func lockPort(port int) bool {
	dir := filepath.Join(os.TempDir(), "elicitation-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return true
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)+".lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return !errors.Is(err, syscall.EWOULDBLOCK)
	}
	portLocks.Lock()
	portLocks.files = append(portLocks.files, f)
	portLocks.Unlock()
	return true
}
