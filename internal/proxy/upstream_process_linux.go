package proxy

import "syscall"

// setParentDeathSignal has the kernel kill the child if the proxy dies
// without closing it (for example on SIGKILL).
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
