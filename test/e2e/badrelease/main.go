// Command badrelease stands in for a broken release of edgecore.exe in the
// upgrade scenario: it exits at once with a failure, whatever it is asked,
// so the upgrade's health gate must fail and roll back.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "this release fails at start on purpose (the upgrade scenario's broken package)")
	os.Exit(1)
}
