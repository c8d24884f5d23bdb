package config

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

func TestLayoutOfTheDefaultWindowsHost(t *testing.T) {
	want := Layout{
		GOOS:                 Windows,
		KubeEdgeDir:          `C:\etc\kubeedge`,
		ConfigFile:           `C:\etc\kubeedge\config\edgecore.yaml`,
		CAFile:               `C:\etc\kubeedge\ca\rootCA.crt`,
		CertFile:             `C:\etc\kubeedge\certs\server.crt`,
		KeyFile:              `C:\etc\kubeedge\certs\server.key`,
		DataSource:           `C:\var\lib\kubeedge\edgecore.db`,
		KubeletRootDir:       `C:\var\lib\kubelet`,
		StaticPodDir:         `C:\etc\kubeedge\manifests`,
		PodLogsDir:           `C:\var\log\pods`,
		VolumePluginDir:      `C:\var\lib\kubelet\volumeplugins`,
		DevicePluginDir:      `C:\var\lib\kubelet\device-plugins`,
		LogDir:               `C:\var\log\kubeedge`,
		LogFile:              `C:\var\log\kubeedge\edgecore.log`,
		BackupDir:            `C:\etc\kubeedge\backup`,
		UpgradeDir:           `C:\etc\kubeedge\upgrade`,
		ContainerdDir:        `C:\Program Files\containerd`,
		ContainerdConfigFile: `C:\Program Files\containerd\config.toml`,
		ContainerdDataDir:    `C:\ProgramData\containerd`,
		ContainerdRootDir:    `C:\ProgramData\containerd\root`,
		ContainerdStateDir:   `C:\ProgramData\containerd\state`,
		CNIConfDir:           `C:\Program Files\containerd\cni\conf`,
		CNIBinDir:            `C:\Program Files\containerd\cni\bin`,
		CNIConfFile:          `C:\Program Files\containerd\cni\conf\0-containerd-nat.conf`,
		ImagesDir:            `C:\etc\kubeedge\images`,
		ImagesRecord:         `C:\etc\kubeedge\images-imported.json`,
		ACLRecord:            `C:\etc\kubeedge\acl-record.json`,
		Windows: WindowsFolders{SystemRoot: `C:\Windows`, ProgramFiles: `C:\Program Files`, ProgramFilesX86: `C:\Program Files (x86)`,
			ProgramData: `C:\ProgramData`, Profiles: `C:\Users`},
	}
	// Unset, and as Windows sets them on a host installed on C:.
	for _, h := range []Host{
		{GOOS: Windows},
		{GOOS: Windows, SystemDrive: "C:", ProgramFiles: `C:\Program Files`},
		{GOOS: Windows, SystemDrive: "c:", ProgramFiles: `c:\program files\`},
	} {
		got := NewLayout(h)
		if h.ProgramFiles != "" {
			// The host's spelling of %ProgramFiles% is kept, in
			// canonical form.
			want.ContainerdDir = ospath.Join(Windows, h.ProgramFiles, "containerd")
			want.ContainerdConfigFile = want.ContainerdDir + `\config.toml`
			want.CNIConfDir = want.ContainerdDir + `\cni\conf`
			want.CNIBinDir = want.ContainerdDir + `\cni\bin`
			want.CNIConfFile = want.CNIConfDir + `\0-containerd-nat.conf`
			want.Windows.ProgramFiles = ospath.Clean(Windows, h.ProgramFiles)
		}
		if got != want {
			t.Errorf("NewLayout(%+v)\n got %+v\nwant %+v", h, got, want)
		}
	}
}

func TestLayoutOfLinuxIsUnchanged(t *testing.T) {
	got := NewLayout(Host{GOOS: Linux})
	want := Layout{
		GOOS:                 Linux,
		KubeEdgeDir:          "/etc/kubeedge",
		ConfigFile:           "/etc/kubeedge/config/edgecore.yaml",
		CAFile:               "/etc/kubeedge/ca/rootCA.crt",
		CertFile:             "/etc/kubeedge/certs/server.crt",
		KeyFile:              "/etc/kubeedge/certs/server.key",
		DataSource:           "/var/lib/kubeedge/edgecore.db",
		KubeletRootDir:       "/var/lib/kubelet",
		StaticPodDir:         "/etc/kubeedge/manifests",
		PodLogsDir:           "/var/log/pods",
		VolumePluginDir:      "/usr/libexec/kubernetes/kubelet-plugins/volume/exec",
		DevicePluginDir:      "/var/lib/kubelet/device-plugins",
		LogDir:               "/var/log/kubeedge",
		LogFile:              "/var/log/kubeedge/edgecore.log",
		BackupDir:            "/etc/kubeedge/backup",
		UpgradeDir:           "/etc/kubeedge/upgrade",
		ContainerdDir:        "/etc/containerd",
		ContainerdConfigFile: "/etc/containerd/config.toml",
		ContainerdRootDir:    "/var/lib/containerd",
		ContainerdStateDir:   "/run/containerd",
		CNIConfDir:           "/etc/cni/net.d",
		CNIBinDir:            "/opt/cni/bin",
		CNIConfFile:          "/etc/cni/net.d/0-containerd-nat.conf",
		ImagesDir:            "/etc/kubeedge/images",
		ImagesRecord:         "/etc/kubeedge/images-imported.json",
		ACLRecord:            "/etc/kubeedge/acl-record.json",
	}
	if got != want {
		t.Errorf("Linux layout\n got %+v\nwant %+v", got, want)
	}
	// Upstream's defaults depend on the OS the binary is built for, so
	// they only equal the Linux layout in a Linux build.
	if runtime.GOOS != Linux {
		t.Skip("upstream's Linux defaults are compiled into Linux builds only")
	}
	c, err := Sample(KindDefault, Host{GOOS: Linux})
	if err != nil {
		t.Fatal(err)
	}
	k := c.Modules.Edged.TailoredKubeletConfig
	for _, f := range []struct{ name, sample, layout string }{
		{"dataSource", c.DataBase.DataSource, got.DataSource},
		{"tlsCaFile", c.Modules.EdgeHub.TLSCAFile, got.CAFile},
		{"tlsCertFile", c.Modules.EdgeHub.TLSCertFile, got.CertFile},
		{"tlsPrivateKeyFile", c.Modules.EdgeHub.TLSPrivateKeyFile, got.KeyFile},
		{"rootDirectory", c.Modules.Edged.RootDirectory, got.KubeletRootDir},
		{"staticPodPath", k.StaticPodPath, got.StaticPodDir},
		{"podLogsDir", k.PodLogsDir, got.PodLogsDir},
		{"volumePluginDir", k.VolumePluginDir, got.VolumePluginDir},
	} {
		if !ospath.Same(Linux, f.sample, f.layout) {
			t.Errorf("%s: upstream's Linux default %q, layout %q", f.name, f.sample, f.layout)
		}
	}
}

// Windows' own folders come from the host's environment, in ospath's
// form, and default to their places on the system drive.
func TestLayoutTakesWindowsFoldersFromTheHost(t *testing.T) {
	got := NewLayout(Host{GOOS: Windows, SystemDrive: "D:", SystemRoot: `d:\WINNT\`, ProgramFiles: `D:\Apps`,
		ProgramFilesX86: `D:\Apps (x86)`, ProgramData: `E:\Data`, Public: `D:\Profiles\Public`}).Windows
	want := WindowsFolders{SystemRoot: `D:\WINNT`, ProgramFiles: `D:\Apps`, ProgramFilesX86: `D:\Apps (x86)`, ProgramData: `E:\Data`, Profiles: `D:\Profiles`}
	if got != want {
		t.Errorf("Windows folders %+v, want %+v", got, want)
	}
	got = NewLayout(Host{GOOS: Windows, SystemDrive: "D:", ProgramData: "relative", Public: `\\server\x`}).Windows
	want = WindowsFolders{SystemRoot: `D:\Windows`, ProgramFiles: `D:\Program Files`, ProgramFilesX86: `D:\Program Files (x86)`, ProgramData: `D:\ProgramData`, Profiles: `D:\Users`}
	if got != want {
		t.Errorf("Windows folders without the host's values %+v, want %+v", got, want)
	}
}

// The node's roots are the default folders, whatever --log-file moved.
func TestLayoutRoots(t *testing.T) {
	l := NewLayout(Host{GOOS: Windows, SystemDrive: "D:"})
	l.LogDir = `E:\logs`
	want := []string{`D:\etc\kubeedge`, `D:\var\lib\kubeedge`, `D:\var\lib\kubelet`, `D:\var\log\pods`, `D:\var\lib\kubelet\device-plugins`, `D:\var\log\kubeedge`}
	if got := l.Roots(); !reflect.DeepEqual(got, want) {
		t.Errorf("Roots = %v, want %v", got, want)
	}
}

// cni-config's default --output and preflight's CNI directories follow
// %ProgramFiles%, as containerd does; a hard-coded C:\Program Files would
// write where containerd never looks.
// containerd keeps its root and state under %ProgramData%, wherever
// Windows puts it.
func TestLayoutPutsContainerdsDataUnderProgramData(t *testing.T) {
	for _, tc := range []struct{ programData, want string }{
		{`D:\ProgramData`, `D:\ProgramData\containerd`},
		{`d:\programdata\`, `D:\programdata\containerd`},
		{``, `C:\ProgramData\containerd`},
		{`ProgramData`, `C:\ProgramData\containerd`},
	} {
		l := NewLayout(Host{GOOS: Windows, SystemDrive: "C:", ProgramData: tc.programData})
		if l.ContainerdDataDir != tc.want || l.ContainerdRootDir != tc.want+`\root` || l.ContainerdStateDir != tc.want+`\state` {
			t.Errorf("%%ProgramData%% %q: %s, %s, %s; want %s and its root and state", tc.programData, l.ContainerdDataDir, l.ContainerdRootDir, l.ContainerdStateDir, tc.want)
		}
	}
}

func TestLayoutPutsContainerdUnderProgramFiles(t *testing.T) {
	l := NewLayout(Host{GOOS: Windows, ProgramFiles: `D:\Program Files`, SystemDrive: "C:"})
	for _, f := range []struct{ name, got, want string }{
		{"CNIConfFile", l.CNIConfFile, `D:\Program Files\containerd\cni\conf\0-containerd-nat.conf`},
		{"CNIConfDir", l.CNIConfDir, `D:\Program Files\containerd\cni\conf`},
		{"CNIBinDir", l.CNIBinDir, `D:\Program Files\containerd\cni\bin`},
		{"ContainerdConfigFile", l.ContainerdConfigFile, `D:\Program Files\containerd\config.toml`},
		// edgecore's own files stay on the system drive.
		{"ConfigFile", l.ConfigFile, `C:\etc\kubeedge\config\edgecore.yaml`},
		{"LogFile", l.LogFile, `C:\var\log\kubeedge\edgecore.log`},
	} {
		if f.got != f.want {
			t.Errorf("%s = %q, want %q", f.name, f.got, f.want)
		}
	}
	// The file cni-config writes is in the directory preflight checks.
	if d := ospath.Dir(Windows, l.CNIConfFile); d != l.CNIConfDir {
		t.Errorf("cni-config writes into %s, preflight checks %s", d, l.CNIConfDir)
	}
	// A relative %ProgramFiles% is not used: it would put the files
	// wherever edgecore runs.
	if got := NewLayout(Host{GOOS: Windows, ProgramFiles: `Program Files`}).CNIConfDir; got != `C:\Program Files\containerd\cni\conf` {
		t.Errorf("relative %%ProgramFiles%%: CNI conf dir %s", got)
	}
}

// A Windows installed on D: gets edgecore's files on D:, in the layout and
// in the generated configuration alike.
func TestLayoutFollowsTheSystemDrive(t *testing.T) {
	host := testHost(Windows)
	host.SystemDrive = "D:"
	l := NewLayout(host)
	if l.KubeEdgeDir != `D:\etc\kubeedge` || l.ConfigFile != `D:\etc\kubeedge\config\edgecore.yaml` ||
		l.LogFile != `D:\var\log\kubeedge\edgecore.log` || l.CNIConfDir != `D:\Program Files\containerd\cni\conf` {
		t.Errorf("layout on D: %+v", l)
	}
	c, err := Sample(KindDefault, host)
	if err != nil {
		t.Fatal(err)
	}
	paths := 0
	for _, f := range stringFields(c) {
		if f.kind != kindPath || *f.ptr == "" {
			continue
		}
		paths++
		if !strings.HasPrefix(*f.ptr, `D:\`) {
			t.Errorf("%s = %q on a host installed on D:", f.name, *f.ptr)
		}
	}
	if paths < 10 {
		t.Errorf("only %d paths checked", paths)
	}
	if errs := validateAll(c, Windows); len(errs) > 0 {
		t.Errorf("the D: sample does not validate: %v", errs)
	}

	// Anything but another drive letter keeps C:, and the samples stay
	// byte for byte what the golden files hold.
	for _, drive := range []string{"", "C:", "c:", `C:\`, "C", "Z", "%SystemDrive%", `\\server\share`} {
		host.SystemDrive = drive
		if got := NewLayout(host).KubeEdgeDir; got != `C:\etc\kubeedge` {
			t.Errorf("SystemDrive %q: kubeedge dir %s", drive, got)
		}
		for _, kind := range []string{KindMinimal, KindDefault} {
			got, err := Render(kind, host)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Render(kind, testHost(Windows))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("SystemDrive %q changes the %s sample", drive, kind)
			}
		}
	}
}

// Every path the Windows samples default to is the layout's.
func TestWindowsSamplesTakeTheirPathsFromTheLayout(t *testing.T) {
	l := NewLayout(testHost(Windows))
	c, err := Sample(KindDefault, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range stringFields(c) {
		if f.kind == kindPath && *f.ptr != "" {
			got[f.name] = *f.ptr
		}
	}
	want := map[string]string{
		"database.dataSource":                                 l.DataSource,
		"modules.edgeHub.tlsCaFile":                           l.CAFile,
		"modules.edgeHub.tlsCertFile":                         l.CertFile,
		"modules.edgeHub.tlsPrivateKeyFile":                   l.KeyFile,
		"modules.edged.rootDirectory":                         l.KubeletRootDir,
		"modules.edged.tailoredKubeletConfig.staticPodPath":   l.StaticPodDir,
		"modules.edged.tailoredKubeletConfig.podLogsDir":      l.PodLogsDir,
		"modules.edged.tailoredKubeletConfig.volumePluginDir": l.VolumePluginDir,
		"modules.eventBus.eventBusTLS.tlsMqttCAFile":          l.CAFile,
		"modules.eventBus.eventBusTLS.tlsMqttCertFile":        l.CertFile,
		"modules.eventBus.eventBusTLS.tlsMqttPrivateKeyFile":  l.KeyFile,
		"modules.metaManager.metaServer.tlsCaFile":            l.CAFile,
		"modules.metaManager.metaServer.tlsCertFile":          l.CertFile,
		"modules.metaManager.metaServer.tlsPrivateKeyFile":    l.KeyFile,
		"modules.edgeStream.tlsTunnelCAFile":                  l.CAFile,
		"modules.edgeStream.tlsTunnelCertFile":                l.CertFile,
		"modules.edgeStream.tlsTunnelPrivateKeyFile":          l.KeyFile,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sample paths\n got %v\nwant %v", got, want)
	}
}

// The node's own directories are the ones reset may remove files from:
// never a drive root, Windows' own directories or the kubelet's.
func TestNodeDirs(t *testing.T) {
	l := NewLayout(Host{GOOS: Windows, SystemDrive: "D:"})
	want := []string{`D:\etc\kubeedge`, `D:\var\lib\kubeedge`, `D:\var\log\kubeedge`}
	if got := l.NodeDirs(); !reflect.DeepEqual(got, want) {
		t.Errorf("NodeDirs() = %q, want %q", got, want)
	}
	for _, d := range l.NodeDirs() {
		for _, not := range []string{`D:\`, `D:\Windows`, `D:\var\lib\kubelet`, `D:\var\log\pods`, `D:\Program Files`} {
			if ospath.Within(Windows, d, not) {
				t.Errorf("%s is inside the node directory %s", not, d)
			}
		}
	}
	for _, in := range []string{l.BackupDir, l.UpgradeDir, l.ConfigFile, l.KeyFile, l.DataSource, l.LogFile, l.StaticPodDir} {
		found := false
		for _, d := range l.NodeDirs() {
			found = found || ospath.Within(Windows, d, in)
		}
		if !found {
			t.Errorf("%s, a file of the node, is outside its directories %q", in, l.NodeDirs())
		}
	}
}

// The kubelet serves kubelet.sock for device plugins at a place of its
// own, on the system drive, not in rootDirectory; the layout names that
// place, and the flexvolume drivers the kubelet runs are in its root on
// Windows.
func TestLayoutNamesTheKubeletsPluginDirectories(t *testing.T) {
	for _, drive := range []string{"C:", "D:"} {
		l := NewLayout(Host{GOOS: Windows, SystemDrive: drive})
		if want := drive + strings.TrimSuffix(pluginapi.DevicePluginPathWindows, `\`); l.DevicePluginDir != want {
			t.Errorf("device plugins on %s: layout %s, kubelet %s", drive, l.DevicePluginDir, want)
		}
		if !ospath.Within(Windows, l.KubeletRootDir, l.VolumePluginDir) || ospath.Same(Windows, l.KubeletRootDir, l.VolumePluginDir) {
			t.Errorf("flexvolume drivers on %s in %s, want a directory in the kubelet's root %s", drive, l.VolumePluginDir, l.KubeletRootDir)
		}
	}
	if l := NewLayout(Host{GOOS: Linux}); !ospath.Same(Linux, l.DevicePluginDir, pluginapi.DevicePluginPath) {
		t.Errorf("device plugins on Linux: layout %s, kubelet %s", l.DevicePluginDir, pluginapi.DevicePluginPath)
	}
}

// The release's image folder is beside the executable, on either OS.
func TestReleaseImagesDir(t *testing.T) {
	w := NewLayout(Host{GOOS: Windows})
	if got := w.ReleaseImagesDir(`D:\edgecore-v0.2.0-windows-amd64\edgecore.exe`); got != `D:\edgecore-v0.2.0-windows-amd64\images` {
		t.Errorf("Windows: %s", got)
	}
	l := NewLayout(Host{GOOS: Linux})
	if got := l.ReleaseImagesDir("/opt/edgecore/edgecore"); got != "/opt/edgecore/images" {
		t.Errorf("Linux: %s", got)
	}
}
