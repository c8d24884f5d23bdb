package preflight

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge/api/apis/common/constants"
	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// Config is what the checks need from edgecore's configuration.
type Config struct {
	// CRIEndpoint is modules.edged.containerRuntimeEndpoint, e.g.
	// npipe://./pipe/containerd-containerd.
	CRIEndpoint string
	// CNIConfDir and CNIBinDir are containerd's CNI directories; empty
	// means containerd's Windows defaults.
	CNIConfDir string
	CNIBinDir  string
	// ClusterDNS is modules.edged.tailoredKubeletConfig.clusterDNS.
	ClusterDNS []string
	// SandboxImage is modules.edged.podSandboxImage; empty means edged's
	// default.
	SandboxImage string
	// ImagesDir is the kubeedge directory's folder of image archives
	// (Layout.ImagesDir), which the fix for a missing sandbox image names.
	ImagesDir string
	// CloudCore are the cloudcore addresses edgehub connects to.
	CloudCore []Endpoint
	// Certificates are the PEM files whose validity the clock must fall
	// in: edgeHub.tlsCaFile and edgeHub.tlsCertFile.
	Certificates []string
	// NotJoined is set before the node has a configuration: there is no
	// cloudcore address to check and no certificate to compare the clock
	// with yet, and join checks cloudcore itself, so those rows are
	// skipped rather than failed on the defaults' placeholder address.
	NotJoined bool
	// BundledRuntime is the release's runtime folder beside edgecore.exe,
	// set before join only: a host without a container runtime or pod
	// network gets both from join (--runtime auto), so their absence is
	// what join does next rather than a problem.
	BundledRuntime string
	// RootDir is modules.edged.rootDirectory; the disk it is on holds pod
	// volumes and logs.
	RootDir string
	// EvictionHard is the kubelet's evictionHard: below its
	// nodefs.available or imagefs.available the node reports DiskPressure
	// and admits no pod.
	EvictionHard map[string]string
	// RegistryDir is the bundled containerd's folder of hosts.toml files
	// (join --registry-config), whose registries are checked.
	RegistryDir string
	// Timeout bounds each network probe; zero means DefaultTimeout.
	Timeout time.Duration
	// Protected are the node's paths as protect describes them (none
	// outside Windows); ProtectedErr is protect's refusal of a directory
	// the configuration names.
	Protected    []protect.Target
	ProtectedErr error
	// Layout is the host's default locations: where containerd keeps its
	// data unless its config.toml says otherwise.
	Layout config.Layout
	// Services are Services at the node as the configuration sets them
	// (nil before join: nothing to report); DataSource is the node's
	// database, which holds what the cloud sent.
	Services   *config.Services
	DataSource string
	// NodeShutdown is how the kubelet stops the pods at a host shutdown
	// (config.NodeShutdownOf), for a Windows configuration only: how long
	// Windows must wait for the service.
	NodeShutdown *config.NodeShutdown
}

// DefaultTimeout bounds each network probe, so that an unreachable
// cloudcore costs seconds, not the operating system's minutes.
const DefaultTimeout = 5 * time.Second

// Endpoint is a cloudcore address as the configuration gives it, with the
// reason it cannot be used when it is malformed.
type Endpoint struct {
	config.CloudEndpoint
	// Problem is the config package's account of a malformed value, nil
	// when Address can be dialled. The row then fails naming the field.
	Problem *field.Error
}

// FromConfig takes what the checks judge from a configuration loaded
// from configFile ("" for the defaults) for host: the runtime and CNI
// settings, the node's protected paths, and, when edgehub is enabled, the
// cloudcore endpoints of the enabled hub protocol and the certificates.
func FromConfig(cfg *v1alpha2.EdgeCoreConfig, host config.Host, configFile string) Config {
	layout := config.NewLayout(host)
	pc := Config{CNIConfDir: layout.CNIConfDir, CNIBinDir: layout.CNIBinDir, ImagesDir: layout.ImagesDir, Layout: layout,
		RegistryDir: ospath.Join(host.GOOS, layout.ContainerdDir, "certs.d")}
	// join and `service install` check the executable they register;
	// here the node's directories are, and the configuration and the
	// upgrade settings beside it, which the service reads as SYSTEM.
	var files []protect.Target
	if configFile != "" {
		files = protect.ConfigFiles(configFile, upgrade.SettingsPath(host.GOOS, configFile))
	}
	pc.Protected, pc.ProtectedErr = protect.Targets(cfg, layout, "", files...)
	if host.GOOS == config.Windows {
		ns := config.NodeShutdownOf(cfg, host.GOOS)
		pc.NodeShutdown = &ns
	}
	if cfg.DataBase != nil {
		pc.DataSource = cfg.DataBase.DataSource
	}
	if cfg.Modules == nil {
		return pc
	}
	if configFile != "" {
		s := config.ServicesOf(cfg)
		pc.Services = &s
	}
	if e := cfg.Modules.Edged; e != nil {
		pc.SandboxImage = e.PodSandboxImage
		pc.RootDir = e.RootDirectory
		if k := e.TailoredKubeletConfig; k != nil {
			pc.CRIEndpoint = k.ContainerRuntimeEndpoint
			pc.ClusterDNS = k.ClusterDNS
			pc.EvictionHard = k.EvictionHard
		}
	}
	if hub := cfg.Modules.EdgeHub; hub != nil && hub.Enable {
		pc.CloudCore = cloudCoreEndpoints(cfg)
		pc.Certificates = []string{hub.TLSCAFile, hub.TLSCertFile}
	}
	return pc
}

// BeforeJoin is the Config of a host without a configuration file yet: the
// defaults' host-side settings are checked, while the cloudcore and clock
// rows are skipped, since the defaults name only a placeholder cloudcore
// and join checks the real one itself before writing the configuration.
func BeforeJoin(host config.Host) (Config, error) {
	c, err := config.Sample(config.KindDefault, host)
	if err != nil {
		return Config{}, err
	}
	pc := FromConfig(c, host, "")
	pc.CloudCore, pc.Certificates = nil, nil
	pc.NotJoined = true
	return pc, nil
}

// cloudCoreEndpoints reads the endpoints the way edgehub does
// (config.CloudEndpoints) and attaches to each the problem of its field.
func cloudCoreEndpoints(cfg *v1alpha2.EdgeCoreConfig) []Endpoint {
	cloud, err := config.CloudEndpoints(cfg)
	problems := map[string]*field.Error{}
	var invalid *config.InvalidError
	if errors.As(err, &invalid) {
		for _, fe := range invalid.Errs {
			problems[fe.Field] = fe
		}
	}
	var out []Endpoint
	for _, e := range cloud.Endpoints() {
		out = append(out, Endpoint{CloudEndpoint: e, Problem: problems[e.Field]})
	}
	return out
}

func (c Config) withDefaults() Config {
	if c.CNIConfDir == "" || c.CNIBinDir == "" {
		// The checks judge a Windows host.
		l := config.NewLayout(config.Host{GOOS: config.Windows})
		if c.CNIConfDir == "" {
			c.CNIConfDir = l.CNIConfDir
		}
		if c.CNIBinDir == "" {
			c.CNIBinDir = l.CNIBinDir
		}
	}
	if c.SandboxImage == "" {
		c.SandboxImage = constants.DefaultPodSandboxImage
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}
