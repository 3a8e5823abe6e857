//go:build unix && !linux

package upstream

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}
