package config

import (
	"strings"

	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// Layout is every default location edgecore uses on one host: its own
// files, which join, reset, the log, the samples and the flag defaults
// share, and those of the containerd it drives, which cni-config and
// preflight share. It is the one place these paths are written; everything
// else asks NewLayout.
type Layout struct {
	// GOOS is the OS the paths are written for.
	GOOS string
	// KubeEdgeDir holds the configuration, the node's key and
	// certificates; join restricts it to SYSTEM and Administrators.
	KubeEdgeDir string
	// ConfigFile is read when --config is not given. Upstream builds it
	// with path.Join and gets c:\etc\kubeedge\config\/edgecore.yaml on
	// Windows.
	ConfigFile string
	// CAFile, CertFile and KeyFile are the cloud's CA certificate and the
	// node's certificate and key, as the certificate server issues them.
	CAFile   string
	CertFile string
	KeyFile  string
	// DataSource is the metadata database.
	DataSource string
	// KubeletRootDir is the kubelet's root directory (pods, volumes).
	KubeletRootDir string
	// StaticPodDir holds static pod manifests.
	StaticPodDir string
	// PodLogsDir holds the containers' logs.
	PodLogsDir string
	// VolumePluginDir is where the kubelet looks for flexvolume drivers,
	// which it runs as the account it runs as: SYSTEM on Windows. There
	// it is a directory in the kubelet's root, which the node restricts
	// to SYSTEM and Administrators; upstream's Linux default,
	// C:\usr\libexec\kubernetes\kubelet-plugins\volume\exec on Windows,
	// would be made by the kubelet under C:\ with C:\'s rights, which
	// let other accounts add a driver.
	VolumePluginDir string
	// DevicePluginDir is where the kubelet serves kubelet.sock, on which
	// device plugins register, and dials their sockets: a fixed place
	// (upstream's pluginapi.DevicePluginPath, on the system drive on
	// Windows), not one in rootDirectory. What registers there chooses
	// the devices and mounts the kubelet gives containers.
	DevicePluginDir string
	// LogDir and LogFile are edgecore's own log (always used as a service).
	LogDir  string
	LogFile string
	// BackupDir holds one backup per version an upgrade replaced (binary,
	// configuration with the join token, database); UpgradeDir the
	// upgrade journal, the health record and the staged packages.
	BackupDir  string
	UpgradeDir string
	// ContainerdDir is containerd's installation: on Windows
	// %ProgramFiles%\containerd, which holds config.toml and the CNI
	// directories; elsewhere /etc/containerd.
	ContainerdDir string
	// ContainerdConfigFile is containerd's config.toml.
	ContainerdConfigFile string
	// ContainerdDataDir holds containerd's root and state on Windows
	// (%ProgramData%\containerd, where containerd puts them by default);
	// "" elsewhere, where they have no common folder.
	ContainerdDataDir string
	// ContainerdRootDir is containerd's root (image content, snapshots:
	// every layer the node runs) and ContainerdStateDir its state (the
	// running containers' sockets and mounts), as containerd defaults
	// them: %ProgramData%\containerd\root and \state on Windows,
	// /var/lib/containerd and /run/containerd elsewhere.
	ContainerdRootDir  string
	ContainerdStateDir string
	// CNIConfDir and CNIBinDir are where containerd's CRI plugin reads CNI
	// network configurations and plugin executables unless its
	// config.toml says otherwise. Install scripts that put them elsewhere
	// leave containerd with "cni plugin not initialized".
	CNIConfDir string
	CNIBinDir  string
	// CNIConfFile is where cni-config writes unless told otherwise.
	CNIConfFile string
	// ImagesDir holds image archives (docker save or OCI layout tarballs)
	// that the node imports into containerd at join and at each start,
	// besides those in the release's own images folder
	// (ReleaseImagesDir); ImagesRecord remembers, by the archives'
	// digests, what was imported.
	ImagesDir    string
	ImagesRecord string
	// ACLRecord, in the kubeedge directory, records the owner and DACL a
	// folder that existed before had when the node restricted it, so
	// that undoing the configuration that named it gives it them back,
	// and the folders the node made outside Roots.
	ACLRecord string
	// Windows are Windows' own folders on this host; empty elsewhere.
	Windows WindowsFolders
}

// WindowsFolders are where Windows keeps its own folders and those every
// account uses: the node refuses to restrict any of them, or anything
// below them (package protect), since locking other accounts out of them
// breaks the host. Each is in ospath's form.
type WindowsFolders struct {
	// SystemRoot is %SystemRoot%, C:\Windows.
	SystemRoot string
	// ProgramFiles and ProgramFilesX86 are %ProgramFiles% and
	// %ProgramFiles(x86)%: programs of every account.
	ProgramFiles    string
	ProgramFilesX86 string
	// ProgramData is %ProgramData%; Windows' own part of it is
	// ProgramData\Microsoft (machine keys, Defender, the event logs'
	// settings).
	ProgramData string
	// Profiles holds the user profiles, C:\Users: Default, Public and
	// every account's.
	Profiles string
}

// ImagesDirName is the folder of image archives in the release, beside
// edgecore.exe, and in the kubeedge directory.
const ImagesDirName = "images"

// ReleaseImagesDir is the folder of image archives beside the executable
// exe: where the release zip, unpacked, puts them.
func (l Layout) ReleaseImagesDir(exe string) string {
	return ospath.Join(l.GOOS, ospath.Dir(l.GOOS, exe), ImagesDirName)
}

// DefaultSystemDrive is the drive Windows is installed on when the host
// does not say (%SystemDrive% unset), and the one a drive-less absolute
// path such as /var/lib/kubeedge lands on: Go's file functions resolve it
// against the current drive, which for a service is the system drive.
const DefaultSystemDrive = "C:"

// NewLayout returns the default locations on host. On Windows edgecore's
// own files keep upstream's layout (C:\etc\kubeedge, C:\var\lib\kubelet) so
// that documentation written for KubeEdge still applies, on the system
// drive, and containerd's follow %ProgramFiles%, which containerd itself
// builds them from (D:\Program Files\containerd\cni\conf when Windows lives
// on D:). Empty or unusable host values give C: and C:\Program Files.
// Elsewhere the paths are upstream's Linux defaults and containerd's.
func NewLayout(host Host) Layout {
	goos := host.GOOS
	l := Layout{GOOS: goos}
	var root, programFiles string
	if goos == Windows {
		root = systemDrive(host.SystemDrive) + `\`
		programFiles = programFilesDir(host.ProgramFiles, root)
		l.Windows = WindowsFolders{
			SystemRoot:      folderOr(host.SystemRoot, root, "Windows"),
			ProgramFiles:    programFiles,
			ProgramFilesX86: folderOr(host.ProgramFilesX86, root, "Program Files (x86)"),
			ProgramData:     folderOr(host.ProgramData, root, "ProgramData"),
			Profiles:        ospath.Join(goos, root, "Users"),
		}
		// %PUBLIC% is on a drive; one on a share says nothing of where
		// this host keeps its profiles.
		if p := ospath.Clean(goos, strings.TrimSpace(host.Public)); ospath.IsAbs(goos, p) && !strings.HasPrefix(p, `\\`) {
			l.Windows.Profiles = ospath.Dir(goos, p)
		}
		l.ContainerdDir = ospath.Join(goos, programFiles, "containerd")
		l.ContainerdDataDir = ospath.Join(goos, l.Windows.ProgramData, "containerd")
		l.ContainerdRootDir = ospath.Join(goos, l.ContainerdDataDir, "root")
		l.ContainerdStateDir = ospath.Join(goos, l.ContainerdDataDir, "state")
		l.CNIConfDir = ospath.Join(goos, l.ContainerdDir, "cni", "conf")
		l.CNIBinDir = ospath.Join(goos, l.ContainerdDir, "cni", "bin")
	} else {
		root = "/"
		l.ContainerdDir = "/etc/containerd"
		l.CNIConfDir = "/etc/cni/net.d"
		l.CNIBinDir = "/opt/cni/bin"
		l.ContainerdRootDir = "/var/lib/containerd"
		l.ContainerdStateDir = "/run/containerd"
	}
	l.ContainerdConfigFile = ospath.Join(goos, l.ContainerdDir, "config.toml")
	l.CNIConfFile = ospath.Join(goos, l.CNIConfDir, cni.DefaultFileName)

	l.KubeEdgeDir = ospath.Join(goos, root, "etc", "kubeedge")
	l.ConfigFile = ospath.Join(goos, l.KubeEdgeDir, "config", "edgecore.yaml")
	l.CAFile = ospath.Join(goos, l.KubeEdgeDir, "ca", "rootCA.crt")
	l.CertFile = ospath.Join(goos, l.KubeEdgeDir, "certs", "server.crt")
	l.KeyFile = ospath.Join(goos, l.KubeEdgeDir, "certs", "server.key")
	l.StaticPodDir = ospath.Join(goos, l.KubeEdgeDir, "manifests")
	l.DataSource = ospath.Join(goos, root, "var", "lib", "kubeedge", "edgecore.db")
	l.KubeletRootDir = ospath.Join(goos, root, "var", "lib", "kubelet")
	l.PodLogsDir = ospath.Join(goos, root, "var", "log", "pods")
	l.VolumePluginDir = ospath.Join(goos, root, "usr", "libexec", "kubernetes", "kubelet-plugins", "volume", "exec")
	if goos == Windows {
		l.VolumePluginDir = ospath.Join(goos, l.KubeletRootDir, "volumeplugins")
	}
	// The default root's, whatever rootDirectory says: the kubelet does not
	// look there.
	l.DevicePluginDir = ospath.Join(goos, l.KubeletRootDir, "device-plugins")
	l.LogDir = defaultLogDir(goos, root)
	l.LogFile = ospath.Join(goos, l.LogDir, "edgecore.log")
	l.BackupDir = ospath.Join(goos, l.KubeEdgeDir, "backup")
	l.UpgradeDir = ospath.Join(goos, l.KubeEdgeDir, "upgrade")
	l.ImagesDir = ospath.Join(goos, l.KubeEdgeDir, ImagesDirName)
	l.ImagesRecord = ospath.Join(goos, l.KubeEdgeDir, "images-imported.json")
	l.ACLRecord = ospath.Join(goos, l.KubeEdgeDir, "acl-record.json")
	return l
}

// Roots are the node's own folders as NewLayout places them: the kubeedge
// directory, the database's, the kubelet's root, pod logs, device plugins
// and edgecore's logs (the default one, whatever --log-file says). A
// folder below one of them is the node's even when it existed before the
// node (package protect); one a configuration or --log-file names
// elsewhere must be new, empty, or made by the node.
func (l Layout) Roots() []string {
	anc := ospath.Ancestors(l.GOOS, l.KubeEdgeDir)
	return []string{l.KubeEdgeDir, ospath.Dir(l.GOOS, l.DataSource), l.KubeletRootDir, l.PodLogsDir, l.DevicePluginDir,
		defaultLogDir(l.GOOS, anc[len(anc)-1])}
}

// defaultLogDir is where edgecore logs on the volume whose root is root.
func defaultLogDir(goos, root string) string {
	return ospath.Join(goos, root, "var", "log", "kubeedge")
}

// NodeDirs are the directories that belong to edgecore alone: the kubeedge
// directory (configuration, certificates, static pods, backups, upgrade
// journal), the database's directory and edgecore's log directory. reset
// removes files only inside them, whatever a configuration names: a
// configuration is an input, and one that points the CA or the database
// at C:\Windows or another program's files must not make reset delete
// them. The kubelet's root and the pod logs are not listed: they hold
// what pods mounted and wrote, which reset leaves alone.
func (l Layout) NodeDirs() []string {
	return []string{l.KubeEdgeDir, ospath.Dir(l.GOOS, l.DataSource), l.LogDir}
}

// systemDrive is %SystemDrive% as "X:", or DefaultSystemDrive when it is
// unset or not a drive letter.
func systemDrive(env string) string {
	d := strings.TrimRight(strings.TrimSpace(env), `\/`)
	if len(d) != 2 || !ospath.IsAbs(ospath.Windows, d+`\`) {
		return DefaultSystemDrive
	}
	return strings.ToUpper(d)
}

// folderOr is the folder an environment variable names, or name on the
// system drive (root) when it is unset or not absolute.
func folderOr(env, root, name string) string {
	if p := strings.TrimSpace(env); ospath.IsAbs(ospath.Windows, p) {
		return ospath.Clean(ospath.Windows, p)
	}
	return ospath.Join(ospath.Windows, root, name)
}

// programFilesDir is %ProgramFiles%, or Program Files on the system drive
// (root) when it is unset or not absolute: a relative value would put
// containerd's files wherever edgecore happens to run.
func programFilesDir(env, root string) string {
	p := strings.TrimSpace(env)
	if !ospath.IsAbs(ospath.Windows, p) {
		return ospath.Join(ospath.Windows, root, "Program Files")
	}
	return ospath.Clean(ospath.Windows, p)
}
