package config

import "testing"

func TestWindowsPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`C:\var\lib\x`, `C:\var\lib\x`},
		{`C:/var/lib/x`, `C:\var\lib\x`},
		{`c:\\var\\lib\\x`, `C:\var\lib\x`},
		{`/var/lib/x`, `C:\var\lib\x`},
		{`\var\lib\x`, `C:\var\lib\x`},
		{`C:\var/lib\\/x`, `C:\var\lib\x`},
		{`c:\etc\kubeedge\manifests\`, `C:\etc\kubeedge\manifests`},
		{`D:/data//kubelet/`, `D:\data\kubelet`},
		{`C:\`, `C:\`},
		{`C:/`, `C:\`},
		{`\\fileserver\share\certs\ca.crt`, `\\fileserver\share\certs\ca.crt`},
		{`//fileserver/share/ca.crt`, `\\fileserver\share\ca.crt`},
		{`C:\etc\kubeedge\..\x`, `C:\etc\x`},
		{`C:\etc\.\kubeedge`, `C:\etc\kubeedge`},
		{`\\\var\lib`, `C:\var\lib`},
		{`\\fileserver`, `\\fileserver`},
		{`certs\server.crt`, `certs\server.crt`},
		{`certs/server.crt`, `certs\server.crt`},
		{``, ``},
		{`\\?\C:\var\lib\kubelet`, `C:\var\lib\kubelet`},
		{`\??\c:\var\lib\kubelet`, `C:\var\lib\kubelet`},
		{`//?/UNC/fileserver/share/ca.crt`, `\\fileserver\share\ca.crt`},
		{`C:\Windows.\System32 \kl.`, `C:\Windows\System32\kl`},
		{`\\.\PhysicalDrive0`, `\\.\PhysicalDrive0`},
	} {
		if got := WindowsPath(tc.in); got != tc.want {
			t.Errorf("WindowsPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := WindowsPath(WindowsPath(tc.in)); again != WindowsPath(tc.in) {
			t.Errorf("WindowsPath is not idempotent on %q: %q", tc.in, again)
		}
	}
}

func TestPipeName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name string
		ok   bool
	}{
		{"npipe://./pipe/containerd-containerd", "containerd-containerd", true},
		{"npipe:////./pipe/containerd-containerd", "containerd-containerd", true},
		{`\\.\pipe\containerd-containerd`, "containerd-containerd", true},
		{`//./pipe/containerd-containerd`, "containerd-containerd", true},
		{`NPIPE://./PIPE/docker_engine`, "docker_engine", true},
		{"unix:///run/containerd/containerd.sock", "", false},
		{"tcp://127.0.0.1:2376", "", false},
		{`.\pipe\x`, "", false},
		{`C:\etc\kubeedge\dmi.sock`, "", false},
	} {
		name, ok := pipeName(tc.in)
		if name != tc.name || ok != tc.ok {
			t.Errorf("pipeName(%q) = %q, %v; want %q, %v", tc.in, name, ok, tc.name, tc.ok)
		}
	}
}
