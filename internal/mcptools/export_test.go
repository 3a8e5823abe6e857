package mcptools

// SetHandOver turns the hand-over of sessionless waits (waitpath.go) on
// or off, so that a test can compare both paths.
func SetHandOver(s *Server, on bool) { s.noHandOver = !on }

// HandedOver counts the waits s handed over so far.
func HandedOver(s *Server) int64 { return s.handedOver.Load() }
