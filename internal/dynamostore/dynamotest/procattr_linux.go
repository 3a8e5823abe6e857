package dynamotest

import "syscall"

// sysProcAttr makes the kernel kill DynamoDB Local if the test binary dies
// without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
