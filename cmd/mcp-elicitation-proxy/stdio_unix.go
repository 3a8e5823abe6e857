//go:build unix

package main

import (
	"io"
	"os"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport serves MCP on the process's stdin and stdout. When they are
// pipes or sockets (as when an MCP client starts the proxy), they are
// switched to non-blocking mode so that the Go runtime's poller reads and
// writes them: a message then wakes the process once, instead of waking a
// thread blocked in read(2) that must then hand its work to another, which
// costs a large part of the proxy's added latency on a busy machine.
func stdioTransport() mcp.Transport {
	return &mcp.IOTransport{Reader: pollable(os.Stdin), Writer: nopCloser{pollable(os.Stdout)}}
}

// pollable returns f, or a non-blocking file for the same descriptor when f
// is a pipe or socket. Terminals and regular files are left alone.
func pollable(f *os.File) *os.File {
	fd := int(f.Fd())
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return f
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO, syscall.S_IFSOCK:
	default:
		return f
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
