package protect

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

const (
	// containerSID is a Windows container's virtual account, which owns
	// what the container writes into its volumes.
	containerSID   = "S-1-5-93-2-1"
	containerOwned = "O:" + containerSID + "D:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;;FA;;;" + containerSID + ")"
)

// nodeHost is aHost with the node's usual entries below its folders,
// all made by SYSTEM or an administrator: what a node that ran looks like.
func nodeHost(root string) *host {
	h := aHost(root)
	for _, p := range []string{
		`C:\etc\kubeedge\config\upgrade.yaml`, `C:\etc\kubeedge\ca\rootCA.crt`, `C:\etc\kubeedge\certs\server.crt`, `C:\etc\kubeedge\certs\server.key`,
		`C:\etc\kubeedge\upgrade\journal.json`, `C:\etc\kubeedge\backup\v1.0.0\edgecore.exe`, `C:\etc\kubeedge\images\pause.tar`,
		`C:\etc\kubeedge\manifests\static.yaml`, `C:\var\lib\kubeedge\edgecore.db`, `C:\var\lib\kubeedge\edgecore.db-wal`,
		`C:\var\lib\kubelet\volumeplugins\vendor~driver\driver.exe`, `C:\var\lib\kubelet\plugins_registry\csi.sock`,
		`C:\var\lib\kubelet\device-plugins\kubelet.sock`, `C:\var\lib\kubelet\cpu_manager_state`,
		`C:\var\lib\kubelet\pods\uid-1\plugins\kubernetes.io~empty-dir\data\ready`,
		`C:\var\log\pods\default_web_uid-1\web\0.log`, `C:\var\log\kubeedge\edgecore.log`,
	} {
		h.set(p, inherited)
		h.files[strings.ToLower(p)] = true
	}
	h.reparse[`c:\var\lib\kubelet\plugins_registry\csi.sock`] = acl.ReparseTagAFUnix
	h.reparse[`c:\var\lib\kubelet\device-plugins\kubelet.sock`] = acl.ReparseTagAFUnix
	// What workloads wrote into a pod's volumes, with the links the
	// kubelet's atomic writer makes for Secrets, and the termination
	// message a container wrote.
	for p, s := range map[string]string{
		`C:\var\lib\kubelet\pods\uid-1\volumes\kubernetes.io~empty-dir\data\out.txt`:     containerOwned,
		`C:\var\lib\kubelet\pods\uid-1\volumes\kubernetes.io~secret\token\..data`:        inherited,
		`C:\var\lib\kubelet\pods\uid-1\containers\web\0a1b2c`:                            containerOwned,
		`C:\var\lib\kubelet\pods\uid-1\volume-subpaths\data\web\0`:                       containerOwned,
		`C:\var\lib\kubelet\plugins\kubernetes.io\csi\driver\0123\globalmount`:           inherited,
		`C:\var\lib\kubelet\plugins\kubernetes.io\csi\driver\0123\vol_data.json`:         userOwned,
		`C:\var\lib\kubelet\pods\uid-1\volumes\kubernetes.io~empty-dir\data\hostprocess`: userOwned,
	} {
		h.set(p, s)
	}
	h.reparse[`c:\var\lib\kubelet\pods\uid-1\volumes\kubernetes.io~secret\token\..data`] = acl.ReparseTagSymlink
	h.reparse[`c:\var\lib\kubelet\plugins\kubernetes.io\csi\driver\0123\globalmount`] = acl.ReparseTagSymlink
	return h
}

// A node that ran passes both moments: its sockets are no links, and
// what workloads own in their volumes is theirs.
func TestAuditPassesANodeThatRan(t *testing.T) {
	for _, m := range []Moment{Starting, Adopting} {
		f, err := Audit(defaultTargets(t), nodeHost(restricted).Host(SystemSIDForTest), m)
		if err != nil || len(f) != 0 {
			t.Errorf("moment %d: Audit = %v, %v; want nothing", m, f, err)
		}
	}
}

