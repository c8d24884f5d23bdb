package config

// PipeName returns the name of the local named pipe an endpoint spells
// (npipe://./pipe/x, npipe:////./pipe/x, \\.\pipe\x or //./pipe/x), and
// whether it is one. Normalisation and the DMI listener share this rule.
func PipeName(endpoint string) (string, bool) { return pipeName(endpoint) }
