// Package stdhandle points the process's standard error at a file, at the
// level of the operating system's handle as well as Go's os.Stderr. A
// Windows service starts without standard handles, so whatever the process
// prints there is lost, the Go runtime's panic and fatal error output
// included: the runtime writes it to the handle GetStdHandle returns, not
// to os.Stderr. Redirecting the handle keeps that output in a file.
package stdhandle
