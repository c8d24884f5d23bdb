package steps

import (
	"context"
	"fmt"
	"io"
)

// FixElevated is the fix for a change only an elevated Administrator may
// make.
const FixElevated = `open PowerShell with "Run as administrator" and run the same command there`

// Elevated is the step, early in join, reset and takeover, that fails
// unless elevated says the process runs as an elevated Administrator:
// installing and removing services and writing under C:\etc and C:\var
// need it. verb names the command in the fix.
func Elevated(verb string, elevated func() (bool, error)) Step {
	return Step{
		Name:        "check Administrator",
		Description: "require a process started with \"Run as administrator\"",
		Do: func(_ context.Context, out io.Writer) error {
			ok, err := elevated()
			if err != nil {
				return WithFix(fmt.Errorf("cannot tell whether this process runs as Administrator: %w", err),
					"run "+verb+" on the Windows host, and there "+FixElevated)
			}
			if !ok {
				return WithFix(fmt.Errorf("not running as Administrator, which %s needs to change services and files under C:\\", verb), FixElevated)
			}
			fmt.Fprintln(out, "running as Administrator")
			return nil
		},
	}
}
