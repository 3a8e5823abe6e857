package clientreg

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// maxRegistration bounds a registration request's body.
const maxRegistration = 16 << 10

// registration is the RFC 7591 answer to a registration.
type registration struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
}

// RegisterHandler serves dynamic client registration (RFC 7591): a POST of
// the client's metadata as JSON registers it and answers 201 with its
// client_id (and, for client_secret_basic or client_secret_post, its
// secret, shown this once); metadata refused answers 400 with
// invalid_redirect_uri or invalid_client_metadata naming the member; a
// source over its limit, or all sources over theirs, 429 with Retry-After.
func (r *Registry) RegisterHandler() http.Handler {
	return http.HandlerFunc(r.serveRegister)
}

func (r *Registry) serveRegister(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSONError(w, http.StatusMethodNotAllowed, "invalid_request", "registration takes POST")
		return
	}
	if wait := r.limits.Take(r.source(req), r.now()); wait > 0 {
		ratelimit.RetryAfter(w.Header(), wait)
		writeJSONError(w, http.StatusTooManyRequests, "too_many_requests", "too many registrations; retry later")
		return
	}
	m, status, merr := readMetadata(w, req)
	if merr != nil {
		writeJSONError(w, status, merr.code, merr.description)
		return
	}
	c, merr := m.toClient(false)
	if merr != nil {
		writeJSONError(w, http.StatusBadRequest, merr.code, merr.description)
		return
	}
	answer, err := r.register(req.Context(), c)
	if err != nil {
		r.log.ErrorContext(req.Context(), "client registration failed", "err", err)
		writeJSONError(w, http.StatusInternalServerError, "server_error", "the client could not be registered")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, answer)
}

// readMetadata reads a registration request's JSON body, refusing another
// type, a body over maxRegistration and JSON that is not client metadata.
func readMetadata(w http.ResponseWriter, req *http.Request) (clientMetadata, int, *metadataError) {
	var m clientMetadata
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return m, http.StatusUnsupportedMediaType, invalidMetadata("the body must be application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxRegistration))
	err := dec.Decode(&m)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	var tooBig *http.MaxBytesError
	var wrongType *json.UnmarshalTypeError
	switch {
	case err == nil:
		return m, 0, nil
	case errors.As(err, &tooBig):
		return m, http.StatusRequestEntityTooLarge, invalidMetadata("the body is larger than %d KiB", maxRegistration>>10)
	case errors.As(err, &wrongType) && wrongType.Field != "":
		return m, http.StatusBadRequest, invalidMetadata("%s: a JSON %s is the wrong type", wrongType.Field, wrongType.Value)
	}
	return m, http.StatusBadRequest, invalidMetadata("the body is not one JSON object")
}

// register stores c under a new random id, with a new secret when its
// method takes one, and returns the RFC 7591 answer.
func (r *Registry) register(ctx context.Context, c Client) (registration, error) {
	id, err := randomID()
	if err != nil {
		return registration{}, err
	}
	var secret string
	if c.AuthMethod != AuthNone {
		if secret, err = randomSecret(); err != nil {
			return registration{}, err
		}
		c.SecretHash = HashSecret(secret)
	}
	now := r.now().Truncate(time.Second)
	c.ID, c.Source, c.IssuedAt = id, Registered, now
	data, err := encodeClient(c)
	if err != nil {
		return registration{}, fmt.Errorf("encoding client: %w", err)
	}
	expires := now.Add(r.ttl)
	rec := grant.Record{Kind: kindClient, ID: id, Data: data, Expires: expires}
	if _, err := r.store.Put(ctx, rec); err != nil {
		return registration{}, fmt.Errorf("storing client %s: %w", id, err)
	}
	answer := registration{
		ClientID: id, ClientIDIssuedAt: now.Unix(),
		RedirectURIs: c.RedirectURIs, TokenEndpointAuthMethod: c.AuthMethod,
		GrantTypes: c.GrantTypes, ResponseTypes: []string{"code"},
		ClientName: c.Name, ClientURI: c.URI,
	}
	if secret != "" {
		// The secret lasts as long as the client is kept.
		at := expires.Unix()
		answer.ClientSecret, answer.ClientSecretExpiresAt = secret, &at
	}
	return answer, nil
}

// registeredIDBytes is the randomness of a registered client's id, written
// as hex.
const registeredIDBytes = 16

func randomID() (string, error) {
	b := make([]byte, registeredIDBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("client id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// registeredID reports whether id has the form randomID gives.
func registeredID(id string) bool {
	if len(id) != 2*registeredIDBytes {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

func randomSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("client secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func writeJSONError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
