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
		{linux, "/var//lib/./kubeedge/", "/var/lib/kubeedge"},
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
		{linux, "/etc/kubeedge/", "/etc/kubeedge", true},
		{linux, "/etc/kubeedge", "/etc/KubeEdge", false},
	} {
		if got := Same(tc.goos, tc.a, tc.b); got != tc.want {
			t.Errorf("Same(%s, %q, %q) = %v, want %v", tc.goos, tc.a, tc.b, got, tc.want)
		}
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
		// Not device names.
		{Windows, `C:\var\lib\COM10\CONSOLE\nul1\lpt\auxiliary`, ""},
		// The drive's colon is not part of a name; a second one is.
		{Windows, `C:\a\C:\b`, "C:"},
		{"linux", `/var/lib/a:b/<c>|*?`, ""},
		{"linux", "/var/lib/a\x00b", "a\x00b"},
	} {
		name, why := BadName(tc.goos, tc.p)
		if name != tc.name {
			t.Errorf("BadName(%s, %q) = %q (%s), want %q", tc.goos, tc.p, name, why, tc.name)
		}
		if name != "" && why == "" {
			t.Errorf("BadName(%s, %q): no reason", tc.goos, tc.p)
		}
	}
}
