package preflight

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// aclHost is a Windows host's owners and DACLs by path.
func aclHost(sddl map[string]string) *protect.Host {
	return &protect.Host{
		Read: func(path string) (acl.Security, error) {
			s, ok := sddl[path]
			if !ok {
				return acl.Security{}, fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
			}
			return acl.ParseSDDL(s)
		},
		Restrict: func(root string) error { panic("preflight restricted " + root) },
		Exists: func(path string) (bool, error) {
			_, ok := sddl[path]
			return ok, nil
		},
	}
}

func protectedConfig(t *testing.T) Config {
	t.Helper()
	host := config.Host{GOOS: config.Windows, Hostname: "EDGE-1"}
	c, err := config.Sample(config.KindDefault, host)
	if err != nil {
		t.Fatal(err)
	}
	pc := FromConfig(c, host)
	if pc.ProtectedErr != nil || len(pc.Protected) == 0 {
		t.Fatalf("FromConfig lists no protected paths: %v", pc.ProtectedErr)
	}
	return pc
}

const (
	adminDir   = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)"
	restricted = "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
	usersRead  = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
)

func TestProtectedPassesARestrictedNode(t *testing.T) {
	p := Probes{Protect: aclHost(map[string]string{
		`C:\etc`: adminDir, `C:\etc\kubeedge`: restricted, `C:\var`: adminDir, `C:\var\lib`: adminDir, `C:\var\lib\kubeedge`: restricted,
	})}
	rows := checkProtected(protectedConfig(t), p)
	if len(rows) != 1 || rows[0].Status != Pass || !strings.Contains(rows[0].Detail, `C:\var\lib\kubelet`) {
		t.Errorf("rows = %+v", rows)
	}
}

func TestProtectedWarnsReadableAndFailsForeignOwners(t *testing.T) {
	p := Probes{Protect: aclHost(map[string]string{
		`C:\etc`: adminDir, `C:\etc\kubeedge`: restricted,
		`C:\var`: "O:S-1-5-21-9-9-9-1001D:(A;OICI;FA;;;S-1-5-21-9-9-9-1001)", `C:\var\lib`: adminDir, `C:\var\lib\kubeedge`: usersRead,
	})}
	rows := checkProtected(protectedConfig(t), p)
	if len(rows) != 2 {
		t.Fatalf("rows = %+v", rows)
	}
	if r := rows[0]; r.Status != Fail || !strings.Contains(r.Detail, `C:\var (`) || !strings.Contains(r.Detail, "owned by S-1-5-21-9-9-9-1001") || !strings.Contains(r.Fix, `takeown /F "C:\var" /A`) {
		t.Errorf("owner row = %+v", r)
	}
	if r := rows[1]; r.Status != Warn || !strings.Contains(r.Detail, `C:\var\lib\kubeedge`) || !strings.Contains(r.Detail, `BUILTIN\Users may read`) || r.Fix == "" {
		t.Errorf("readable row = %+v", r)
	}
	if ExitCode(rows) != 1 {
		t.Error("a directory another account owns must fail preflight")
	}
}

func TestProtectedFailsAWindowsDirectoryInTheConfiguration(t *testing.T) {
	host := config.Host{GOOS: config.Windows, Hostname: "EDGE-1"}
	c, err := config.Sample(config.KindDefault, host)
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.Edged.RootDirectory = `C:\Windows`
	rows := checkProtected(FromConfig(c, host), Probes{Protect: aclHost(nil)})
	if len(rows) != 1 || rows[0].Status != Fail || !strings.Contains(rows[0].Detail, `modules.edged.rootDirectory: C:\Windows`) {
		t.Errorf("rows = %+v", rows)
	}
}

func TestProtectedWithoutAProbeWarns(t *testing.T) {
	rows := checkProtected(protectedConfig(t), Probes{})
	if len(rows) != 1 || rows[0].Status != Warn {
		t.Errorf("rows = %+v", rows)
	}
}
