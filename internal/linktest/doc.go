// Package linktest holds the test that each binary links only what it uses
// (docs/architecture.md, "What each binary links"): it lists every
// package of cmd/* and functions/* with go list -deps and fails on an
// import its row of the table forbids, and on a binary without a row.
package linktest
