package mcptools

import (
	"context"
	"log/slog"
)

// sdkLogger is the logger the go-sdk is given: the server's, with the
// SDK's informational records (a session connected, initialized, ended:
// lines per client session) lowered to Debug, so that at the default
// level the log holds what an operator acts on (the review links, this
// server's warnings). The SDK's warnings and errors keep their level.
func sdkLogger(l *slog.Logger) *slog.Logger { return slog.New(quietHandler{l.Handler()}) }

// quietHandler lowers records below Warn to Debug.
type quietHandler struct{ h slog.Handler }

func quiet(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

func (q quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return q.h.Enabled(ctx, quiet(l))
}

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = quiet(r.Level)
	return q.h.Handle(ctx, r)
}

func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler { return quietHandler{q.h.WithAttrs(as)} }

func (q quietHandler) WithGroup(name string) slog.Handler { return quietHandler{q.h.WithGroup(name)} }
