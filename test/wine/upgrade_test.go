//go:build wine

package wine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lastLine is the result line the upgrade and rollback commands end with.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// upgrade and rollback refuse with a parseable result line, exit code 1
// and the fix, having read the service manager and the journal under
// C:\etc\kubeedge: on a prefix without the edgecore service because it is
// not installed, on one with it because the package is not a zip.
func TestUpgradeAndRollbackRefusals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "release packages")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(dir, "edgecore-v0.2.0-windows-amd64.zip")
	if err := os.WriteFile(pkg, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	installed := !strings.Contains(run(t, time.Minute, "service", "status").stdout, "not installed")
	type row struct {
		args []string
		line string
		err  string
	}
	rows := []row{
		{[]string{"upgrade"}, `result=refused action=upgrade reason="upgrade options: not valid: - --package: Required value`, "--package: Required value"},
	}
	if installed {
		rows = append(rows, row{[]string{"upgrade", "--package", toWindowsPath(pkg)}, `result=refused action=upgrade from=`, "cannot read it as a zip"})
	} else {
		rows = append(rows,
			row{[]string{"upgrade", "--package", toWindowsPath(pkg)}, `result=refused action=upgrade reason="the service \"edgecore\" is not installed`, "edgecore.exe join"},
			row{[]string{"rollback"}, `result=refused action=rollback reason="the service \"edgecore\" is not installed`, "edgecore.exe join"})
	}
	for _, tc := range rows {
		r := run(t, time.Minute, tc.args...)
		if r.code != 1 || !strings.HasPrefix(lastLine(r.stdout), tc.line) || !strings.Contains(r.stderr, tc.err) {
			t.Errorf("edgecore.exe %v: exit %d\nstdout:\n%s\nstderr:\n%s\nwant last line starting %s", tc.args, r.code, r.stdout, r.stderr, tc.line)
		}
	}
	r := run(t, time.Minute, "upgrade", "--resume")
	if r.code != 0 || !strings.Contains(r.stdout, `No unfinished upgrade or rollback in C:\etc\kubeedge\upgrade\journal.json.`) {
		t.Errorf("upgrade --resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
