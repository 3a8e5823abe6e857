//go:build !unix

package main

import "github.com/modelcontextprotocol/go-sdk/mcp"

func stdioTransport() mcp.Transport { return &mcp.StdioTransport{} }
