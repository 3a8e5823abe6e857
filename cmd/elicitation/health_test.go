package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHealth: the container image's health check. It asks /healthz on
// --addr (an unspecified address becomes loopback) and fails as
// unhealthy, exit 1, when the server answers anything but 200 or does not
// answer.
func TestHealth(t *testing.T) {
	t.Parallel()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	}))
	t.Cleanup(ok.Close)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, port, _ := net.SplitHostPort(ok.Listener.Addr().String())
	addr := func(s *httptest.Server) string { return s.Listener.Addr().String() }

	for _, c := range []struct {
		name      string
		args      []string
		env       string
		unhealthy bool
		err       string
	}{
		{name: "flag", args: []string{"--addr", addr(ok)}},
		{name: "environment", env: addr(ok)},
		{name: "every interface", args: []string{"--addr", "0.0.0.0:" + port}},
		{name: "port only", args: []string{"--addr", ":" + port}},
		{name: "not ready", args: []string{"--addr", addr(failing)}, unhealthy: true, err: "answered 503 Service Unavailable"},
		{name: "not running", args: []string{"--addr", addr(closed)}, unhealthy: true, err: "connection refused"},
		{name: "argument", args: []string{"now"}, err: `health takes no arguments, got "now"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			getenv := func(k string) string {
				if k == "ELICITATION_ADDR" {
					return c.env
				}
				return ""
			}
			var stdout bytes.Buffer
			err := run(t.Context(), append([]string{"health"}, c.args...), &stdout, io.Discard, getenv)
			if c.err == "" {
				if err != nil || stdout.String() != "ok\n" {
					t.Fatalf("health %q = %v, printed %q; want ok", c.args, err, stdout.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) || errors.Is(err, errUnhealthy) != c.unhealthy {
				t.Fatalf("health %q = %v, want an error with %q (unhealthy: %v)", c.args, err, c.err, c.unhealthy)
			}
		})
	}
}
