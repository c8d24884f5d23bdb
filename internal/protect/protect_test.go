package protect

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

var winHost = config.Host{GOOS: config.Windows, Hostname: "EDGE-1", NodeIP: "192.168.1.20"}

const (
	restricted = "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
	// A folder an administrator made in C:\: it inherits C:\'s ACL,
	// under which Users read and Authenticated Users change.
	inheritsC = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)(A;ID;0x1301bf;;;AU)"
	// What C:\Program Files\edgecore looks like: Users read and run.
	programFiles = "O:S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464D:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)"
	userSID      = "S-1-5-21-1-2-3-1001"
	userOwned    = "O:" + userSID + "D:AI(A;OICIID;FA;;;" + userSID + ")(A;ID;FA;;;SY)"
)

// host is a recording fake: the SDDL of each existing path, lower case,
// and what was restricted. keeps says whether a restriction is stored,
// as on NTFS, or dropped, as on FAT or under Wine.
type host struct {
	sddl       map[string]string
	restricted []string
	keeps      bool
	restrictFn func(root string) error
}

func newHost(paths map[string]string) *host {
	h := &host{sddl: map[string]string{}, keeps: true}
	for p, s := range paths {
		h.sddl[strings.ToLower(p)] = s
	}
	return h
}

func (h *host) Host(self string) Host {
	return Host{
		Read: func(path string) (acl.Security, error) {
			s, ok := h.sddl[strings.ToLower(path)]
			if !ok {
				return acl.Security{}, fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
			}
			return acl.ParseSDDL(s)
		},
		Restrict: func(root string) error {
			h.restricted = append(h.restricted, root)
			if h.restrictFn != nil {
				if err := h.restrictFn(root); err != nil {
					return err
				}
			}
			if h.keeps {
				for p := range h.sddl {
					if ospath.Within(config.Windows, root, p) {
						h.sddl[p] = restricted
					}
				}
			}
			return nil
		},
		Exists: func(path string) (bool, error) {
			_, ok := h.sddl[strings.ToLower(path)]
			return ok, nil
		},
		Self: self,
	}
}

// defaultTargets are the targets of the default Windows configuration
// with the exe in C:\Program Files\edgecore.
func defaultTargets(t *testing.T) []Target {
	t.Helper()
	c, err := config.Sample(config.KindDefault, winHost)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := Targets(c, config.NewLayout(winHost), `C:\Program Files\edgecore\edgecore.exe`)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func paths(ts []Target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s restrict=%v", t.Path, t.Restrict))
	}
	return out
}

