package testenv

// EphemeralRange exposes the kernel's ephemeral range to the tests.
var EphemeralRange = ephemeralRange
