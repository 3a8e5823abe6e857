//go:build !unix

package testenv

// lockPort claims nothing where there is no flock: each process still
// never hands a port out twice.
func lockPort(int) bool { return true }
