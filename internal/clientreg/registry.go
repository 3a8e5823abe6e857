package clientreg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// ErrUnknownClient: no operator client, metadata document or registered
// client has that id.
var ErrUnknownClient = errors.New("clientreg: unknown client")

// kindClient is the grant.Record kind of a registered client.
const kindClient = "client"

// Defaults for a Config's zero values.
const (
	DefaultClientTTL  = 365 * 24 * time.Hour
	DefaultMaxSources = 10000
)

// Default registration limits.
var (
	DefaultPerSource = Rate{Count: 20, Per: time.Hour}
	DefaultGlobal    = Rate{Count: 1000, Per: time.Hour}
)

// Config is what a Registry needs; zero values take the defaults.
type Config struct {
	// Store keeps registered clients (kind "client"). Required.
	Store grant.Store
	// Operator are the clients the operator configured, looked up first.
	// Each needs an ID and passes the rules of registration; a secret
	// method needs SecretHash (HashSecret of the secret). Empty
	// GrantTypes means authorization_code and refresh_token.
	Operator []Client
	// ClientTTL is how long a registered client is kept
	// (DefaultClientTTL).
	ClientTTL time.Duration
	// PerSource and Global bound registrations, per source and in all
	// (DefaultPerSource, DefaultGlobal).
	PerSource, Global Rate
	// MaxSources bounds the sources whose registrations are counted
	// (DefaultMaxSources); the least recently seen is forgotten first.
	MaxSources int
	// Source names the source of a registration request for its limit
	// (default: the remote IP address, an IPv6 one as its /64).
	Source func(*http.Request) string
	// Documents configures client ID metadata documents.
	Documents DocumentOptions
	// Now is the clock (time.Now).
	Now func() time.Time
	// Logger logs failures of the store (never secrets); nil discards.
	Logger *slog.Logger
}

// Registry knows the clients: Lookup finds one, RegisterHandler registers
// new ones.
type Registry struct {
	store     grant.Store
	operators map[string]Client
	ttl       time.Duration
	limits    *ratelimit.Limiter
	source    func(*http.Request) string
	docs      *documents
	now       func() time.Time
	log       *slog.Logger
}

// New returns a Registry, or an error naming the operator client or
// setting that is wrong.
func New(cfg Config) (*Registry, error) {
	if cfg.Store == nil {
		return nil, errors.New("clientreg: no store")
	}
	cfg = withDefaults(cfg)
	operators, err := operatorClients(cfg.Operator)
	if err != nil {
		return nil, err
	}
	return &Registry{
		store:     cfg.Store,
		operators: operators,
		ttl:       cfg.ClientTTL,
		limits:    ratelimit.New(cfg.PerSource, cfg.Global, cfg.MaxSources),
		source:    cfg.Source,
		docs:      newDocuments(cfg.Documents, cfg.Now),
		now:       cfg.Now,
		log:       cfg.Logger,
	}, nil
}

func withDefaults(cfg Config) Config {
	if cfg.ClientTTL <= 0 {
		cfg.ClientTTL = DefaultClientTTL
	}
	if !cfg.PerSource.Valid() {
		cfg.PerSource = DefaultPerSource
	}
	if !cfg.Global.Valid() {
		cfg.Global = DefaultGlobal
	}
	if cfg.MaxSources <= 0 {
		cfg.MaxSources = DefaultMaxSources
	}
	if cfg.Source == nil {
		cfg.Source = RemoteIP
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// operatorClients checks the operator's clients by the rules of
// registration.
func operatorClients(list []Client) (map[string]Client, error) {
	out := make(map[string]Client, len(list))
	for i, c := range list {
		checked, err := checkOperatorClient(c)
		if err != nil {
			return nil, fmt.Errorf("clientreg: operator client %d (%q): %w", i, c.ID, err)
		}
		if _, dup := out[c.ID]; dup {
			return nil, fmt.Errorf("clientreg: operator client %d: client_id %q given twice", i, c.ID)
		}
		out[c.ID] = checked
	}
	return out, nil
}

func checkOperatorClient(c Client) (Client, error) {
	if c.ID == "" || len(c.ID) > 512 || strings.IndexFunc(c.ID, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return Client{}, errors.New("client_id: 1 to 512 printable ASCII characters")
	}
	grants := c.GrantTypes
	if len(grants) == 0 {
		grants = []string{GrantAuthorizationCode, GrantRefreshToken}
	}
	m := clientMetadata{RedirectURIs: c.RedirectURIs, TokenEndpointAuthMethod: c.AuthMethod,
		GrantTypes: grants, ClientName: c.Name, ClientURI: c.URI}
	checked, merr := m.toClient(false)
	if merr != nil {
		return Client{}, merr
	}
	if checked.AuthMethod != AuthNone && !strings.HasPrefix(c.SecretHash, "sha256:") {
		return Client{}, fmt.Errorf("client_secret_hash: %s needs the secret's hash (sha256:...)", checked.AuthMethod)
	}
	checked.ID = c.ID
	if checked.AuthMethod != AuthNone {
		checked.SecretHash = c.SecretHash
	}
	checked.Source = Operator
	return checked, nil
}

// Lookup returns the client with the id: an operator's client, else the
// client an https URL id's metadata document describes (a
// *DocumentError when it cannot be used), else a registered client. An id
// none of them knows is ErrUnknownClient.
func (r *Registry) Lookup(ctx context.Context, clientID string) (Client, error) {
	if c, ok := r.operators[clientID]; ok {
		return c, nil
	}
	if r.docs.isDocumentID(clientID) {
		return r.docs.lookup(ctx, clientID)
	}
	if !registeredID(clientID) {
		return Client{}, ErrUnknownClient
	}
	rec, err := r.store.Get(ctx, kindClient, clientID)
	if errors.Is(err, grant.ErrNotFound) {
		return Client{}, ErrUnknownClient
	}
	if err != nil {
		return Client{}, fmt.Errorf("clientreg: reading client %s: %w", clientID, err)
	}
	return decodeClient(rec)
}

// storedClient is a registered client as kept in its grant.Record.
type storedClient struct {
	Client
	IssuedAt int64 `json:"issued_at"`
}

func encodeClient(c Client) ([]byte, error) {
	return json.Marshal(storedClient{Client: c, IssuedAt: c.IssuedAt.Unix()})
}

func decodeClient(rec grant.Record) (Client, error) {
	var s storedClient
	if err := json.Unmarshal(rec.Data, &s); err != nil {
		return Client{}, fmt.Errorf("clientreg: decoding client %s: %w", rec.ID, err)
	}
	c := s.Client
	c.ID = rec.ID
	c.Source = Registered
	c.IssuedAt = time.Unix(s.IssuedAt, 0).UTC()
	return c, nil
}
