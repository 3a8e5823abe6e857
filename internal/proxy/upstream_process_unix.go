//go:build unix

package proxy

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the child as the leader of a new process group, so
// that killProcessGroup reaches its descendants too.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setParentDeathSignal(cmd.SysProcAttr)
}

// killProcessGroup kills every process left in the group led by pid.
func killProcessGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
