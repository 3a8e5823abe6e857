// Package embeddedstore opens the embedded store (bbolt, one file in the
// data directory) and the API keys file beside it, from compose.Settings.
// It links no AWS SDK package: the proxy's embedded elicitation service
// (internal/proxy/gate) opens its store with it, and cmd/elicitation
// uses it for the local server's "bolt" store.
package embeddedstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Open is compose.Parts.Store for the embedded store: elicitation.db in
// Settings.DataDir, which it creates. The store is an io.Closer.
func Open(_ context.Context, s compose.Settings) (elicitation.Store, error) {
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	return boltstore.Open(filepath.Join(s.DataDir, "elicitation.db"))
}

// APIKeys opens the API keys file in Settings.DataDir (api-keys.json).
func APIKeys(_ context.Context, s compose.Settings) (apikey.Store, error) {
	return apikey.NewFileStore(filepath.Join(s.DataDir, "api-keys.json")), nil
}
