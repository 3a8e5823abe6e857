package mcptools

import "time"

// SetHandOver turns the hand-over of sessionless waits (waitpath.go) on
// or off, so that a test can compare both paths.
func SetHandOver(s *Server, on bool) { s.noHandOver = !on }

// HandedOver counts the waits s handed over so far.
func HandedOver(s *Server) int64 { return s.handedOver.Load() }

// SetParkAfter sets how long a handed-over wait waits before it is parked.
func SetParkAfter(s *Server, d time.Duration) { s.parkAfter = d }

// Parked counts the waits s parked so far.
func Parked(s *Server) int64 { return s.parked.Load() }
