package preflight

import (
	"strings"

	"github.com/kubeedge-windows/edgecore/internal/protect"
)

const nameProtected = "Node files protected"

// checkProtected reports each directory or file of the node that other
// accounts may read (the database caches Secrets, the kubelet's root holds
// secret volumes, C:\etc\kubeedge the key and the join token) as a WARN
// that edgecore repairs at its next start, and each one another account
// owns, or a parent of one another account owns or may rename, as a
// FAIL: its owner may rewrite its ACL or replace it, whoever may rename a
// parent may put their own in its place, and edgecore refuses to take
// either over; the service does not start until it is fixed.
func checkProtected(cfg Config, p Probes) []Row {
	if cfg.ProtectedErr != nil {
		return []Row{fail(nameProtected, oneLine(cfg.ProtectedErr.Error()), "give the field named above a directory of the node's own")}
	}
	if len(cfg.Protected) == 0 {
		// Not a Windows configuration: FromConfig lists the node's
		// directories for every Windows host, and elsewhere file modes,
		// not ACLs, protect them.
		return nil
	}
	if p.Protect == nil {
		return []Row{notProbed(nameProtected)}
	}
	findings, err := protect.Audit(cfg.Protected, *p.Protect, protect.Adopting)
	if err != nil {
		return []Row{couldNotCheck(nameProtected, err)}
	}
	if len(findings) == 0 {
		var paths []string
		for _, t := range cfg.Protected {
			if t.Restrict {
				paths = append(paths, t.Path)
			}
		}
		return []Row{pass(nameProtected, "SYSTEM and Administrators only, owned by Administrators, where they exist: "+strings.Join(paths, ", "))}
	}
	var rows []Row
	for _, f := range findings {
		detail := f.Path + " (" + f.Target.What + ") " + f.Problem
		if f.Refuse {
			rows = append(rows, fail(nameProtected, detail, f.Fix))
		} else {
			rows = append(rows, warn(nameProtected, detail, f.Fix))
		}
	}
	return rows
}