// Every entry a local account could plant before the node takes a
// folder over, and which the node then reads, trusts or runs as SYSTEM,
// is refused and named, at adoption and at every start alike, before
// anything changes.
func TestEnforceRefusesEveryPlantedEntryAndNamesIt(t *testing.T) {
	for _, c := range []struct {
		name, path string
		plant      func(h *host, p string)
		want       []string
	}{
		{"upgrade settings naming their repository", `C:\etc\kubeedge\config\upgrade.yaml`, owned, []string{"is owned by " + userSID, `takeown /F "C:\etc\kubeedge\config\upgrade.yaml" /A`}},
		{"an unfinished upgrade journal", `C:\etc\kubeedge\upgrade\journal.json`, owned, []string{"is owned by " + userSID}},
		{"a backup dated 2099", `C:\etc\kubeedge\backup\v2099.1.1`, ownedDir, []string{"is owned by " + userSID, `takeown /F "C:\etc\kubeedge\backup\v2099.1.1" /A /R /D Y`}},
		{"an image archive imported at the first start", `C:\etc\kubeedge\images\x.tar`, owned, []string{"is owned by " + userSID}},
		{"a static pod", `C:\etc\kubeedge\manifests\miner.yaml`, owned, []string{"is owned by " + userSID}},
		{"a flexvolume driver", `C:\var\lib\kubelet\volumeplugins\evil~driver\driver.exe`, owned, []string{"is owned by " + userSID}},
		{"its folder", `C:\var\lib\kubelet\volumeplugins\evil~driver`, ownedDir, []string{"is owned by " + userSID}},
		{"an SQLite hot journal", `C:\var\lib\kubeedge\edgecore.db-journal`, owned, []string{"is owned by " + userSID}},
		{"a plugin registration socket", `C:\var\lib\kubelet\plugins_registry\evil.sock`, func(h *host, p string) {
			owned(h, p)
			h.reparse[strings.ToLower(p)] = acl.ReparseTagAFUnix
		}, []string{"is owned by " + userSID}},
		{"a junction below a root", `C:\etc\kubeedge\certs`, func(h *host, p string) {
			h.reparse[strings.ToLower(p)] = acl.ReparseTagMountPoint
		}, []string{"is a junction or mount point, which the service would follow", `cmd /c rmdir "C:\etc\kubeedge\certs"`}},
		{"a symbolic link to a file", `C:\etc\kubeedge\ca\rootCA.crt`, func(h *host, p string) {
			h.reparse[strings.ToLower(p)] = acl.ReparseTagSymlink
		}, []string{"is a symbolic link", `cmd /c del "C:\etc\kubeedge\ca\rootCA.crt"`}},
		{"a link Wine reports without its tag", `C:\var\log\kubeedge\old`, func(h *host, p string) {
			h.set(p, inherited)
			h.reparse[strings.ToLower(p)] = 0
		}, []string{"is a symbolic link, junction or mount point"}},
		{"a hard-linked file", `C:\etc\kubeedge\config\edgecore.yaml`, func(h *host, p string) {
			h.links[strings.ToLower(p)] = 2
		}, []string{"is a file with 2 names (hard links)", `fsutil hardlink list "C:\etc\kubeedge\config\edgecore.yaml"`}},
	} {
		for _, m := range []Moment{Starting, Adopting} {
			h := nodeHost(restricted)
			c.plant(h, c.path)
			_, err := Enforce(defaultTargets(t), h.Host(SystemSIDForTest), m)
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Errorf("%s, moment %d: Enforce = %v, want a refusal", c.name, m, err)
				continue
			}
			if len(refused.Findings) != 1 || refused.Findings[0].Path != c.path {
				t.Errorf("%s, moment %d: refused %v, want %s alone", c.name, m, refused.Findings, c.path)
			}
			for _, want := range append(c.want, c.path+" (in ", "fix: ") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s, moment %d: refusal %q does not say %q", c.name, m, err, want)
				}
			}
			if len(h.restricted) != 0 {
				t.Errorf("%s, moment %d: restricted %v before refusing", c.name, m, h.restricted)
			}
		}
	}
}

func owned(h *host, p string) {
	h.set(p, userOwned)
	h.files[strings.ToLower(p)] = true
}

func ownedDir(h *host, p string) {
	h.set(p, userOwned)
	h.set(p+`\driver.exe`, userOwned)
	h.files[strings.ToLower(p)] = false
}

