// Package pipe serves Windows named pipes. It is a thin adapter over
// go-winio: on other systems Listen fails, so that code choosing a pipe by
// configuration reports the mistake instead of crashing.
package pipe

// Path is the Windows path of the local pipe called name: \\.\pipe\name.
func Path(name string) string { return `\\.\pipe\` + name }
