package protect

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"sort"
	"strings"
	"testing"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/config"

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
	// A folder an administrator made in C:\ on Windows Server: Users
	// read, and may add files and folders, but move nothing that exists.
	serverParent = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)(A;CIID;0x4;;;BU)(A;CIIOID;0x2;;;BU)"
	// What the Windows parser makes of acl.ParentSDDL: the parents
	// edgecore creates itself.
	createdParent = "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)"
)

// host is a recording fake: the SDDL of each existing path, lower case,
// what was restricted, and what was created with which descriptor, in
// order. keeps says whether a restriction is stored, as on NTFS, or
// dropped, as on FAT or under Wine. A path is a file when files says so
// or its last name has an extension and nothing is below it; a folder
// only named as the parent of another path exists with what it would
// inherit from a restricted folder. links and reparse give an entry
// hard links and a reparse tag; ids its identity (the path by default);
// written holds what WriteFile wrote, restored what SetSDDL set.
type host struct {
	sddl       map[string]string
	restricted []string
	made       []string
	keeps      bool
	restrictFn func(root string) error
	mkdirErr   map[string]error
	files      map[string]bool
	links      map[string]uint32
	reparse    map[string]uint32
	ids        map[string]string
	written    map[string]string
	restored   []string
	// spelling is each path as the test wrote it.
	spelling map[string]string
}

// inherited is what a folder or file below a restricted folder has.
const inherited = "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"

func newHost(paths map[string]string) *host {
	h := &host{sddl: map[string]string{}, keeps: true, files: map[string]bool{}, links: map[string]uint32{},
		reparse: map[string]uint32{}, ids: map[string]string{}, written: map[string]string{}, spelling: map[string]string{}}
	for p, s := range paths {
		h.set(p, s)
	}
	return h
}

// set gives path p the owner and DACL sddl, keeping its spelling.
func (h *host) set(p, sddl string) {
	h.sddl[strings.ToLower(p)] = sddl
	h.spelling[strings.ToLower(p)] = p
}

