package testenv

// EphemeralRange exposes the kernel's ephemeral range to the tests.
var EphemeralRange = ephemeralRange

// LockPort exposes the cross-process claim to the tests.
var LockPort = lockPort
