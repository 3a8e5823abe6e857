package proxy

import (
	"log/slog"
	"maps"
	"time"
)

// retryReminder is how often the log says again, for the same error, that
// the upstream is still not reachable.
const retryReminder = time.Minute

// retryLog decides the level of each failed attempt while the upstream is
// down, so that a server still coming up is one warning, not a line an
// attempt: the outage's first failure and an error not shown within the
// last retryReminder are warnings (so the same error is repeated once a
// minute, and a changed one at once, while two errors that alternate, as a
// dying child's may, are each shown once a minute); every other attempt is
// a debug line. It is used by dialUpstream, then only by the supervisor's
// goroutine.
type retryLog struct {
	now   func() time.Time
	shown map[string]time.Time // the errors logged as warnings this outage, and when
	since time.Time            // the outage's start
}

// begin starts an outage: dialUpstream's first attempt failed with err, which
// dialUpstream logs as a warning, or the connection was lost (err "", so that the
// first failed attempt is a warning).
func (r *retryLog) begin(err string) {
	r.since = r.now()
	r.shown = map[string]time.Time{}
	if err != "" {
		r.shown[err] = r.since
	}
}

// failed returns the level of a failed attempt with error err, and how long
// the upstream has been down.
func (r *retryLog) failed(err string) (slog.Level, time.Duration) {
	now := r.now()
	down := now.Sub(r.since).Round(time.Second)
	if r.shown == nil {
		r.shown = map[string]time.Time{}
	}
	if at, ok := r.shown[err]; ok && now.Sub(at) < retryReminder {
		return slog.LevelDebug, down
	}
	maps.DeleteFunc(r.shown, func(_ string, at time.Time) bool { return now.Sub(at) >= retryReminder })
	r.shown[err] = now
	return slog.LevelWarn, down
}

// connected ends the outage and returns how long it lasted.
func (r *retryLog) connected() time.Duration {
	r.shown = nil
	return r.now().Sub(r.since).Round(time.Second)
}