// What is below a refused folder is not listed one by one: its fix is
// to look at all of it.
func TestAuditDoesNotEnterARefusedFolder(t *testing.T) {
	h := nodeHost(restricted)
	ownedDir(h, `C:\etc\kubeedge\upgrade\v9.9.9`)
	h.reparse[`c:\etc\kubeedge\images`] = acl.ReparseTagMountPoint
	h.sddl[`c:\etc\kubeedge\images\x.tar`] = userOwned
	f, err := Audit(defaultTargets(t), h.Host(""), Adopting)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range f {
		got = append(got, x.Path)
	}
	if want := []string{`C:\etc\kubeedge\images`, `C:\etc\kubeedge\upgrade\v9.9.9`}; !reflect.DeepEqual(got, want) {
		t.Errorf("findings at %v, want %v", got, want)
	}
}

// Pod volumes hold what workloads wrote, owned by a container's virtual
// account or by a HostProcess pod's, with the links the kubelet makes:
// never refused, never re-owned or re-permissioned. The pods' own folders
// and pod logs are judged when the node adopts a folder, not at every
// start of a node whose kubelet root is intact; a root that drifted is
// judged whole at start.
func TestWorkloadFilesAreNeitherJudgedNorReowned(t *testing.T) {
	h := nodeHost(inheritsC)
	if _, err := Enforce(defaultTargets(t), h.Host(SystemSIDForTest), Adopting); err != nil {
		t.Fatalf("Enforce over pod volumes = %v", err)
	}
	for p, want := range map[string]string{
		`c:\var\lib\kubelet\pods\uid-1\volumes\kubernetes.io~empty-dir\data\out.txt`: containerOwned,
		`c:\var\lib\kubelet\pods\uid-1\containers\web\0a1b2c`:                        containerOwned,
		`c:\var\lib\kubelet\plugins\kubernetes.io\csi\driver\0123\vol_data.json`:     userOwned,
		`c:\var\lib\kubelet\pods\uid-1\plugins\kubernetes.io~empty-dir\data\ready`:   restricted,
		`c:\var\lib\kubelet\volumeplugins\vendor~driver\driver.exe`:                  restricted,
	} {
		if got := h.sddl[p]; got != want {
			t.Errorf("%s after Enforce: %s, want %s", p, got, want)
		}
	}

	// A pod folder's own entry a user planted: found when adopting, and
	// at a start whose kubelet root drifted; not read at a start on an
	// intact root.
	planted := `C:\var\lib\kubelet\pods\uid-1\etc-hosts`
	for _, c := range []struct {
		root    string
		m       Moment
		refused bool
	}{{restricted, Adopting, true}, {restricted, Starting, false}, {inheritsC, Starting, true}} {
		h := nodeHost(c.root)
		owned(h, planted)
		h.sddl[`c:\var\log\pods\default_web_uid-1\web\1.log`] = userOwned
		f, err := Audit(defaultTargets(t), h.Host(SystemSIDForTest), c.m)
		if err != nil {
			t.Fatal(err)
		}
		err = Refused(f)
		if got := err != nil && strings.Contains(err.Error(), planted); got != c.refused {
			t.Errorf("root %s, moment %d: refused %v (%v), want %v", c.root, c.m, got, err, c.refused)
		}
		if got := err != nil && strings.Contains(err.Error(), `1.log`); got != c.refused {
			t.Errorf("root %s, moment %d: pod log refused %v (%v), want %v", c.root, c.m, got, err, c.refused)
		}
	}
}

// A start reads only what the node reads, trusts or runs: nothing of the
// pods' folders or the pod logs.
func TestAStartDoesNotReadThePodsFolders(t *testing.T) {
	h := nodeHost(restricted)
	listed := map[string]bool{}
	hh := h.Host(SystemSIDForTest)
	inner := hh.List
	hh.List = func(dir string) ([]acl.Entry, error) {
		listed[dir] = true
		return inner(dir)
	}
	if _, err := Audit(defaultTargets(t), hh, Starting); err != nil {
		t.Fatal(err)
	}
	for dir := range listed {
		if ospath.Within(config.Windows, `C:\var\lib\kubelet\pods`, dir) || ospath.Within(config.Windows, `C:\var\log\pods`, dir) {
			t.Errorf("a start listed %s", dir)
		}
	}
	for _, want := range []string{`C:\etc\kubeedge\upgrade`, `C:\var\lib\kubelet\volumeplugins\vendor~driver`, `C:\var\lib\kubeedge`} {
		if !listed[want] {
			t.Errorf("a start did not judge %s; listed %v", want, listed)
		}
	}
}

