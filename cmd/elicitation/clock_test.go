package main

import "time"

// WithClock replaces the service's clock (an Option of Start, for tests).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }
