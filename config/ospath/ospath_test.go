package ospath

import (
	"reflect"
	"testing"
)

const linux = "linux"

func TestIsAbs(t *testing.T) {
	for _, tc := range []struct {
		goos, p string
		want    bool
	}{
		{Windows, `C:\etc\kubeedge\config\edgecore.yaml`, true},
		{Windows, `C:/etc/kubeedge/config/edgecore.yaml`, true},
		{Windows, `c:\x`, true},
		{Windows, `C:\`, true},
		{Windows, `d:/`, true},
		{Windows, `\\server\share\x`, true},
		{Windows, `\\server\share`, true},
		{Windows, `//server/share/x`, true},
		{Windows, `\\.\pipe\containerd-containerd`, true},
		// Relative to the current drive, or to drive C's current
		// directory: a service would resolve both from System32.
		{Windows, `\x`, false},
		{Windows, `/etc/kubeedge`, false},
		{Windows, `C:x`, false},
		{Windows, `C:`, false},
		{Windows, `\\server`, false},
		{Windows, `\\server\`, false},
		{Windows, `\\\x`, false},
		{Windows, `edgecore.yaml`, false},
		{Windows, `.\edgecore.yaml`, false},
		{Windows, `1:\x`, false},
		{Windows, ``, false},
		{linux, "/etc/kubeedge", true},
		{linux, "/", true},
		{linux, "etc/kubeedge", false},
		{linux, `C:\etc`, false},
		{linux, `C:/etc`, false},
		{linux, ``, false},
	} {
		if got := IsAbs(tc.goos, tc.p); got != tc.want {
			t.Errorf("IsAbs(%s, %q) = %v, want %v", tc.goos, tc.p, got, tc.want)
		}
	}
}

func TestClean(t *testing.T) {
	for _, tc := range []struct{ goos, in, want string }{
		{Windows, `C:/etc/kubeedge/config/edgecore.yaml`, `C:\etc\kubeedge\config\edgecore.yaml`},
		{Windows, `c:\\etc\\kubeedge\\`, `C:\etc\kubeedge`},
		{Windows, `C:\var/lib\\/x`, `C:\var\lib\x`},
		{Windows, `C:\etc\kubeedge\..\x`, `C:\etc\x`},
		{Windows, `C:\..\..\x`, `C:\x`},
		{Windows, `C:\.\x\.`, `C:\x`},
		{Windows, `C:\`, `C:\`},
		{Windows, `c:/`, `C:\`},
		{Windows, `C:`, `C:`},
		{Windows, `c:x\..\y`, `C:y`},
		{Windows, `\\server\share\x\`, `\\server\share\x`},
		{Windows, `//server/share/x`, `\\server\share\x`},
		{Windows, `\\server\share\`, `\\server\share`},
		{Windows, `\\server\share\..`, `\\server\share`},
		{Windows, `\\server`, `\\server`},
		{Windows, `\x\`, `\x`},
		{Windows, `certs/server.crt`, `certs\server.crt`},
		{Windows, `.\certs\..\..\x`, `..\x`},
		{Windows, ``, `.`},
		// Device-path prefixes: the drive or share path they name.
		{Windows, `\\?\C:\x`, `C:\x`},
		{Windows, `\\?\c:\`, `C:\`},
		{Windows, `\\.\C:\x\`, `C:\x`},
		{Windows, `//?/C:/x`, `C:\x`},
		{Windows, `\??\C:\x`, `C:\x`},
		{Windows, `\\?\UNC\server\share\x`, `\\server\share\x`},
		{Windows, `\\?\unc\server\share`, `\\server\share`},
		// Other device paths stay devices, spelled \\.\.
		{Windows, `\\?\pipe\x`, `\\.\pipe\x`},
		{Windows, `\\.\PhysicalDrive0`, `\\.\PhysicalDrive0`},
		{Windows, `\\?\C:`, `\\.\C:`},
		// Trailing dots and spaces of every name, not of . and ...
		{Windows, `C:\Windows.\System32\kl`, `C:\Windows\System32\kl`},
		{Windows, `C:\Windows \System32\kl`, `C:\Windows\System32\kl`},
		{Windows, `C:\Windows. . \System32...\kl `, `C:\Windows\System32\kl`},
		{Windows, `C:\var\lib.\..\x`, `C:\var\x`},
		{Windows, `C:\var\kubeedge\edgecore.db.`, `C:\var\kubeedge\edgecore.db`},
		{Windows, ` x \y`, ` x\y`},
		// Names of dots and spaces only are kept for BadName to refuse.
		{Windows, `C:\var\...\x`, `C:\var\...\x`},
		{Windows, `C:\var\ \x`, `C:\var\ \x`},
		{linux, "/var//lib/./kubeedge/", "/var/lib/kubeedge"},
		{linux, "/var/lib./x ", "/var/lib./x "},
		{linux, "/../x", "/x"},
		{linux, `C:\x`, `C:\x`},
		{linux, "", "."},
	} {
		got := Clean(tc.goos, tc.in)
		if got != tc.want {
			t.Errorf("Clean(%s, %q) = %q, want %q", tc.goos, tc.in, got, tc.want)
		}
		if again := Clean(tc.goos, got); again != got {
			t.Errorf("Clean(%s, %q) is not idempotent: %q", tc.goos, got, again)
		}
	}
}

func TestJoin(t *testing.T) {
	for _, tc := range []struct {
		goos string
		elem []string
		want string
	}{
		{Windows, []string{"C:", "etc", "kubeedge"}, `C:\etc\kubeedge`},
		{Windows, []string{`C:\`, "var"}, `C:\var`},
		{Windows, []string{`D:\Program Files\`, "containerd", `cni\conf`}, `D:\Program Files\containerd\cni\conf`},
		{Windows, []string{`C:\etc\kubeedge`, "", "ca", "rootCA.crt"}, `C:\etc\kubeedge\ca\rootCA.crt`},
		{Windows, []string{`\\server\share`, "x"}, `\\server\share\x`},
		{Windows, nil, ``},
		{linux, []string{"/", "etc", "kubeedge"}, "/etc/kubeedge"},
		{linux, []string{"/var/log/", "kubeedge", "edgecore.log"}, "/var/log/kubeedge/edgecore.log"},
	} {
		if got := Join(tc.goos, tc.elem...); got != tc.want {
			t.Errorf("Join(%s, %q) = %q, want %q", tc.goos, tc.elem, got, tc.want)
		}
	}
}

func TestDir(t *testing.T) {
	for _, tc := range []struct{ goos, in, want string }{
		{Windows, `C:\var\lib\kubeedge\edgecore.db`, `C:\var\lib\kubeedge`},
		{Windows, `C:/var/lib/kubeedge/edgecore.db`, `C:/var/lib/kubeedge`},
		{Windows, `C:\var\\edgecore.db`, `C:\var`},
		{Windows, `C:\edgecore.db`, `C:\`},
		{Windows, `C:\`, `C:\`},
		{Windows, `C:x`, `C:`},
		{Windows, `\\server\share\x`, `\\server\share`},
		{Windows, `\\server\share`, `\\server\share`},
		{Windows, `\x`, `\`},
		{Windows, `edgecore.db`, `.`},
		{linux, "/var/lib/kubeedge/edgecore.db", "/var/lib/kubeedge"},
		{linux, "/edgecore.db", "/"},
		{linux, "/", "/"},
		{linux, `C:\var\edgecore.db`, "."},
	} {
		if got := Dir(tc.goos, tc.in); got != tc.want {
			t.Errorf("Dir(%s, %q) = %q, want %q", tc.goos, tc.in, got, tc.want)
		}
	}
}

func TestBase(t *testing.T) {
	for _, tc := range []struct{ goos, in, want string }{
		{Windows, `C:\etc\kubeedge\backup\v0.1.0`, `v0.1.0`},
		{Windows, `C:/etc/kubeedge/backup/v0.1.0/`, `v0.1.0`},
		{Windows, `C:\`, ``},
		{Windows, `C:x`, `x`},
		{Windows, `\\server\share`, ``},
		{Windows, `\\server\share\x`, `x`},
		{Windows, `edgecore.db`, `edgecore.db`},
		{linux, "/var/lib/kubeedge/edgecore.db", "edgecore.db"},
		{linux, "/", ""},
	} {
		if got := Base(tc.goos, tc.in); got != tc.want {
			t.Errorf("Base(%s, %q) = %q, want %q", tc.goos, tc.in, got, tc.want)
		}
		if tc.want != "" && tc.in == Clean(tc.goos, tc.in) && IsAbs(tc.goos, tc.in) && Join(tc.goos, Dir(tc.goos, tc.in), Base(tc.goos, tc.in)) != tc.in {
			t.Errorf("Join(Dir, Base) of %q is not the path", tc.in)
		}
	}
}

func TestAncestors(t *testing.T) {
	for _, tc := range []struct {
		goos, p string
		want    []string
	}{
		{Windows, `C:\var\lib\kubeedge`, []string{`C:\var\lib\kubeedge`, `C:\var\lib`, `C:\var`, `C:\`}},
		{Windows, `\\server\share\logs\edge`, []string{`\\server\share\logs\edge`, `\\server\share\logs`, `\\server\share`}},
		{Windows, `logs\edge`, []string{`logs\edge`, `logs`}},
		{linux, "/var/lib/kubeedge", []string{"/var/lib/kubeedge", "/var/lib", "/var", "/"}},
	} {
		if got := Ancestors(tc.goos, tc.p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Ancestors(%s, %q) = %q, want %q", tc.goos, tc.p, got, tc.want)
		}
	}
}

func TestSame(t *testing.T) {
	for _, tc := range []struct {
		goos, a, b string
		want       bool
	}{
		{Windows, `C:\etc\kubeedge`, `c:/ETC/KubeEdge/`, true},
		{Windows, `C:\etc\kubeedge\config\..`, `C:\etc\kubeedge`, true},
		{Windows, `\\Server\Share\x`, `//server/share/X`, true},
		{Windows, `C:\etc\kubeedge`, `D:\etc\kubeedge`, false},
		{Windows, `C:\etc\kubeedge`, `C:\etc\kubeedge-old`, false},
		// Every spelling of C:\Windows\System32.
		{Windows, `C:\Windows\System32`, `C:\Windows.\System32`, true},
		{Windows, `C:\Windows\System32`, `C:\Windows \System32`, true},
		{Windows, `C:\Windows\System32`, `C:\Windows\System32. .`, true},
		{Windows, `C:\Windows\System32`, `\\?\C:\Windows\System32`, true},
		{Windows, `C:\Windows\System32`, `\\.\c:\windows\system32`, true},
		{Windows, `C:\Windows\System32`, `//?/C:/Windows/System32`, true},
		{Windows, `C:\Windows\System32`, `C:/Windows\System32/`, true},
		{Windows, `C:\Windows\System32`, `c:\WINDOWS\system32`, true},
		{Windows, `\\server\share\x`, `\\?\UNC\server\share\x`, true},
		// What cannot be made canonical without the disk stays apart,
		// for BadName to refuse: a short name, a stream, a device.
		{Windows, `C:\Windows\System32`, `C:\WINDOW~1\System32`, false},
		{Windows, `C:\Windows`, `C:\Windows::$INDEX_ALLOCATION`, false},
		{Windows, `C:\Windows`, `\\.\HarddiskVolume1\Windows`, false},
		{Windows, `C:\x`, `\\?\C:x`, false},
		// Upper case as NTFS has it: the Kelvin sign is not K.
		{Windows, `C:\k`, "C:\\\u212a", false},
		{Windows, `C:\é`, `C:\É`, true},
		{linux, "/etc/kubeedge/", "/etc/kubeedge", true},
		{linux, "/etc/kubeedge.", "/etc/kubeedge", false},
		{linux, "/etc/kubeedge", "/etc/KubeEdge", false},
	} {
		if got := Same(tc.goos, tc.a, tc.b); got != tc.want {
			t.Errorf("Same(%s, %q, %q) = %v, want %v", tc.goos, tc.a, tc.b, got, tc.want)
		}
	}
}

func TestAppendNew(t *testing.T) {
	var dirs []string
	for _, d := range []string{`C:\etc\kubeedge`, `c:/ETC/kubeedge.`, `C:\var\lib\kubeedge`, `C:\etc\kubeedge\`} {
		dirs = AppendNew(Windows, dirs, d)
	}
	if want := []string{`C:\etc\kubeedge`, `C:\var\lib\kubeedge`}; !reflect.DeepEqual(dirs, want) {
		t.Errorf("Windows: %q, want %q (the first spelling of each file)", dirs, want)
	}
	if got := AppendNew(linux, []string{"/etc/kubeedge"}, "/etc/KubeEdge"); len(got) != 2 {
		t.Errorf("Linux names differ by case: %q", got)
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		goos, dir, p string
		want         bool
	}{
		{Windows, `C:\etc\kubeedge`, `C:\etc\kubeedge\config\edgecore.yaml`, true},
		{Windows, `C:\etc\kubeedge`, `C:/etc/kubeedge/config/edgecore.yaml`, true},
		{Windows, `C:\etc\kubeedge`, `c:\ETC\KubeEdge\certs\server.key`, true},
		{Windows, `C:\etc\kubeedge`, `C:\etc\kubeedge`, true},
		{Windows, `C:\etc\kubeedge\`, `C:\etc\kubeedge\x`, true},
		{Windows, `C:\etc\kubeedge`, `C:\etc\kubeedge-old\edgecore.yaml`, false},
		{Windows, `C:\etc\kubeedge`, `C:\etc\kubeedge\..\edgecore.yaml`, false},
		{Windows, `C:\etc\kubeedge`, `D:\etc\kubeedge\x`, false},
		{Windows, `C:\etc\kubeedge`, `C:\etc`, false},
		{Windows, `C:\`, `C:\var`, true},
		{Windows, `\\server\share`, `\\server\share\x`, true},
		{Windows, `C:\etc\kubeedge`, `\\?\C:\etc\kubeedge.\x`, true},
		{Windows, `C:\etc\kubeedge`, `C:\etc\kubeedge \x`, true},
		{Windows, `\\.\C:\etc\kubeedge\`, `c:/etc/KUBEEDGE/x`, true},
		{Windows, `C:\Windows`, `C:\Windows.\System32\kl`, true},
		{Windows, `\\server\share`, `\\?\UNC\server\share\x`, true},
		{Windows, `C:\etc\kubeedge`, `C:\etc\kubeedge.old\x`, false},
		{Windows, `C:\etc\kubeedge`, `C:\etc\KUBEED~1\x`, false},
		{Windows, `C:\etc\kubeedge`, `C:\etc\kubeedge.\..\x`, false},
		{linux, "/etc/kubeedge", "/etc/kubeedge/config/edgecore.yaml", true},
		{linux, "/etc/kubeedge", "/etc/KubeEdge/config/edgecore.yaml", false},
		{linux, "/etc/kubeedge", "/etc/kubeedge-old", false},
		{linux, "/", "/etc", true},
	} {
		if got := Within(tc.goos, tc.dir, tc.p); got != tc.want {
			t.Errorf("Within(%s, %q, %q) = %v, want %v", tc.goos, tc.dir, tc.p, got, tc.want)
		}
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct{ goos, in, want string }{
		{Windows, `\\?\c:/Program Files./edgecore \`, `C:\PROGRAM FILES\EDGECORE`},
		{Windows, `\\?\UNC\Server\Share\x`, `\\SERVER\SHARE\X`},
		{linux, "/var/Lib/", "/var/Lib"},
	} {
		if got := Key(tc.goos, tc.in); got != tc.want {
			t.Errorf("Key(%s, %q) = %q, want %q", tc.goos, tc.in, got, tc.want)
		}
	}
}

func TestSeparator(t *testing.T) {
	if Separator(Windows) != `\` || Separator(linux) != "/" {
		t.Errorf("separators %q %q", Separator(Windows), Separator(linux))
	}
	if !IsSeparator(Windows, '/') || !IsSeparator(Windows, '\\') || IsSeparator(linux, '\\') || !IsSeparator(linux, '/') {
		t.Error("IsSeparator disagrees with the OS rules")
	}
}

func TestBadName(t *testing.T) {
	for _, tc := range []struct {
		goos, p, name string
	}{
		{Windows, `C:\etc\kubeedge\edgecore.db`, ""},
		{Windows, `\\server\share\kube edge\x.db`, ""},
		{Windows, `D:\données\ÿ\日本`, ""},
		{Windows, `C:\var\lib\kube:edge\x.db`, "kube:edge"},
		{Windows, `C:\var\lib\a<b`, "a<b"},
		{Windows, `C:\var\lib\a>b`, "a>b"},
		{Windows, `C:\var\"lib"`, `"lib"`},
		{Windows, `C:\var\lib|x`, "lib|x"},
		{Windows, `C:\var\what?\x`, "what?"},
		{Windows, `C:\var\*\x`, "*"},
		{Windows, "C:\\var\\lib\tx", "lib\tx"},
		{Windows, "C:\\var\\lib\x00x", "lib\x00x"},
		{Windows, "C:\\var\\li\x1bb", "li\x1bb"},
		{Windows, `C:\var\NUL`, "NUL"},
		{Windows, `C:\var\nul\edgecore.db`, "nul"},
		{Windows, `C:\var\lib\con.db`, "con.db"},
		{Windows, `C:\var\lib\Com1`, "Com1"},
		{Windows, `C:\var\lib\LPT9.log`, "LPT9.log"},
		{Windows, `C:\var\lib\AUX .txt`, "AUX .txt"},
		{Windows, `C:\var\lib\prn  `, "prn  "},
		{Windows, `C:\var\lib\com0`, "com0"},
		{Windows, `C:\var\lib\LPT³.log`, "LPT³.log"},
		{Windows, `C:\var\CONIN$`, "CONIN$"},
		{Windows, `C:/var/conout$/x`, "conout$"},
		// Not device names.
		{Windows, `C:\var\lib\COM10\CONSOLE\nul1\lpt\auxiliary`, ""},
		// Alternate data streams, the directory's own included.
		{Windows, `C:\x\y:stream`, "y:stream"},
		{Windows, `C:\Windows::$INDEX_ALLOCATION\System32`, "Windows::$INDEX_ALLOCATION"},
		// Device paths that are not drive or UNC paths; those that are
		// are judged by their names.
		{Windows, `\\.\PhysicalDrive0`, `\\.\PhysicalDrive0`},
		{Windows, `\\.\pipe\containerd-containerd`, `\\.\pipe`},
		{Windows, `//?/Volume{0b1a6a3e-0000-0000-0000-100000000000}/x`, `\\.\Volume{0b1a6a3e-0000-0000-0000-100000000000}`},
		{Windows, `\\?\GLOBALROOT\Device\HarddiskVolume1\x`, `\\.\GLOBALROOT`},
		{Windows, `\\?\C:`, `\\.\C:`},
		{Windows, `\\?\C:\var\lib\kubelet`, ""},
		{Windows, `\\.\C:\var\lib\kubelet`, ""},
		{Windows, `\\?\UNC\server\share\x`, ""},
		{Windows, `\\?\C:\var\NUL`, "NUL"},
		// 8.3 short names: only the disk knows the long name.
		{Windows, `C:\PROGRA~1\edgecore`, "PROGRA~1"},
		{Windows, `C:\window~1\System32`, "window~1"},
		{Windows, `C:\var\KUBEL~12.LOG`, "KUBEL~12.LOG"},
		{Windows, `C:\var\~1`, "~1"},
		// Too long for a short name, or no number after the tilde.
		{Windows, `C:\var\kubelet~1\backup~x\a~1.json\~\x~1.y.z`, ""},
		// Names Win32 trims to nothing.
		{Windows, `C:\var\...\x`, "..."},
		{Windows, `C:\var\. .\x`, ". ."},
		{Windows, `C:\var\ \x`, " "},
		// Trailing dots and spaces are Clean's to drop, not refused.
		{Windows, `C:\Windows.\System32 \x..`, ""},
		// The drive's colon is not part of a name; a second one is.
		{Windows, `C:\a\C:\b`, "C:"},
		{"linux", `/var/lib/a:b/<c>|*?`, ""},
		{"linux", "/var/lib/a\x00b", "a\x00b"},
	} {
		name, why, _ := BadName(tc.goos, tc.p)
		if name != tc.name {
			t.Errorf("BadName(%s, %q) = %q (%s), want %q", tc.goos, tc.p, name, why, tc.name)
		}
		if name != "" && why == "" {
			t.Errorf("BadName(%s, %q): no reason", tc.goos, tc.p)
		}
	}
}
