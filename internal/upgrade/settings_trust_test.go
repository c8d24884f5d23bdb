package upgrade

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// Upgrade settings beside a --config outside C:\etc\kubeedge are judged
// each time a NodeUpgradeJob reads them, with the node's ACLs (HostEnv):
// settings another account owns or may change, or in a folder others may
// rename, name another repository and are refused, with the path and the
// fix; an administrator's are read.
func TestSettingsAreJudgedWhenRead(t *testing.T) {
	const cfg = `D:\node\edgecore.yaml`
	const settings = `D:\node\upgrade.yaml`
	const admins = "O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x1200a9;;;BU)"
	for _, c := range []struct {
		name, folder, file, want string
	}{
		{"an administrator's", admins, admins, ""},
		{"a user's", admins, "O:S-1-5-21-1-2-3-1001D:(A;;FA;;;S-1-5-21-1-2-3-1001)", `D:\node\upgrade.yaml (the upgrade settings, which name where the binaries that run as SYSTEM come from) is owned by S-1-5-21-1-2-3-1001`},
		{"writable by Users", admins, "O:BAD:(A;;FA;;;BA)(A;;0x1301bf;;;BU)", `BUILTIN\Users may change or delete`},
		{"in a folder Authenticated Users may rename", "O:BAD:AI(A;ID;FA;;;BA)(A;ID;0x1301bf;;;AU)", admins, `icacls "D:\node" /inheritance:d`},
	} {
		sddl := map[string]string{`D:\`: admins, `D:\node`: c.folder, settings: c.file}
		acls := protect.Host{
			Exists: func(p string) (bool, error) { _, ok := sddl[p]; return ok, nil },
			Read: func(p string) (acl.Security, error) {
				s, ok := sddl[p]
				if !ok {
					return acl.Security{}, fmt.Errorf("read %s: %w", p, fs.ErrNotExist)
				}
				return acl.ParseSDDL(s)
			},
		}
		host := config.Host{GOOS: config.Windows}
		e := HostEnv(&deps.Dependencies{Host: host, Layout: config.NewLayout(host), ACLs: acls})
		h := newHost(newBin)
		e.FS = h.fs
		h.fs.put(settings, []byte(`repository: '\\files\edgecore\edgecore-{version}-windows-amd64.zip'`))
		_, err := LoadSettings(e, cfg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "fix:")):
			t.Errorf("%s: %v, want a refusal saying %q", c.name, err, c.want)
		}
	}
}
