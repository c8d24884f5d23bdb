package envcheck

import (
	"strings"

	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// OSHost is this host: its services and processes, and acls (the
// process's protect.Host) to judge a program by protect's rule.
func OSHost(acls protect.Host) Host {
	return Host{
		Services: service.Processes,
		Identify: proc.Identify,
		Changeable: func(path string) (string, error) {
			return Changeable(path, acls)
		},
	}
}

// Changeable judges the program file path by protect's rule for what the
// node acts on without owning it (an Input file): it says why an account
// other than SYSTEM, Administrators and TrustedInstaller may change or
// replace it, or "".
func Changeable(path string, acls protect.Host) (string, error) {
	findings, err := protect.Audit([]protect.Target{{What: "the program", Path: path, File: true, Input: true}}, acls, protect.Starting)
	if err != nil {
		return "", err
	}
	// The file's own finding says most; else the nearest folder's.
	parent := ""
	for _, f := range findings {
		switch {
		case !f.Refuse:
		case f.Path == path:
			return f.Problem, nil
		case parent == "":
			what, _, _ := strings.Cut(f.Problem, ",")
			if rest, ok := strings.CutPrefix(what, "is a parent that "); ok {
				parent = "lies in " + f.Path + ", which " + rest
			} else {
				parent = "lies in " + f.Path + ", " + strings.TrimPrefix(what, "is a parent ")
			}
		}
	}
	return parent, nil
}
