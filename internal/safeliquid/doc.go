// Package safeliquid is a hardened Liquid engine for templates supplied by
// agents (draft doc; see the final version below).
package safeliquid
