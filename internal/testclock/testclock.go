// Package testclock is the tests' one clock: a time that moves only when
// the test moves it, safe to read from the goroutines of the code under
// test. Pass its Now wherever the code takes a clock.
package testclock

import (
	"sync"
	"time"
)

// Clock is a settable time. The zero Clock reads the zero time; New sets
// where it starts.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a Clock that reads start until it is moved.
func New(start time.Time) *Clock { return &Clock{t: start} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d (back, when d is negative).
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
