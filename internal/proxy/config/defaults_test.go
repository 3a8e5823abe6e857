package config

// Load and Parse are LoadWith and ParseWith with the default options, for
// this package's tests.
func Load(path string) (*Config, error) { return LoadWith(path, Options{}) }

func Parse(data []byte) (*Config, error) { return ParseWith(data, Options{}) }