// The walk is bounded in depth and entries, and says where it stopped.
func TestTheWalkIsBounded(t *testing.T) {
	h := nodeHost(restricted)
	deep := `C:\etc\kubeedge\upgrade`
	for i := 0; i < MaxDepth+2; i++ {
		deep += fmt.Sprintf(`\d%d`, i)
	}
	h.sddl[strings.ToLower(deep)] = inherited
	_, err := Enforce(defaultTargets(t), h.Host(""), Starting)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("has folders more than %d levels below C:\\etc\\kubeedge", MaxDepth)) {
		t.Errorf("a tree %d levels deep: %v", MaxDepth+2, err)
	}

	// A folder of more entries than the bound, listed at once.
	h = nodeHost(restricted)
	hh := h.Host("")
	inner := hh.List
	hh.List = func(dir string) ([]acl.Entry, error) {
		if dir != `C:\var\log\kubeedge` {
			return inner(dir)
		}
		out := make([]acl.Entry, MaxEntries+1)
		for i := range out {
			out[i] = acl.Entry{Name: fmt.Sprintf("f%06d.log", i), Security: acl.Security{Owner: "SY"}, Links: 1}
		}
		return out, nil
	}
	_, err = Enforce(defaultTargets(t), hh, Starting)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`C:\var\log\kubeedge (in C:\var\log\kubeedge, edgecore's logs, panic log and stack dumps) holds more than %d entries`, MaxEntries)) {
		t.Errorf("a folder of %d entries: %v", MaxEntries+1, err)
	}
}

// Windows' own folders, wherever the host keeps them, and folders of
// other computers are refused for every node folder.
func TestTargetsRefuseEveryFolderOfWindows(t *testing.T) {
	onD := config.Host{GOOS: config.Windows, Hostname: "EDGE-1", NodeIP: "192.168.1.20", SystemDrive: "D:", SystemRoot: `D:\WINDOWS`,
		ProgramFiles: `D:\Program Files`, ProgramFilesX86: `D:\Program Files (x86)`, ProgramData: `D:\ProgramData`, Public: `D:\Users\Public`}
	for _, c := range []struct {
		host config.Host
		root string
		why  string
	}{
		{winHost, `C:\Program Files\Common Files\kubelet`, `a folder below C:\Program Files, which holds the programs of every account`},
		{winHost, `C:\Program Files (x86)\kubelet`, `a folder below C:\Program Files (x86)`},
		{winHost, `C:\ProgramData\Microsoft\Crypto\RSA\MachineKeys`, `a folder below C:\ProgramData\Microsoft, which holds Windows' machine-wide data`},
		{winHost, `C:\ProgramData\Microsoft`, `C:\ProgramData\Microsoft, which holds`},
		{winHost, `C:\Users\Default\kubelet`, `a folder below C:\Users, which holds the user profiles`},
		{winHost, `C:\Users\Public\kubelet`, `a folder below C:\Users`},
		{winHost, `c:\users\bob\AppData\kubelet`, `a folder below C:\Users`},
		{winHost, `\\server\share\kubelet`, `a folder on a file share or an administrative share (\\server\share\kubelet)`},
		{winHost, `\\localhost\ADMIN$\System32`, `an administrative share (\\localhost\ADMIN$\System32)`},
		{winHost, `\\?\UNC\127.0.0.1\c$\var\lib\kubelet`, `(\\127.0.0.1\c$\var\lib\kubelet)`},
		{winHost, `\\.\UNC\localhost\c$\kubelet`, `a file share`},
		{onD, `D:\WINDOWS\Temp\kubelet`, `a directory of Windows`},
		{onD, `D:\Program Files\kubelet`, `a folder below D:\Program Files`},
		{onD, `D:\ProgramData\Microsoft\Windows Defender\kubelet`, `a folder below D:\ProgramData\Microsoft`},
		{onD, `D:\Users\Public\kubelet`, `a folder below D:\Users`},
	} {
		c2, err := config.Sample(config.KindDefault, c.host)
		if err != nil {
			t.Fatal(err)
		}
		c2.Modules.Edged.RootDirectory = c.root
		_, err = Targets(c2, config.NewLayout(c.host), "")
		if err == nil || !strings.Contains(err.Error(), "modules.edged.rootDirectory: "+c.root+" is ") ||
			!strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "fix:") {
			t.Errorf("rootDirectory %s: %v, want a refusal saying %q", c.root, err, c.why)
		}
	}
	// Folders of programs of their own are the node's to take.
	for _, root := range []string{`C:\ProgramData\kubelet`, `D:\Program Files\kubelet`, `C:\UsersData\kubelet`} {
		c, _ := config.Sample(config.KindDefault, winHost)
		c.Modules.Edged.RootDirectory = root
		if _, err := Targets(c, config.NewLayout(winHost), ""); err != nil {
			t.Errorf("rootDirectory %s: %v", root, err)
		}
	}
	// --log-file names no field: the refusal names what the folder holds.
	l := config.NewLayout(winHost)
	l.LogDir = `C:\Users\Public`
	if _, err := Targets(nil, l, ""); err == nil || !strings.Contains(err.Error(), `edgecore's logs, panic log and stack dumps: C:\Users\Public is a folder below C:\Users`) {
		t.Errorf("log directory in C:\\Users\\Public: %v", err)
	}
}

