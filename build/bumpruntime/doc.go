// Package bumpruntime holds the test of build/bump-runtime.sh: the script
// run against a Go module proxy of the test's own (a file:// proxy serving
// small stand-ins of containerd, hcsshim and the CNI plugins), so that what
// it reports when something newer is served is shown, not only that it
// passes on today's proxy.
package bumpruntime
