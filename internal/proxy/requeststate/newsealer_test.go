package requeststate

import "github.com/mcp-elicitation/elicitation/internal/sealer"

// NewSealer returns a sealer for key, which must be at least MinKeyLen
// bytes: the tests' way to a sealer without keyring text.
func NewSealer(key []byte) (*Sealer, error) {
	return newSealer([]sealer.Key{{ID: keyID, Secret: key}})
}