// foreignHost is a node whose kubelet root the configuration puts in
// D:\data, with the parents an administrator made.
func foreignHost(t *testing.T, data map[string]string) (*host, []Target) {
	t.Helper()
	c, err := config.Sample(config.KindDefault, winHost)
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.Edged.RootDirectory = `D:\data`
	l := config.NewLayout(winHost)
	ts, err := Targets(c, l, "")
	if err != nil {
		t.Fatal(err)
	}
	h := aHost(restricted)
	h.sddl[`d:\`] = "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)"
	for p, s := range data {
		h.sddl[strings.ToLower(p)] = s
	}
	return h, ts
}

// A folder outside the node's layout that exists must be new to the node
// in a way a user cannot fake: empty, made by the node (recorded with its
// identity), or restricted already.
func TestAFolderOutsideTheLayoutMustBeTheNodes(t *testing.T) {
	other := "O:BAD:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)"
	h, ts := foreignHost(t, map[string]string{`D:\data`: other, `D:\data\app.db`: other})
	hh := h.Host("")
	hh.Record = `C:\etc\kubeedge\acl-record.json`
	_, err := Enforce(ts, hh, Starting)
	if err == nil || !strings.Contains(err.Error(), `D:\data (the directory of modules.edged.rootDirectory) is a folder that existed before edgecore, which did not make it, and holds 1 entries (app.db first)`) ||
		!strings.Contains(err.Error(), "give modules.edged.rootDirectory a new folder or an empty one") {
		t.Errorf("Enforce over another program's folder = %v", err)
	}
	if len(h.restricted) != 0 {
		t.Errorf("restricted %v", h.restricted)
	}

	// Holding only the node's own configuration: the node's to take.
	c, _ := config.Sample(config.KindDefault, winHost)
	c.DataBase.DataSource = `D:\node\edgecore.db`
	withConfig, err := Targets(c, config.NewLayout(winHost), "", ConfigFiles(`D:\node\edgecore.yaml`, `D:\node\upgrade.yaml`)...)
	if err != nil {
		t.Fatal(err)
	}
	h, _ = foreignHost(t, map[string]string{`D:\node`: other, `D:\node\edgecore.yaml`: restricted, `D:\node\upgrade.yaml`: restricted})
	if _, err := Enforce(withConfig, h.Host(""), Starting); err != nil {
		t.Errorf("Enforce over a folder holding only the node's configuration = %v", err)
	}
	// Taken over, it is the node's: a later start that finds the database
	// there, on a volume that kept no ACL, takes it again.
	hh = h.Host("")
	hh.Record = `C:\etc\kubeedge\acl-record.json`
	h.set(`D:\node`, other)
	if _, err := Enforce(withConfig, hh, Adopting); err != nil {
		t.Fatal(err)
	}
	h.set(`D:\node`, other)
	h.set(`D:\node\edgecore.db`, inherited)
	if _, err := Enforce(withConfig, hh, Starting); err != nil {
		t.Errorf("a start over the folder the node took = %v", err)
	}
	h, _ = foreignHost(t, map[string]string{`D:\node`: other, `D:\node\edgecore.yaml`: restricted, `D:\node\upgrade.yaml`: restricted})
	h.set(`D:\node\app.db`, other)
	if _, err := Enforce(withConfig, h.Host(""), Starting); err == nil || !strings.Contains(err.Error(), "holds 1 entries (app.db first)") {
		t.Errorf("Enforce over a folder holding the configuration and another file = %v", err)
	}

	// Restricted already (an earlier node): the node's.
	h, ts = foreignHost(t, map[string]string{`D:\data`: restricted, `D:\data\pods\x\etc-hosts`: inherited})
	if _, err := Enforce(ts, h.Host(""), Starting); err != nil {
		t.Errorf("Enforce over a restricted folder = %v", err)
	}

	// Made by the node, then loosened: the node's while it is the folder
	// the node made; one made again at the same path is not.
	h, ts = foreignHost(t, nil)
	hh = h.Host("")
	hh.Record = `C:\etc\kubeedge\acl-record.json`
	if _, err := Create(config.Windows, ts, `D:\data`, hh); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.written[`c:\etc\kubeedge\acl-record.json`], `"path": "D:\\data"`) {
		t.Errorf("record after Create: %q", h.written[`c:\etc\kubeedge\acl-record.json`])
	}
	h.sddl[`d:\data`] = other
	h.sddl[`d:\data\pods\x\etc-hosts`] = inherited
	if _, err := Enforce(ts, hh, Starting); err != nil {
		t.Errorf("Enforce over the folder the node made = %v", err)
	}
	h.sddl[`d:\data`] = other
	h.ids[`d:\data`] = "made again"
	if _, err := Enforce(ts, hh, Starting); err == nil || !strings.Contains(err.Error(), "which did not make it") {
		t.Errorf("Enforce over a folder made again at the node's path = %v", err)
	}
}

// The owner and DACL of a folder that existed before the node restricted
// it are recorded first, and given back when no configuration names it
// any more and it is empty; while it holds what the node wrote there it
// keeps the node's ACL, and the record, with the command that restores it.
func TestTheACLOfAnExistingFolderIsRecordedAndRestored(t *testing.T) {
	const record = `C:\etc\kubeedge\acl-record.json`
	other := "O:BAD:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)"
	h, ts := foreignHost(t, map[string]string{`D:\data`: other})
	hh := h.Host(SystemSIDForTest)
	hh.Record = record
	if _, err := Enforce(ts, hh, Adopting); err != nil {
		t.Fatal(err)
	}
	rec := h.written[strings.ToLower(record)]
	if !strings.Contains(rec, `"path": "D:\\data"`) || !strings.Contains(rec, `"sddl": "`+other+`"`) {
		t.Fatalf("record = %s", rec)
	}
	if h.sddl[`d:\data`] != restricted {
		t.Fatalf("D:\\data not restricted: %s", h.sddl[`d:\data`])
	}
	// Restricting it again records nothing new: the first record is
	// what it had before the node.
	h.sddl[`d:\data`] = inheritsC
	if _, err := Enforce(ts, hh, Starting); err != nil || h.written[strings.ToLower(record)] != rec {
		t.Errorf("second Enforce = %v, record %s", err, h.written[strings.ToLower(record)])
	}

	// Still named by the configuration: kept.
	if r, err := RestoreRecorded(hh, ts); err != nil || len(r) != 0 || len(h.restored) != 0 {
		t.Errorf("RestoreRecorded while configured = %v, %v, %v", r, err, h.restored)
	}
	// Undone while the kubelet wrote there: kept, and said.
	c, _ := config.Sample(config.KindDefault, winHost)
	back, err := Targets(c, config.NewLayout(winHost), "")
	if err != nil {
		t.Fatal(err)
	}
	h.sddl[`d:\data\pods\uid\volumes\kubernetes.io~secret\token\token`] = inherited
	r, err := RestoreRecorded(hh, back)
	if err != nil || len(r) != 1 || r[0].Kept == "" || len(h.restored) != 0 {
		t.Fatalf("RestoreRecorded of a folder the kubelet wrote to = %v, %v, %v", r, err, h.restored)
	}
	for _, want := range []string{`D:\data keeps the node's access control list`, "holds 1 entries (pods)", "Secrets",
		`$a.SetSecurityDescriptorSddlForm('` + other + `')`} {
		if !strings.Contains(r[0].String(), want) {
			t.Errorf("%q does not say %q", r[0], want)
		}
	}
	// Emptied: given back, and forgotten.
	for p := range h.sddl {
		if strings.HasPrefix(p, `d:\data\`) {
			delete(h.sddl, p)
		}
	}
	r, err = RestoreRecorded(hh, back)
	if err != nil || len(r) != 1 || r[0].Kept != "" || !reflect.DeepEqual(h.restored, []string{`D:\data ` + other}) {
		t.Fatalf("RestoreRecorded of the emptied folder = %v, %v, %v", r, err, h.restored)
	}
	if strings.Contains(h.written[strings.ToLower(record)], "D:") {
		t.Errorf("record after the restore: %s", h.written[strings.ToLower(record)])
	}
	if r, err := RestoreRecorded(hh, back); err != nil || len(r) != 0 {
		t.Errorf("a second RestoreRecorded = %v, %v", r, err)
	}
}

// A record no one could have written in edgecore's form is refused with
// its fix, not guessed at.
func TestARecordEdgecoreDidNotWriteIsRefused(t *testing.T) {
	h := aHost(restricted)
	hh := h.Host("")
	hh.Record = `C:\etc\kubeedge\acl-record.json`
	h.written[`c:\etc\kubeedge\acl-record.json`] = "{not json"
	_, err := Audit(defaultTargets(t), hh, Starting)
	if err == nil || !strings.Contains(err.Error(), "is not what edgecore writes") || !strings.Contains(err.Error(), "fix:") {
		t.Errorf("Audit with a broken record = %v", err)
	}
}

// A settings file is judged when it is read: its owner, who may change
// it, and who may rename its folders.
func TestCheckFileJudgesOwnerAndWriters(t *testing.T) {
	const settings = `D:\node\upgrade.yaml`
	for _, c := range []struct {
		name, folder, file, want string
	}{
		{"administrators only", restricted, restricted, ""},
		{"owned by a user", restricted, userOwned, "is owned by " + userSID},
		{"writable by Users", restricted, "O:BAD:(A;;FA;;;BA)(A;;FW;;;BU)", `BUILTIN\Users may change or delete (FW)`},
		{"in a folder others may rename", inheritsC, restricted, `icacls "D:\node" /inheritance:d`},
	} {
		h := newHost(map[string]string{`D:\`: restricted, `D:\node`: c.folder, settings: c.file})
		err := CheckFile(config.Windows, h.Host(""), "the upgrade settings", settings)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := CheckFile(config.Linux, Host{}, "settings", "/etc/kubeedge/config/upgrade.yaml"); err != nil {
		t.Errorf("Linux: %v", err)
	}
}

// A folder the node made outside its layout is never recorded as one to
// give back, even when its ACL reads as something else later (Wine makes
// one up from the Unix mode; a FAT volume keeps none).
func TestAFolderTheNodeMadeIsNotRecordedAsChanged(t *testing.T) {
	const record = `C:\etc\kubeedge\acl-record.json`
	h, ts := foreignHost(t, nil)
	h.keeps = false
	hh := h.Host(SystemSIDForTest)
	hh.Record = record
	if _, err := Create(config.Windows, ts, `D:\data`, hh); err != nil {
		t.Fatal(err)
	}
	h.set(`D:\data`, inheritsC)
	if _, err := Enforce(ts, hh, Adopting); err != nil {
		t.Fatal(err)
	}
	rec := h.written[strings.ToLower(record)]
	if strings.Contains(rec, "changed") || !strings.Contains(rec, `"path": "D:\\data"`) {
		t.Errorf("record = %s, want D:\\data made and nothing changed", rec)
	}
}

// cniHost is a host with containerd's CNI folders where the guides put
// them, made by an administrator and only changeable by administrators,
// holding what an administrator copied there.
func cniHost() *host {
	h := newHost(map[string]string{
		`C:\opt`: restricted, `C:\opt\cni`: restricted, `C:\opt\cni\bin`: restricted,
		`C:\opt\cni\bin\win-bridge.exe`: inherited, `C:\opt\cni\bin\host-local.exe`: inherited,
	})
	h.files[`c:\opt\cni\bin\win-bridge.exe`] = true
	h.files[`c:\opt\cni\bin\host-local.exe`] = true
	return h
}

var cniTarget = Target{What: "a CNI plugin folder", Path: `C:\opt\cni\bin`, Input: true, Tree: true}

// An Input Tree (containerd's CNI plugin and configuration folders, whose
// every entry runs as SYSTEM or chooses what does) is judged entry by
// entry, like a restricted folder, and, since nothing restricts it, an
// entry others may change is refused too; what administrators own passes.
// An Input folder without Tree (containerd's root, with its layers) is
// judged by itself and its parents only.
func TestAnInputTreeIsJudgedEntryByEntry(t *testing.T) {
	if f, err := Audit([]Target{cniTarget}, cniHost().Host(SystemSIDForTest), Starting); err != nil || len(f) != 0 {
		t.Fatalf("admin-made CNI folder: Audit = %v, %v; want nothing", f, err)
	}
	plugin := `C:\opt\cni\bin\win-bridge.exe`
	for _, c := range []struct {
		name  string
		plant func(h *host)
		want  []string
	}{
		{"a plugin a user put there", func(h *host) { owned(h, plugin) },
			[]string{plugin + " (in C:\\opt\\cni\\bin, a CNI plugin folder) is owned by " + userSID, `takeown /F "` + plugin + `" /A`}},
		{"a plugin users may overwrite", func(h *host) { h.set(plugin, inherited+"(A;;0x1301bf;;;BU)") },
			[]string{plugin + " (in C:\\opt\\cni\\bin, a CNI plugin folder) may be changed by others: BUILTIN\\Users may change or delete", `icacls "` + plugin + `" /remove:g *S-1-5-32-545`}},
		{"a plugin that is a symbolic link", func(h *host) { h.reparse[strings.ToLower(plugin)] = acl.ReparseTagSymlink },
			[]string{plugin + " (in C:\\opt\\cni\\bin, a CNI plugin folder) is a symbolic link", `cmd /c del "` + plugin + `"`}},
		{"a plugin with a second name", func(h *host) { h.links[strings.ToLower(plugin)] = 2 },
			[]string{"is a file with 2 names (hard links)", `fsutil hardlink list "` + plugin + `"`}},
		{"a folder of plugins a user made", func(h *host) { ownedDir(h, `C:\opt\cni\bin\extra`) },
			[]string{`C:\opt\cni\bin\extra (in C:\opt\cni\bin, a CNI plugin folder) is owned by ` + userSID}},
	} {
		h := cniHost()
		c.plant(h)
		err := Check([]Target{cniTarget}, h.Host(SystemSIDForTest), Starting)
		var refused *RefusedError
		if !errors.As(err, &refused) || len(refused.Findings) != 1 {
			t.Errorf("%s: Check = %v, want one refusal", c.name, err)
			continue
		}
		for _, want := range c.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: refusal %q does not say %q", c.name, err, want)
			}
		}
		// The same folder as a plain Input target is not walked.
		plain := cniTarget
		plain.Tree = false
		if f, err := Audit([]Target{plain}, h.Host(SystemSIDForTest), Starting); err != nil || len(f) != 0 {
			t.Errorf("%s: an Input folder without Tree was walked: %v, %v", c.name, f, err)
		}
		if len(h.restricted) != 0 {
			t.Errorf("%s: restricted %v", c.name, h.restricted)
		}
	}
}