// below lists the lower-case names directly below dir.
func (h *host) below(dir string) []string {
	prefix := strings.TrimSuffix(strings.ToLower(dir), `\`) + `\`
	seen := map[string]bool{}
	var names []string
	for p := range h.sddl {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		name, _, _ := strings.Cut(p[len(prefix):], `\`)
		if name != "" && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for p := range h.written {
		if ospath.Same(config.Windows, ospath.Dir(config.Windows, p), dir) {
			name := strings.ToLower(p[len(prefix):])
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}

func (h *host) exists(p string) bool {
	p = strings.ToLower(p)
	if _, ok := h.sddl[p]; ok {
		return true
	}
	if _, ok := h.written[p]; ok {
		return true
	}
	return len(h.below(p)) > 0
}

func (h *host) isFile(p string) bool {
	p = strings.ToLower(p)
	if h.files[p] {
		return true
	}
	if _, ok := h.written[p]; ok {
		return true
	}
	return strings.Contains(ospath.Key(config.Windows, p)[len(ospath.Dir(config.Windows, p)):], ".") && len(h.below(p)) == 0
}

func (h *host) security(p string) string {
	if s, ok := h.sddl[strings.ToLower(p)]; ok {
		return s
	}
	return inherited
}

func (h *host) Host(self string) Host {
	return Host{
		Read: func(path string) (acl.Security, error) {
			if !h.exists(path) {
				return acl.Security{}, fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
			}
			return acl.ParseSDDL(h.security(path))
		},
		List: func(dir string) ([]acl.Entry, error) {
			if !h.exists(dir) {
				return nil, fmt.Errorf("list %s: %w", dir, fs.ErrNotExist)
			}
			var out []acl.Entry
			for _, name := range h.below(dir) {
				p := strings.ToLower(ospath.Join(config.Windows, dir, name))
				sec, err := acl.ParseSDDL(h.security(p))
				if err != nil {
					return nil, err
				}
				if spelled, ok := h.spelling[p]; ok {
					name = spelled[len(spelled)-len(name):]
				}
				e := acl.Entry{Name: name, Dir: !h.isFile(p), Security: sec, Links: 1, ID: p}
				if n, ok := h.links[p]; ok {
					e.Links = n
				}
				if tag, ok := h.reparse[p]; ok {
					e.Reparse, e.ReparseTag = true, tag
				}
				if id, ok := h.ids[p]; ok {
					e.ID = id
				}
				out = append(out, e)
			}
			return out, nil
		},
		Restrict: func(root string, leave func(string) bool) error {
			h.restricted = append(h.restricted, root)
			if h.restrictFn != nil {
				if err := h.restrictFn(root); err != nil {
					return err
				}
			}
			if h.keeps {
				for p := range h.sddl {
					if !ospath.Within(config.Windows, root, p) {
						continue
					}
					left := false
					for _, a := range ospath.Ancestors(config.Windows, p) {
						if !ospath.Same(config.Windows, a, root) && ospath.Within(config.Windows, root, a) && leave(a) {
							left = true
						}
					}
					if !left {
						h.sddl[p] = restricted
					}
				}
			}
			return nil
		},
		Exists: func(path string) (bool, error) { return h.exists(path), nil },
		Mkdir: func(path, sddl string) error {
			if err := h.mkdirErr[path]; err != nil {
				return err
			}
			if h.exists(path) {
				return fmt.Errorf("mkdir %s: %w", path, fs.ErrExist)
			}
			if !h.exists(ospath.Dir(config.Windows, path)) {
				return fmt.Errorf("mkdir %s: %w", path, fs.ErrNotExist)
			}
			h.made = append(h.made, path+" "+sddl)
			if sddl == "" {
				// What a directory below a restricted one inherits.
				sddl = inherited
			}
			h.sddl[strings.ToLower(path)] = sddl
			h.files[strings.ToLower(path)] = false
			return nil
		},
		SDDL: func(path string) (string, error) {
			if !h.exists(path) {
				return "", fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
			}
			return h.security(path), nil
		},
		SetSDDL: func(path, sddl string) error {
			h.restored = append(h.restored, path+" "+sddl)
			h.sddl[strings.ToLower(path)] = sddl
			return nil
		},
		ReadFile: func(path string) ([]byte, error) {
			data, ok := h.written[strings.ToLower(path)]
			if !ok {
				return nil, fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
			}
			return []byte(data), nil
		},
		WriteFile: func(path string, data []byte) error {
			if !h.exists(ospath.Dir(config.Windows, path)) {
				return fmt.Errorf("write %s: %w", path, fs.ErrNotExist)
			}
			h.written[strings.ToLower(path)] = string(data)
			return nil
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
	for _, root := range []string{`C:\`, `C:\Windows\Temp\kubelet`, `c:\program files`, `C:\Users`,
		// Spellings Windows reads as its own folders.
		`C:\Windows.\System32\kl`, `C:\Windows \System32\kl`, `\\?\C:\Windows\System32\kl`,
		`\\.\c:\windows\system32\kl`, `C:/Windows/System32/kl`, `C:\Program Files. `,
		// Names only the disk could settle.
		`C:\WINDOW~1\System32\kl`, `C:\PROGRA~1`, `C:\Windows::$INDEX_ALLOCATION\System32\kl`,
		`\\.\HarddiskVolume3\Windows\System32\kl`} {
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
// its parents as an administrator made them on Windows Server, and the
// exe in Program Files.
func aHost(sddl string) *host {
	return newHost(map[string]string{
		`C:\etc`: serverParent, `C:\var`: serverParent, `C:\var\lib`: serverParent, `C:\var\log`: serverParent,
		`C:\etc\kubeedge`: sddl, `C:\etc\kubeedge\config\edgecore.yaml`: sddl,
		`C:\var\lib\kubeedge`: sddl, `C:\var\lib\kubelet`: sddl, `C:\var\log\pods`: sddl, `C:\var\log\kubeedge`: sddl,
		`C:\Program Files`: programFiles, `C:\Program Files\edgecore`: programFiles, `C:\Program Files\edgecore\edgecore.exe`: programFiles,
	})
}

func TestAuditPassesARestrictedHost(t *testing.T) {
	f, err := Audit(defaultTargets(t), aHost(restricted).Host(""), Adopting)
	if err != nil || len(f) != 0 {
		t.Errorf("Audit = %v, %v; want nothing", f, err)
	}
}

func TestAuditReportsDirectoriesThatInheritC(t *testing.T) {
	f, err := Audit(defaultTargets(t), aHost(inheritsC).Host(""), Adopting)
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
	repairs, err := Enforce(defaultTargets(t), h.Host(""), Starting)
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
	if repairs, err := Enforce(defaultTargets(t), h.Host(""), Starting); err != nil || len(repairs) != 0 || len(h.restricted) != 0 {
		t.Errorf("second Enforce = %v, %v, restricted %v", repairs, err, h.restricted)
	}
}

func TestEnforceAlwaysRestrictsEveryExistingDirectory(t *testing.T) {
	h := aHost(restricted)
	delete(h.sddl, `c:\var\log\pods`) // not created yet
	repairs, err := Enforce(defaultTargets(t), h.Host(""), Adopting)
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
	repairs, err := Enforce(defaultTargets(t), h.Host(""), Starting)
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
	_, err := Enforce(defaultTargets(t), h.Host(""), Adopting)
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
	_, err := Enforce(defaultTargets(t), h.Host(""), Adopting)
	if err == nil || !strings.Contains(err.Error(), `C:\var\lib\kubelet (the directory of modules.edged.rootDirectory) is owned by `+userSID) {
		t.Fatalf("Enforce = %v", err)
	}
	// The elevated administrator who made it may keep it: they are an
	// administrator (and under Wine own every file).
	if _, err := Enforce(defaultTargets(t), h.Host(userSID), Adopting); err != nil {
		t.Errorf("Enforce by its owner, elevated = %v", err)
	}
}

func TestEnforceRefusesAnExeOthersMayChange(t *testing.T) {
	h := aHost(restricted)
	h.sddl[`c:\program files\edgecore`] = "O:BAD:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1301bf;;;AU)"
	_, err := Enforce(defaultTargets(t), h.Host(""), Adopting)
	if err == nil || !strings.Contains(err.Error(), `C:\Program Files\edgecore (the directory of the edgecore.exe the service runs) is writable by others: Authenticated Users may change or delete`) ||
		!strings.Contains(err.Error(), "copy edgecore.exe into a directory only administrators may change") {
		t.Fatalf("Enforce = %v", err)
	}
	if len(h.restricted) != 0 {
		t.Errorf("restricted %v before refusing", h.restricted)
	}
	// Users reading and running it is fine.
	h.sddl[`c:\program files\edgecore`] = programFiles
	if _, err := Enforce(defaultTargets(t), h.Host(""), Adopting); err != nil {
		t.Errorf("Enforce with a readable exe directory = %v", err)
	}
}

func TestEnforceNamesARestrictFailure(t *testing.T) {
	h := aHost(inheritsC)
	h.restrictFn = func(string) error { return errors.New("Access is denied.") }
	_, err := Enforce(defaultTargets(t), h.Host(""), Starting)
	if err == nil || !strings.Contains(err.Error(), `restricting C:\etc\kubeedge`) || !strings.Contains(err.Error(), "fix:") {
		t.Errorf("Enforce = %v", err)
	}
}

// An executable others may change does not keep the data directories
// from being repaired, and is refused with them.
func TestAtStartRepairsTheDirectoriesAndRefusesTheExecutable(t *testing.T) {
	h := aHost(restricted)
	h.sddl[`c:\var\lib\kubeedge`] = inheritsC
	h.sddl[`c:\program files\edgecore\edgecore.exe`] = "O:BAD:(A;;FA;;;BA)(A;;FW;;;BU)"
	repairs, err := AtStart(defaultTargets(t), h.Host(SystemSIDForTest))
	if !reflect.DeepEqual(h.restricted, []string{`C:\var\lib\kubeedge`}) || len(repairs) != 1 {
		t.Errorf("restricted %v, repairs %v: want only the drifted database directory", h.restricted, repairs)
	}
	var refused *RefusedError
	if !errors.As(err, &refused) || len(refused.Findings) != 1 || !strings.Contains(refused.Findings[0].String(), `BUILTIN\Users may change or delete (FW)`) {
		t.Errorf("AtStart = %v, want the executable refused", err)
	}
}

// A parent another account owns or may rename is refused at start,
// with the command that fixes it, before anything is repaired: a node
// directory below it may already be theirs. An intact host starts
// without an error.
func TestAtStartRefusesAForeignParentWithoutRepairing(t *testing.T) {
	for parent, tc := range map[string]struct {
		sddl  string
		wants []string
	}{
		`c:\var`: {userOwned, []string{`C:\var (the directory of database.dataSource) is a parent owned by ` + userSID, `takeown /F "C:\var" /A`}},
		`c:\etc`: {inheritsC, []string{`C:\etc (the configuration, join token`, "Authenticated Users has 0x1301bf", `icacls "C:\etc" /remove:g *S-1-5-11`}},
	} {
		h := aHost(inheritsC)
		h.sddl[parent] = tc.sddl
		repairs, err := AtStart(defaultTargets(t), h.Host(SystemSIDForTest))
		var refused *RefusedError
		if !errors.As(err, &refused) || len(repairs) != 0 || len(h.restricted) != 0 {
			t.Errorf("%s: AtStart = %v, %v; restricted %v", parent, repairs, err, h.restricted)
			continue
		}
		for _, want := range tc.wants {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q does not say %q", err, want)
			}
		}
	}
	if _, err := AtStart(defaultTargets(t), aHost(restricted).Host(SystemSIDForTest)); err != nil {
		t.Errorf("AtStart on an intact host = %v", err)
	}
}

// SystemSIDForTest is the service's own account, as acl.Self reports it.
const SystemSIDForTest = acl.SystemSID

// covered reports whether a restricted directory of ts holds p.
func covered(ts []Target, p string) bool {
	for _, t := range ts {
		if t.Restrict && !t.File && ospath.Within(config.Windows, t.Path, p) {
			return true
		}
	}
	return false
}

// Every folder from which the 1.32 kubelet runs code or takes sockets is
// restricted: plugin registration and the flexvolume drivers in its
// root, device plugins in a place of their own on the system drive.
func TestTargetsCoverTheKubeletsPluginDirectories(t *testing.T) {
	c, err := config.Sample(config.KindDefault, winHost)
	if err != nil {
		t.Fatal(err)
	}
	devicePlugins := `C:` + strings.TrimSuffix(pluginapi.DevicePluginPathWindows, `\`)
	for _, root := range []string{`C:\var\lib\kubelet`, `D:\kubelet`} {
		c.Modules.Edged.RootDirectory = root
		ts, err := Targets(c, config.NewLayout(winHost), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{
			ospath.Join(config.Windows, root, kubeletconfig.DefaultKubeletPluginsDirName),
			ospath.Join(config.Windows, root, kubeletconfig.DefaultKubeletPluginsRegistrationDirName),
			c.Modules.Edged.TailoredKubeletConfig.VolumePluginDir,
			devicePlugins,
		} {
			if !covered(ts, p) {
				t.Errorf("rootDirectory %s: %s is in no restricted directory of %v", root, p, paths(ts))
			}
		}
	}
	// Outside the root, the device plugins' directory is a target of
	// its own; without the kubelet there is none.
	ts, _ := Targets(c, config.NewLayout(winHost), "")
	if got := paths(ts); !strings.Contains(strings.Join(got, "\n"), devicePlugins+" restrict=true") {
		t.Errorf("targets with the root on D: %v, want %s", got, devicePlugins)
	}
	c.Modules.Edged.Enable = false
	ts, _ = Targets(c, config.NewLayout(winHost), "")
	if covered(ts, devicePlugins) {
		t.Errorf("targets without the kubelet restrict %s: %v", devicePlugins, paths(ts))
	}
}

// A volumePluginDir the configuration puts elsewhere, as nodes joined
// before it moved into the kubelet's root have it, is restricted like
// the node's own directories, and one Windows needs is refused.
func TestTargetsRestrictAVolumePluginDirElsewhere(t *testing.T) {
	c, err := config.Sample(config.KindDefault, winHost)
	if err != nil {
		t.Fatal(err)
	}
	const old = `C:\usr\libexec\kubernetes\kubelet-plugins\volume\exec`
	c.Modules.Edged.TailoredKubeletConfig.VolumePluginDir = old
	ts, err := Targets(c, config.NewLayout(winHost), "")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range ts {
		found = found || (x.Path == old && x.Restrict && x.Field == "modules.edged.tailoredKubeletConfig.volumePluginDir")
	}
	if !found {
		t.Errorf("targets %v lack %s", paths(ts), old)
	}
	// Its parents, made by the kubelet in C:\ on a client edition, are
	// refused with their fix.
	h := aHost(restricted)
	for _, p := range ospath.Ancestors(config.Windows, old)[:6] {
		h.sddl[strings.ToLower(p)] = inheritsC
	}
	f, err := Audit(ts, h.Host(""), Adopting)
	if err != nil {
		t.Fatal(err)
	}
	if err := Refused(f); err == nil || !strings.Contains(err.Error(), `C:\usr (the directory of modules.edged.tailoredKubeletConfig.volumePluginDir) is a parent that others may rename or empty`) {
		t.Errorf("Audit = %v", err)
	}
	for _, bad := range []string{`C:\`, `C:\Windows\kubelet-plugins`} {
		c.Modules.Edged.TailoredKubeletConfig.VolumePluginDir = bad
		_, err := Targets(c, config.NewLayout(winHost), "")
		if err == nil || !strings.Contains(err.Error(), "modules.edged.tailoredKubeletConfig.volumePluginDir: "+bad) || !strings.Contains(err.Error(), "fix:") {
			t.Errorf("volumePluginDir %s: %v, want a refusal naming the field, value and fix", bad, err)
		}
	}
}

// One rule for every parent: whoever may rename or empty a parent of a
// node directory may put their own below it, as for the executable's.
func TestAuditJudgesEveryParentByItsACL(t *testing.T) {
	h := aHost(restricted)
	h.sddl[`c:\etc`] = inheritsC // made by an administrator in C:\ on a client edition
	f, err := Audit(defaultTargets(t), h.Host(""), Adopting)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 1 || !f[0].Refuse || f[0].Path != `C:\etc` {
		t.Fatalf("Audit = %v, want C:\\etc refused", f)
	}
	s := f[0].String()
	for _, want := range []string{
		`C:\etc (the configuration, join token, node key and certificates, backups and upgrade journal) is a parent that others may rename or empty: Authenticated Users has 0x1301bf`,
		`icacls "C:\etc" /inheritance:d`, `icacls "C:\etc" /remove:g *S-1-5-11`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("finding %q does not say %q", s, want)
		}
	}
	// The elevated account running the command may hold that right.
	h.sddl[`c:\etc`] = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;ID;0x1301bf;;;" + userSID + ")"
	if f, err := Audit(defaultTargets(t), h.Host(userSID), Adopting); err != nil || len(f) != 0 {
		t.Errorf("Audit by the account that may change C:\\etc = %v, %v", f, err)
	}
}

func TestTargetsTakeTheConfigFilesOutsideTheNodesDirectories(t *testing.T) {
	c, err := config.Sample(config.KindDefault, winHost)
	if err != nil {
		t.Fatal(err)
	}
	l := config.NewLayout(winHost)
	inside, err := Targets(c, l, "", ConfigFiles(l.ConfigFile, `C:\etc\kubeedge\config\upgrade.yaml`)...)
	if err != nil || !reflect.DeepEqual(paths(inside), paths(defaultTargets(t)[:5])) {
		t.Errorf("targets with the files in C:\\etc\\kubeedge = %v, %v; want the directory to cover them", paths(inside), err)
	}
	outside, err := Targets(c, l, "", ConfigFiles(`D:\node\edgecore.yaml`, `D:\node\upgrade.yaml`)...)
	if err != nil {
		t.Fatal(err)
	}
	got := paths(outside)
	if want := []string{`D:\node\edgecore.yaml restrict=true`, `D:\node\upgrade.yaml restrict=true`}; !reflect.DeepEqual(got[len(got)-2:], want) {
		t.Errorf("targets = %v, want them to end with %v", got, want)
	}
	if len(ConfigFiles("", "")) != 0 {
		t.Error("ConfigFiles of no paths is not empty")
	}
}

// The configuration and the upgrade settings outside C:\etc\kubeedge are
// restricted as files, and their parents judged.
func TestEnforceRestrictsTheConfigFilesAndJudgesTheirParents(t *testing.T) {
	c, err := config.Sample(config.KindDefault, winHost)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := Targets(c, config.NewLayout(winHost), "", ConfigFiles(`D:\node\edgecore.yaml`, `D:\node\upgrade.yaml`)...)
	if err != nil {
		t.Fatal(err)
	}
	h := aHost(restricted)
	h.sddl[`d:\node`] = serverParent
	h.sddl[`d:\node\edgecore.yaml`] = inheritsC
	h.sddl[`d:\node\upgrade.yaml`] = inheritsC
	if _, err := Enforce(ts, h.Host(""), Starting); err != nil {
		t.Fatal(err)
	}
	if want := []string{`D:\node\edgecore.yaml`, `D:\node\upgrade.yaml`}; !reflect.DeepEqual(h.restricted, want) {
		t.Errorf("restricted %v, want %v", h.restricted, want)
	}
	// A folder in D:\ others may rename, or settings another account
	// wrote, are refused before anything changes.
	for path, sddl := range map[string]string{`d:\node`: inheritsC, `d:\node\upgrade.yaml`: userOwned} {
		h := aHost(restricted)
		h.sddl[`d:\node`], h.sddl[`d:\node\edgecore.yaml`], h.sddl[`d:\node\upgrade.yaml`] = serverParent, inheritsC, inheritsC
		h.sddl[path] = sddl
		_, err := Enforce(ts, h.Host(""), Adopting)
		var refused *RefusedError
		if !errors.As(err, &refused) || len(h.restricted) != 0 {
			t.Errorf("%s: Enforce = %v, restricted %v", path, err, h.restricted)
		}
	}
}

// What edgecore creates is protected from its first moment, and passes
// its own audit on a client edition, whose C:\ lets Authenticated Users
// modify what is made below it: parents with acl.ParentSDDL, the node's
// directories with acl.DirectorySDDL, what is inside them by inheritance.
func TestCreateGivesEachDirectoryItsDescriptor(t *testing.T) {
	c, err := config.Sample(config.KindDefault, winHost)
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.Edged.TailoredKubeletConfig.VolumePluginDir = `D:\plugins\flex`
	ts, err := Targets(c, config.NewLayout(winHost), "")
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(map[string]string{`C:\`: "O:TID:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICIIO;SDGXGWGR;;;AU)(A;;LC;;;AU)", `D:\`: restricted})
	var made []string
	for _, d := range []string{`C:\etc\kubeedge\certs`, `C:\var\lib\kubelet\volumeplugins`, `D:\plugins\flex`} {
		m, err := Create(config.Windows, ts, d, h.Host(""))
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, m...)
	}
	want := []string{
		`C:\etc ` + acl.ParentSDDL, `C:\etc\kubeedge ` + acl.DirectorySDDL, `C:\etc\kubeedge\certs `,
		`C:\var ` + acl.ParentSDDL, `C:\var\lib ` + acl.ParentSDDL, `C:\var\lib\kubelet ` + acl.DirectorySDDL, `C:\var\lib\kubelet\volumeplugins `,
		`D:\plugins ` + acl.ParentSDDL, `D:\plugins\flex ` + acl.DirectorySDDL,
	}
	if !reflect.DeepEqual(h.made, want) {
		t.Errorf("made\n%s\nwant\n%s", strings.Join(h.made, "\n"), strings.Join(want, "\n"))
	}
	if len(made) != len(want) {
		t.Errorf("Create returned %v", made)
	}
	if f, err := Audit(ts, h.Host(""), Adopting); err != nil || len(f) != 0 {
		t.Errorf("Audit of what Create made = %v, %v", f, err)
	}
	// Nothing is made twice.
	h.made = nil
	if m, err := Create(config.Windows, ts, `C:\etc\kubeedge\certs`, h.Host("")); err != nil || len(m) != 0 || len(h.made) != 0 {
		t.Errorf("Create of an existing directory = %v, %v; made %v", m, err, h.made)
	}
}

func TestCreateSaysWhatItMadeBeforeAFailure(t *testing.T) {
	h := newHost(map[string]string{`C:\`: restricted})
	h.mkdirErr = map[string]error{`C:\etc\kubeedge`: errors.New("Access is denied.")}
	made, err := Create(config.Windows, defaultTargets(t), `C:\etc\kubeedge\config`, h.Host(""))
	if !reflect.DeepEqual(made, []string{`C:\etc`}) || err == nil || !strings.Contains(err.Error(), `create C:\etc\kubeedge: Access is denied.`) {
		t.Errorf("Create = %v, %v", made, err)
	}
	// Made meanwhile by someone else: left to the audit.
	h = newHost(map[string]string{`C:\`: restricted})
	h.mkdirErr = map[string]error{`C:\etc`: fmt.Errorf("mkdir: %w", fs.ErrExist)}
	if made, err := Create(config.Windows, defaultTargets(t), `C:\etc`, h.Host("")); err != nil || len(made) != 0 {
		t.Errorf("Create of a directory made meanwhile = %v, %v", made, err)
	}
}