func TestTargetsCoverEveryDirectoryOfTheNode(t *testing.T) {
	got := paths(defaultTargets(t))
	want := []string{
		`C:\etc\kubeedge restrict=true`, // configuration, certificates, static pods, backups, journal
		`C:\var\lib\kubeedge restrict=true`,
		`C:\var\lib\kubelet restrict=true`,
		`C:\var\log\pods restrict=true`,
		`C:\var\log\kubeedge restrict=true`,
		`C:\Program Files\edgecore restrict=false`,
		`C:\Program Files\edgecore\edgecore.exe restrict=false`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Targets =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTargetsKeepTheWiderDirectory(t *testing.T) {
	c, err := config.Sample(config.KindDefault, winHost)
	if err != nil {
		t.Fatal(err)
	}
	// The database moved into C:\var\lib, above the kubelet's root
	// and the old database directory: one restriction covers all.
	c.DataBase.DataSource = `C:\var\lib\edgecore.db`
	ts, err := Targets(c, config.NewLayout(winHost), "")
	if err != nil {
		t.Fatal(err)
	}
	got := paths(ts)
	want := []string{`C:\etc\kubeedge restrict=true`, `C:\var\lib restrict=true`, `C:\var\log\pods restrict=true`, `C:\var\log\kubeedge restrict=true`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Targets = %v, want %v", got, want)
	}
}

func TestTargetsRefuseWindowsOwnDirectories(t *testing.T) {
	for _, root := range []string{`C:\`, `C:\Windows\Temp\kubelet`, `c:\program files`, `C:\Users`} {
		c, err := config.Sample(config.KindDefault, winHost)
		if err != nil {
			t.Fatal(err)
		}
		c.Modules.Edged.RootDirectory = root
		_, err = Targets(c, config.NewLayout(winHost), "")
		if err == nil || !strings.Contains(err.Error(), "modules.edged.rootDirectory: "+root) || !strings.Contains(err.Error(), "fix:") {
			t.Errorf("rootDirectory %s: %v, want a refusal naming the field, value and fix", root, err)
		}
	}
	// A directory of its own below Program Files is the node's.
	c, _ := config.Sample(config.KindDefault, winHost)
	c.Modules.Edged.RootDirectory = `D:\Program Files\kubelet`
	if _, err := Targets(c, config.NewLayout(winHost), ""); err != nil {
		t.Errorf("D:\\Program Files\\kubelet: %v", err)
	}
}

func TestTargetsAreNoneOutsideWindows(t *testing.T) {
	c, _ := config.Sample(config.KindDefault, config.Host{GOOS: "linux"})
	if ts, err := Targets(c, config.NewLayout(config.Host{GOOS: "linux"}), "/usr/bin/edgecore"); ts != nil || err != nil {
		t.Errorf("Targets on linux = %v, %v", ts, err)
	}
}

// aHost is a host where every directory of the node exists with sddl,
// its parents as an administrator made them, and the exe in Program
// Files.
func aHost(sddl string) *host {
	return newHost(map[string]string{
		`C:\etc`: inheritsC, `C:\var`: inheritsC, `C:\var\lib`: inheritsC, `C:\var\log`: inheritsC,
		`C:\etc\kubeedge`: sddl, `C:\etc\kubeedge\config\edgecore.yaml`: sddl,
		`C:\var\lib\kubeedge`: sddl, `C:\var\lib\kubelet`: sddl, `C:\var\log\pods`: sddl, `C:\var\log\kubeedge`: sddl,
		`C:\Program Files`: programFiles, `C:\Program Files\edgecore`: programFiles, `C:\Program Files\edgecore\edgecore.exe`: programFiles,
	})
}

func TestAuditPassesARestrictedHost(t *testing.T) {
	f, err := Audit(defaultTargets(t), aHost(restricted).Host(""))
	if err != nil || len(f) != 0 {
		t.Errorf("Audit = %v, %v; want nothing", f, err)
	}
}

func TestAuditReportsDirectoriesThatInheritC(t *testing.T) {
	f, err := Audit(defaultTargets(t), aHost(inheritsC).Host(""))
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 5 {
		t.Fatalf("Audit = %v, want the 5 node directories", f)
	}
	for _, x := range f {
		if x.Refuse || !strings.Contains(x.Problem, `BUILTIN\Users may read`) || !strings.Contains(x.Problem, "inherits its parent's ACL") {
			t.Errorf("finding %v", x)
		}
	}
}

func TestEnforceRepairsDriftAndSaysWhat(t *testing.T) {
	h := aHost(restricted)
	h.sddl[`c:\var\lib\kubelet`] = inheritsC
	h.sddl[`c:\var\log\kubeedge`] = "O:SYD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;;FR;;;WD)"
	repairs, err := Enforce(defaultTargets(t), h.Host(""), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`C:\var\lib\kubelet`, `C:\var\log\kubeedge`}; !reflect.DeepEqual(h.restricted, want) {
		t.Errorf("restricted %v, want only the drifted %v", h.restricted, want)
	}
	if len(repairs) != 2 {
		t.Fatalf("repairs = %v", repairs)
	}
	s := repairs[1].String()
	for _, want := range []string{`C:\var\log\kubeedge`, "owned by NT AUTHORITY\\SYSTEM", "Everyone may read (FR)"} {
		if !strings.Contains(s, want) {
			t.Errorf("repair %q does not say %q", s, want)
		}
	}
	if repairs[0].NotKept != "" {
		t.Errorf("NTFS kept the ACL, but the repair says %q", repairs[0].NotKept)
	}
	// Nothing left to repair.
	h.restricted = nil
	if repairs, err := Enforce(defaultTargets(t), h.Host(""), false); err != nil || len(repairs) != 0 || len(h.restricted) != 0 {
		t.Errorf("second Enforce = %v, %v, restricted %v", repairs, err, h.restricted)
	}
}

func TestEnforceAlwaysRestrictsEveryExistingDirectory(t *testing.T) {
	h := aHost(restricted)
	delete(h.sddl, `c:\var\log\pods`) // not created yet
	repairs, err := Enforce(defaultTargets(t), h.Host(""), true)
	if err != nil || len(repairs) != 4 {
		t.Fatalf("Enforce = %v, %v", repairs, err)
	}
	want := []string{`C:\etc\kubeedge`, `C:\var\lib\kubeedge`, `C:\var\lib\kubelet`, `C:\var\log\kubeedge`}
	if !reflect.DeepEqual(h.restricted, want) {
		t.Errorf("restricted %v, want %v: never the exe's directory, never a missing one", h.restricted, want)
	}
	if got := repairs[0].String(); got != `C:\etc\kubeedge: SYSTEM and Administrators only, owned by Administrators` {
		t.Errorf("repair of an intact directory = %q", got)
	}
}

func TestEnforceSaysWhenTheVolumeDoesNotKeepTheACL(t *testing.T) {
	h := aHost(inheritsC)
	h.keeps = false
	repairs, err := Enforce(defaultTargets(t), h.Host(""), false)
	if err != nil || len(repairs) != 5 {
		t.Fatalf("Enforce = %v, %v", repairs, err)
	}
	if !strings.Contains(repairs[0].String(), "does not keep Windows ACLs") {
		t.Errorf("repair %q does not say the ACL was not kept", repairs[0])
	}
}

func TestEnforceRefusesAUserOwnedParentAndChangesNothing(t *testing.T) {
	h := aHost(inheritsC)
	h.sddl[`c:\etc`] = userOwned
	_, err := Enforce(defaultTargets(t), h.Host(""), true)
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("Enforce = %v, want a refusal", err)
	}
	if len(h.restricted) != 0 {
		t.Errorf("restricted %v before refusing", h.restricted)
	}
	msg := err.Error()
	for _, want := range []string{`C:\etc (`, "owned by " + userSID, `takeown /F "C:\etc" /A`} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
}

func TestEnforceRefusesAUserOwnedNodeDirectory(t *testing.T) {
	h := aHost(restricted)
	h.sddl[`c:\var\lib\kubelet`] = userOwned
	_, err := Enforce(defaultTargets(t), h.Host(""), true)
	if err == nil || !strings.Contains(err.Error(), `C:\var\lib\kubelet (the directory of modules.edged.rootDirectory) is owned by `+userSID) {
		t.Fatalf("Enforce = %v", err)
	}
	// The elevated administrator who made it may keep it: they are an
	// administrator (and under Wine own every file).
	if _, err := Enforce(defaultTargets(t), h.Host(userSID), true); err != nil {
		t.Errorf("Enforce by its owner, elevated = %v", err)
	}
}

func TestEnforceRefusesAnExeOthersMayChange(t *testing.T) {
	h := aHost(restricted)
	h.sddl[`c:\program files\edgecore`] = "O:BAD:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1301bf;;;AU)"
	_, err := Enforce(defaultTargets(t), h.Host(""), true)
	if err == nil || !strings.Contains(err.Error(), `C:\Program Files\edgecore (the directory of the edgecore.exe the service runs) is writable by others: Authenticated Users may change or delete`) ||
		!strings.Contains(err.Error(), "copy edgecore.exe into a directory only administrators may change") {
		t.Fatalf("Enforce = %v", err)
	}
	if len(h.restricted) != 0 {
		t.Errorf("restricted %v before refusing", h.restricted)
	}
	// Users reading and running it is fine.
	h.sddl[`c:\program files\edgecore`] = programFiles
	if _, err := Enforce(defaultTargets(t), h.Host(""), true); err != nil {
		t.Errorf("Enforce with a readable exe directory = %v", err)
	}
}

func TestEnforceNamesARestrictFailure(t *testing.T) {
	h := aHost(inheritsC)
	h.restrictFn = func(string) error { return errors.New("Access is denied.") }
	_, err := Enforce(defaultTargets(t), h.Host(""), false)
	if err == nil || !strings.Contains(err.Error(), `restricting C:\etc\kubeedge`) || !strings.Contains(err.Error(), "fix:") {
		t.Errorf("Enforce = %v", err)
	}
}

func TestAtStartRepairsTheDirectoriesAndReportsTheExecutable(t *testing.T) {
	h := aHost(restricted)
	h.sddl[`c:\var\lib\kubeedge`] = inheritsC
	h.sddl[`c:\program files\edgecore\edgecore.exe`] = "O:BAD:(A;;FA;;;BA)(A;;FW;;;BU)"
	repairs, exe, err := AtStart(defaultTargets(t), h.Host(SystemSIDForTest))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h.restricted, []string{`C:\var\lib\kubeedge`}) || len(repairs) != 1 {
		t.Errorf("restricted %v, repairs %v: want only the drifted database directory", h.restricted, repairs)
	}
	if len(exe) != 1 || !exe[0].Refuse || !strings.Contains(exe[0].String(), `BUILTIN\Users may change or delete (FW)`) {
		t.Errorf("executable findings = %v", exe)
	}
}

func TestAtStartRefusesAUserOwnedDirectoryWithoutRepairing(t *testing.T) {
	h := aHost(inheritsC)
	h.sddl[`c:\var`] = userOwned
	repairs, _, err := AtStart(defaultTargets(t), h.Host(SystemSIDForTest))
	var refused *RefusedError
	if !errors.As(err, &refused) || len(repairs) != 0 || len(h.restricted) != 0 {
		t.Errorf("AtStart = %v, %v; restricted %v", repairs, err, h.restricted)
	}
}

// SystemSIDForTest is the service's own account, as acl.Self reports it.
const SystemSIDForTest = acl.SystemSID
