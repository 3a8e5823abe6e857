package plan

import "github.com/mcp-elicitation/elicitation/internal/sealer"

// NewSealer returns a sealer for key, which must be at least MinStateKeyLen
// bytes: the tests' way to a sealer without keyring text.
func NewSealer(key []byte) (*Sealer, error) {
	return newStateSealer([]sealer.Key{{ID: stateKeyID, Secret: key}})
}
